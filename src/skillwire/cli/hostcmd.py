"""`skillwire host`: the host library driven by a person, with every refusal as one clear line."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import anyio

from skillwire.cache.store import SkillCache
from skillwire.cli.child import StderrTail, local_command
from skillwire.cli.errors import UsageError
from skillwire.cli.formats import Annotation, emit
from skillwire.cli.inspect import headers_from, limits_from, refuse_bare_address
from skillwire.cli.output import err, say
from skillwire.core.display import terminal_safe
from skillwire.core.errors import SkillwireError
from skillwire.core.hosting.approvals import (
    ApprovalPrompt,
    ApprovalStore,
    ApproveLoads,
    MemoryApprovalStore,
)
from skillwire.core.hosting.registry import LOCAL_ORIGIN, check_label
from skillwire.core.hosting.results import CatalogItem, IncompleteListing
from skillwire.host.approval_store import JsonApprovalStore
from skillwire.host.host import Host
from skillwire.host.prompt import TerminalPrompt


def run_host(args: argparse.Namespace) -> int:
    servers = [_server_arg(text) for text in args.server]
    labels = [label for label, _ in servers]
    if len(set(labels)) != len(labels):
        raise _usage("each --server needs its own LABEL")
    if (args.read or args.ls) and not args.load:
        raise _usage("--read and --ls need --load SKILL")
    if args.load and args.format != "text":
        raise _usage(f"--format {args.format} reports the listing; --load prints a skill's text (use --format text)")
    prompt: ApprovalPrompt = ApproveLoads() if args.yes else TerminalPrompt()
    store: ApprovalStore = JsonApprovalStore(Path(args.approvals)) if args.approvals else MemoryApprovalStore()
    cache = SkillCache(Path(args.cache)) if args.cache else None
    # --token-file / --header go to every http(s) server given (stdio servers have no headers).
    headers = headers_from(args)
    return anyio.run(lambda: _run(args, servers, prompt, store, cache, headers=headers))


async def _run(
    args: argparse.Namespace,
    servers: list[tuple[str, str | list[str]]],
    prompt: ApprovalPrompt,
    store: ApprovalStore,
    cache: SkillCache | None,
    *,
    headers: dict[str, str] | None,
) -> int:
    problems: list[tuple[str, str, bool]] = []  # (label, message, the server is unusable)
    # Outside the host: each child's stderr pipe is closed after the host has ended the child.
    with ExitStack() as tails:
        async with Host(prompt=prompt, approvals=store, cache=cache, limits=limits_from(args)) as host:
            for label, target in servers:
                tail = tails.enter_context(StderrTail()) if isinstance(target, list) else None
                try:
                    await host.add_server(
                        label,
                        target,
                        headers=headers if isinstance(target, str) else None,
                        read_timeout_seconds=args.timeout,
                        errlog=None if tail is None else tail.errlog,
                    )
                except (SkillwireError, OSError) as error:
                    problems.append((label, f"server {label!r} ({_shown(target)}) is unusable: {error}", True))
                    err(f"skillwire: {problems[-1][1]}")
                    if tail is not None:
                        tail.show(f"server {label!r}")
                    continue
                for problem in host.problems(label):
                    incomplete = isinstance(problem, IncompleteListing)  # its message names the server already
                    shown = str(problem) if incomplete else f"{label}: dropped an invalid entry: {problem}"
                    problems.append((label, shown, False))
                    err(f"skillwire: {shown}")
            status = 1 if any(unusable for _, _, unusable in problems) else 0
            report = HostReport(host.catalog(), host.collisions(), problems)
            if status and all(origin == LOCAL_ORIGIN for origin in host.registry.origins):
                if args.format != "text":  # a script or CI still gets the report that says what failed
                    emit(args.format, report)
                return status  # no server could be connected: nothing to list
            emit(args.format, report)
            if not args.load:
                return status
            try:
                loaded = await host.load_skill(args.load)
                say()
                say(loaded.text, multiline=True)  # server content: its lines kept, every escape sequence shown
                for path in args.ls:
                    for entry in await host.list_skill_directory(args.load, path):
                        kind = "dir " if entry.is_directory else "file"
                        say(f"{kind} {entry.name}")
                for path in args.read:
                    say(await host.read_skill_text(args.load, path), multiline=True)
            except SkillwireError as error:
                err(f"skillwire: {error}")
                return 1
        return status


@dataclass(frozen=True, slots=True)
class HostReport:
    """`host`'s listing (every server's skills, shared names, what went wrong) in the three `--format`s."""

    items: Sequence[CatalogItem]
    collisions: Mapping[str, Sequence[str]]
    problems: Sequence[tuple[str, str, bool]]

    def as_json(self) -> dict[str, Any]:
        """Schema version 1: {"version", "skills": [{handle, name, origin, uri, description, declined}],
        "collisions": {name: [handle]}, "problems": [{"server", "message", "unusable"}]}."""
        return {
            "version": 1,
            "skills": [
                {
                    "handle": i.handle,
                    "name": i.name,
                    "origin": i.origin,
                    "uri": i.uri,
                    "description": i.description,
                    "declined": i.declined,
                }
                for i in self.items
            ],
            "collisions": {name: list(handles) for name, handles in self.collisions.items()},
            "problems": [{"server": s, "message": m, "unusable": u} for s, m, u in self.problems],
        }

    def annotations(self) -> list[Annotation]:
        """An unusable server is an error; a dropped entry, an incomplete listing and a shared name are warnings."""
        out = [Annotation("error" if u else "warning", m, title=s) for s, m, u in self.problems]
        for name, handles in self.collisions.items():
            out.append(Annotation("warning", _collision(name, handles), title="duplicate-name"))
        return out

    def summary(self) -> str:
        return f"{len(self.items)} skill{'s' * (len(self.items) != 1)}"

    def print_text(self, out: TextIO, *, colour: bool, verbose: bool) -> None:
        say(f"{self.summary()}:", file=out)
        handles = [terminal_safe(i.handle) for i in self.items]  # escaped before the column is measured
        width = max((len(h) for h in handles), default=0)
        for item, handle in zip(self.items, handles, strict=True):
            note = f"  [{item.declined}]" if item.declined else ""
            say(f"  {handle:<{width}}  {item.description[:80]}{note}", file=out)
        for name, named in self.collisions.items():
            say(f"note: {_collision(name, named)}", file=out)


def _collision(name: str, handles: Sequence[str]) -> str:
    return f"the name {name!r} is used by {', '.join(handles)}; use the handle"


def _server_arg(text: str) -> tuple[str, str | list[str]]:
    label, sep, target = text.partition("=")
    if not sep or not target:
        raise _usage(f"--server wants LABEL=URL or LABEL=COMMAND, not {text!r}")
    try:
        check_label(label)
    except ValueError as err:
        raise _usage(str(err)) from None
    if target.startswith(("http://", "https://")):
        return label, target
    refuse_bare_address(target, option=f"--server {label}:")
    try:
        argv = shlex.split(target)
    except ValueError as err:
        raise _usage(f"--server {label}: cannot split the command ({err})") from None
    return label, local_command(argv)


def _shown(target: str | list[str]) -> str:
    return target if isinstance(target, str) else shlex.join(target)


def _usage(message: str) -> UsageError:
    return UsageError(message)
