"""`skillwire inspect SERVER`: what a skills server publishes, and (`--verify`) whether its files match its manifest.

SERVER is an `http(s)://` URL or a command line that starts a stdio server. `--verify` reads every
file of every listed skill and checks it as a host must (size first, then digest; SKILL.md's
frontmatter against the entry), naming each file that fails: a one-shot conformance and integrity
check. Exit status 1 if anything failed.

    skillwire inspect http://127.0.0.1:8000/mcp --verify
    skillwire inspect "skillwire serve examples/skills" --format json   # --json: its deprecated alias
"""

from __future__ import annotations

import argparse
import math
import re
import shlex
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeVar

import anyio
from mcp.shared.exceptions import MCPError

from skillwire.cli.child import kept_stderr, local_command
from skillwire.cli.errors import UsageError
from skillwire.cli.formats import Annotation, emit
from skillwire.cli.output import err, say
from skillwire.client.credentials import first_token, parse_header
from skillwire.client.session import DEFAULT_TIMEOUT_S, SkillsClient
from skillwire.core.display import clip, terminal_safe
from skillwire.core.errors import RequestFailed, SkillwireError, VerificationError
from skillwire.core.hosting.entry import SkillEntry
from skillwire.core.hosting.limits import DEFAULT_LIMITS, ClientLimits
from skillwire.core.hosting.verify import verify_bytes, verify_frontmatter

__all__ = [
    "Failure",
    "InspectReport",
    "call_server",
    "headers_from",
    "limits_from",
    "refuse_bare_address",
    "run_inspect",
    "server_target",
    "verify_entry",
]

T = TypeVar("T")

# HOST:PORT with nothing else: a name or an IPv4 address, or a bracketed IPv6 one, then digits (and maybe a path).
_HOST_PORT = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):[0-9]{1,5}(?:/\S*)?")


def server_target(text: str, *, option: str = "SERVER") -> str | list[str]:
    """A SERVER argument: a URL as is, anything else split as a command line (a bare HOST:PORT is a usage error)."""
    if text.startswith(("http://", "https://")):
        return text
    refuse_bare_address(text, option=option)
    try:
        argv = shlex.split(text)
    except ValueError as err:
        raise UsageError(f"cannot split the server command {text!r}: {err}") from None
    if not argv:
        raise UsageError("SERVER is empty; give an http(s) URL or a command that starts a stdio server")
    return local_command(argv)


def refuse_bare_address(text: str, *, option: str) -> None:
    """A bare HOST:PORT (`localhost:8000`) is not a command anyone means to run: a usage error naming the URL."""
    if _HOST_PORT.fullmatch(text):
        url = f"http://{text}" if "/" in text else f"http://{text}/mcp"
        raise UsageError(f"{option} {text!r} is neither a URL nor a command; did you mean {url} ?")


@asynccontextmanager
async def connect_within(timeout: float, target: str | list[str], **options: Any) -> AsyncIterator[SkillsClient]:
    """`SkillsClient.connect` with its whole setup bounded by `timeout` (the SDK's own `server/discover` probe
    waits 10 s, whatever the read timeout), and each request after it by `timeout` too."""
    with anyio.fail_after(timeout) as setup:
        async with SkillsClient.connect(target, read_timeout_seconds=timeout, **options) as client:
            setup.deadline = math.inf  # connected: from here each request has its own timeout
            yield client


def call_server(shown: str, func: Callable[..., Awaitable[T]], *args: Any) -> T:
    """Run `func(*args)` under anyio; turn the SDK's exception groups into one clear error (the adapter edge)."""
    try:
        return anyio.run(func, *args)
    except BaseExceptionGroup as group:
        leaf = _first_leaf(group)
        if isinstance(leaf, RequestFailed | MCPError):
            raise SkillwireError(f"{shown}: the server answered with an error: {leaf.message}") from None
        if isinstance(leaf, SkillwireError):
            raise leaf from None
        if isinstance(leaf, OSError):
            raise SkillwireError(f"cannot reach {shown}: {leaf or type(leaf).__name__}") from None
        if isinstance(leaf, Exception):  # the HTTP client's own errors (connect refused, timeouts, ...)
            raise SkillwireError(f"cannot talk to {shown}: {type(leaf).__name__}: {leaf}") from leaf
        raise
    except (RequestFailed, MCPError) as err:
        raise SkillwireError(f"{shown}: the server answered with an error: {err.message}") from None
    except TimeoutError:
        raise SkillwireError(f"{shown}: no answer while connecting (--timeout SECONDS waits longer)") from None
    except OSError as err:
        raise SkillwireError(f"cannot reach {shown}: {err or type(err).__name__}") from None


