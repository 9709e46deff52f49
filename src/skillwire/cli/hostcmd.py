"""`skillwire host`: the host library driven by a person, with every refusal as one clear line."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import anyio

from skillwire.cache.store import SkillCache
from skillwire.cli.errors import UsageError
from skillwire.cli.inspect import headers_from, limits_from, refuse_bare_address
from skillwire.cli.output import err, say
from skillwire.display import terminal_safe
from skillwire.errors import SkillwireError
from skillwire.host.approvals import ApprovalPrompt, ApprovalStore, ApproveLoads, JsonApprovalStore, MemoryApprovalStore
from skillwire.host.host import Host, IncompleteListing
from skillwire.host.prompt import TerminalPrompt
from skillwire.host.registry import LOCAL_ORIGIN, check_label


def run_host(args: argparse.Namespace) -> int:
    servers = [_server_arg(text) for text in args.server]
    labels = [label for label, _ in servers]
    if len(set(labels)) != len(labels):
        raise _usage("each --server needs its own LABEL")
    if (args.read or args.ls) and not args.load:
        raise _usage("--read and --ls need --load SKILL")
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
    status = 0
    async with Host(prompt=prompt, approvals=store, cache=cache, limits=limits_from(args)) as host:
        for label, target in servers:
            try:
                await host.add_server(
                    label,
                    target,
                    headers=headers if isinstance(target, str) else None,
                    read_timeout_seconds=args.timeout,
                )
            except (SkillwireError, OSError) as error:
                err(f"skillwire: server {label!r} ({_shown(target)}) is unusable: {error}")
                status = 1
                continue
            for problem in host.problems(label):
                if isinstance(problem, IncompleteListing):
                    err(f"skillwire: {problem}")
                else:
                    err(f"skillwire: {label}: dropped an invalid entry: {problem}")
        if status and all(origin == LOCAL_ORIGIN for origin in host.registry.origins):
            return status  # no server could be connected: nothing to list
        items = host.catalog()
        say(f"{len(items)} skill{'s' * (len(items) != 1)}:")
        handles = [terminal_safe(i.handle) for i in items]  # escaped before the column is measured
        width = max((len(h) for h in handles), default=0)
        for item, handle in zip(items, handles, strict=True):
            note = f"  [{item.declined}]" if item.declined else ""
            say(f"  {handle:<{width}}  {item.description[:80]}{note}")
        for name, named in host.collisions().items():
            say(f"note: the name {name!r} is used by {', '.join(named)}; use the handle")
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
    return label, argv


def _shown(target: str | list[str]) -> str:
    return target if isinstance(target, str) else shlex.join(target)


def _usage(message: str) -> UsageError:
    return UsageError(message)