def _first_leaf(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


@dataclass(frozen=True, slots=True)
class Failure:
    """A file that failed verification (or could not be read), and why."""

    uri: str
    message: str


@dataclass(slots=True)
class _Report:
    server: dict[str, Any] = field(default_factory=dict)
    extension: dict[str, Any] = field(default_factory=dict)
    skills: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    complete: bool = True
    cutoff: str | None = None
    checked: int = 0
    failures: list[Failure] = field(default_factory=list)


def run_inspect(args: argparse.Namespace) -> int:
    target = server_target(args.server)
    limits = limits_from(args)
    headers = headers_from(args, target)
    with kept_stderr(args.server) as errlog:
        report = call_server(
            args.server, lambda: _inspect(target, args.verify, limits, headers, args.timeout, errlog=errlog)
        )
    if report.cutoff is not None:
        err(f"skillwire: the skill listing of {args.server} is incomplete: {report.cutoff}")
    emit(args.format, InspectReport(report, args.verify))
    if not report.extension.get("declared"):
        return 1
    return 1 if report.failures or report.problems else 0


def headers_from(args: argparse.Namespace, target: str | list[str] | None = None) -> dict[str, str] | None:
    """The HTTP headers `--token-file` / `--header` ask for (None if neither); refused for a stdio `target`."""
    headers = dict(parse_header(h) for h in getattr(args, "header", []))
    token_file = getattr(args, "token_file", None)
    if token_file is not None:
        if any(name.lower() == "authorization" for name in headers):
            raise UsageError("give --token-file or an Authorization --header, not both")
        headers["Authorization"] = f"Bearer {first_token(token_file)}"
    if not headers:
        return None
    if isinstance(target, list):
        raise UsageError("--token-file and --header apply to http(s) servers, not to a command")
    return headers


def limits_from(args: argparse.Namespace) -> ClientLimits:
    """The `ClientLimits` a command's options ask for (`--max-pages`), the defaults otherwise."""
    max_pages = getattr(args, "max_pages", None)
    return DEFAULT_LIMITS if max_pages is None else ClientLimits(max_listing_pages=max_pages)


async def _inspect(
    target: str | list[str],
    verify: bool,
    limits: ClientLimits,
    headers: dict[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    *,
    errlog: TextIO | None = None,
) -> _Report:
    report = _Report()
    async with connect_within(timeout, target, limits=limits, headers=headers, errlog=errlog) as client:
        report.server = {
            "name": client.server_name,
            "version": client.server_version,
            "protocol": client.protocol_version,
            "instructions": client.instructions,
        }
        report.extension = {"declared": client.declared, "directoryRead": client.directory_read}
        if not client.declared:
            return report
        listing = await client.list_entries()
        report.problems = [str(p) for p in listing.problems]
        report.complete = listing.complete
        report.cutoff = listing.cutoff
        if not listing.complete:
            report.problems.append(f"listing incomplete: {listing.cutoff}")
        for entry in listing.entries:
            report.skills.append(_row(entry))
            if verify:
                failures, verified = await verify_entry(client, entry)
                report.failures.extend(failures)
                report.checked += len(verified) + len({f.uri for f in failures})
    return report


async def verify_entry(client: SkillsClient, entry: SkillEntry) -> tuple[list[Failure], dict[str, bytes]]:
    """Read every file of `entry` and check it; return the failures and the bytes that passed, by URI.

    A dynamic entry has no manifest: only its SKILL.md is read, and checked against its frontmatter.
    Each answer may take only what its listed size allows (`SkillsClient.read`); past that it is cut
    off and counts as a failure.
    """
    failures: list[Failure] = []
    verified: dict[str, bytes] = {}
    problem = entry.over_limits()
    if problem:
        failures.append(Failure(entry.uri, f"over the limits: {problem}"))
    resources = [entry.uri] if isinstance(entry.resources, str) else [r.uri for r in entry.resources]
    for uri in resources:
        resource = entry.resource(uri)
        try:
            data = await client.read(uri, size=None if resource is None else resource.size)
        except VerificationError as err:
            failures.append(Failure(uri, str(err).removeprefix(f"{uri}: ")))
            continue
        except RequestFailed as err:
            failures.append(Failure(uri, f"cannot be read: {err.message}"))
            continue
        except SkillwireError as err:
            failures.append(Failure(uri, f"cannot be read: {err}"))
            continue
        try:
            if resource is not None:
                verify_bytes(resource, data)
            if uri == entry.uri:
                verify_frontmatter(entry, data)
        except VerificationError as err:
            message = str(err).removeprefix(f"{uri}: ")
            failures.append(Failure(uri, message))
            continue
        verified[uri] = data
    return failures, verified


def _row(entry: SkillEntry) -> dict[str, Any]:
    skill_md = entry.skill_md
    if isinstance(entry.resources, str):
        files: int | None = None
        size: int | None = None
    else:
        files = len(entry.resources)
        size = sum(r.size for r in entry.resources)
    return {
        "name": entry.frontmatter.get("name"),
        "uri": entry.uri,
        "files": files,
        "size": size,
        "digest": skill_md.digest if skill_md is not None else None,
        "dynamic": entry.is_dynamic,
    }


@dataclass(frozen=True, slots=True)
class InspectReport:
    """What `inspect` found, in the three `--format`s."""

    report: _Report
    verify: bool

    def as_json(self) -> dict[str, Any]:
        return _as_json(self.report, verify=self.verify)

    def annotations(self) -> list[Annotation]:
        """No extension, each listing problem and each file that failed verification: errors."""
        out = []
        if not self.report.extension.get("declared"):
            out.append(Annotation("error", "io.modelcontextprotocol/skills is not declared", "no-extension"))
        out.extend(Annotation("error", problem, "listing") for problem in self.report.problems)
        out.extend(Annotation("error", f"{f.uri}: {f.message}", "verify") for f in self.report.failures)
        return out

    def summary(self) -> str:
        skills = len(self.report.skills)
        line = f"{skills} skill{'s' * (skills != 1)}"
        if self.verify:
            checked = self.report.checked
            line += f", verified {checked} file{'s' * (checked != 1)}, {len(self.report.failures)} failed"
        return line

    def print_text(self, out: TextIO, *, colour: bool, verbose: bool) -> None:
        _print_human(self.report, verify=self.verify, out=out)


def _as_json(report: _Report, *, verify: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "version": 1,
        "server": report.server,
        "extension": report.extension,
        "skills": report.skills,
        "problems": report.problems,
        "complete": report.complete,
    }
    if verify:
        out["verify"] = {
            "checked": report.checked,
            "failures": [{"uri": f.uri, "message": f.message} for f in report.failures],
            "ok": not report.failures,
        }
    return out


def _print_human(report: _Report, *, verify: bool, out: TextIO) -> None:
    name = report.server.get("name") or "(no name)"
    version = report.server.get("version")
    shown_version = f", version {version}" if version else ""
    say(f"server: {name} (self-reported){shown_version}, protocol {report.server.get('protocol')}", file=out)
    instructions = report.server.get("instructions")
    if instructions:
        say(f"instructions: {clip(instructions, 200)}", file=out)
    if not report.extension.get("declared"):
        say("extension: io.modelcontextprotocol/skills is NOT declared; this server publishes no skills", file=out)
        return
    directory = "with directoryRead" if report.extension.get("directoryRead") else "without directoryRead"
    say(f"extension: io.modelcontextprotocol/skills declared, {directory}", file=out)
    skills = report.skills
    say(f"{len(skills)} skill{'s' * (len(skills) != 1)}:", file=out)
    if skills:
        header = ("NAME", "URI", "FILES", "SIZE", "SKILL.md", "")
        rows = [
            (
                terminal_safe(str(s["name"])),  # escaped before the columns are measured
                terminal_safe(s["uri"]),
                "-" if s["files"] is None else str(s["files"]),
                "-" if s["size"] is None else f"{s['size']:,}",
                _short(s["digest"]),
                "dynamic" if s["dynamic"] else "",
            )
            for s in skills
        ]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            cells = [
                c.rjust(w) if i in (2, 3) else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            ]
            say("  " + "  ".join(cells).rstrip(), file=out)
    for problem in report.problems:
        say(f"problem: {problem}", file=out)
    if verify:
        for failure in report.failures:
            say(f"FAIL {failure.uri}: {failure.message}", file=out)
        verdict = "all match their manifest" if not report.failures else f"{len(report.failures)} failed"
        say(f"verified {report.checked} file{'s' * (report.checked != 1)}: {verdict}", file=out)


def _short(digest: str | None) -> str:
    if not digest:
        return "-"
    algorithm, _, hexdigest = digest.partition(":")
    return f"{algorithm}:{hexdigest[:12]}"
