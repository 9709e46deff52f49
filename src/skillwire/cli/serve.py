"""`skillwire serve`: what the command does once its options are parsed (its options are `cli/source_options.py`).

It checks the exposure rules and binds the HTTP port (a port in use is said before anything is scanned), opens the
sources, prints what is served and refused (`print_summary`), and serves stdio or streamable HTTP until stopped;
meanwhile a thread says what `validate` would warn about (`catalog_warnings`, grouped by rule). Everything goes to
stderr through `bounded_stderr`. Heavy imports stay inside `run_serve`: `skillwire --help` loads none.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import logging
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from skillwire.cli.errors import CliError, UsageError, nothing_found
from skillwire.cli.formats import emit
from skillwire.cli.output import PROG, err, say
from skillwire.core.catalog import Catalog
from skillwire.core.lint import LintWarning

if TYPE_CHECKING:
    from skillwire.cli.catalog_warnings import FolderRoots
    from skillwire.server.extension import SkillsExtension
    from skillwire.server.portability import PortabilityCheck
    from skillwire.server.tool_set import ToolSet
    from skillwire.service.auth import AuthConfig


def run_serve(args: argparse.Namespace) -> int:
    """`skillwire serve`: open the sources, print what is served, and serve stdio or HTTP until stopped.

    Everything it writes to stderr goes through `bounded_stderr`: a host that never reads stderr still gets answers.
    """
    from skillwire.cli.bounded_stderr import bounded_stderr

    with bounded_stderr(), contextlib.ExitStack() as cleanup:
        return _serve(args, cleanup)


def _serve(args: argparse.Namespace, cleanup: contextlib.ExitStack) -> int:
    import anyio

    from skillwire.cli.catalog_warnings import FolderRoots
    from skillwire.cli.progress import ProgressBar
    from skillwire.core.errors import SpecError
    from skillwire.server.extension import SkillsExtension
    from skillwire.server.portability import PortabilityCheck
    from skillwire.server.skill_service import ServeOptions, SkillService
    from skillwire.service.guard import HostPolicy, bind_refusal
    from skillwire.service.limits import ServeLimits
    from skillwire.service.run import MCP_PATH, bind, build_server, serve_http, serve_stdio, url_for
    from skillwire.service.watch import LiveReload
    from skillwire.sources.port import SourceOptions
    from skillwire.sources.spec import open_sources

    try:
        options = ServeOptions(
            page_size=args.page_size,
            ttl_ms=args.ttl_ms,
            cache_scope=args.cache_scope,
            read_cache_bytes=args.read_cache_mb << 20,
        )
        limits = _limits(args, ServeLimits)
    except ValueError as error:
        raise CliError(str(error)) from None
    # A bad --http value is a usage error: report it before scanning, so it is the only line printed.
    address = None if args.http is None else _host_port(args.http)
    if address is None and (args.auth_issuer or args.token_file or args.required_scope):
        raise UsageError("--auth-issuer, --token-file and --required-scope apply to --http only (stdio has no callers)")
    if address is None and args.replica_name is not None:
        raise UsageError("--replica-name applies to --http only (a stdio server has one client and no balancer)")
    if address is None and args.rollout_plan is not None:
        raise UsageError("--rollout-plan applies to --http only (it switches replicas behind a balancer together)")
    callers = None
    if args.scopes is not None:  # a bad policy is reported before scanning, as the only line
        from skillwire.service.scopes_file import PolicyFile

        callers = PolicyFile.load(args.scopes)
    if address is not None:
        # Authentication configured = a token file or an issuer (the AUTH options); otherwise only loopback.
        authenticated = bool(args.token_file or args.auth_issuer)
        allowed = args.allow_unauthenticated
        refusal = bind_refusal(address[0], authenticated=authenticated, allow_unauthenticated=allowed)
        if refusal is not None:
            raise UsageError(refusal)
    if args.packages is not None:
        args.paths.append(f"packages:{args.packages}")
    if not args.paths:
        args.usage_error("name a SOURCE to serve (a folder of skills, KIND:TARGET) or --packages")
    sock = None
    if address is not None:  # before anything is scanned: a port in use is said at once, as the only line
        sock = _bound(args.http, *address, bind)
        cleanup.callback(sock.close)
    progress = ProgressBar(sys.stderr) if not args.quiet and sys.stderr.isatty() else None
    try:
        kept = SourceOptions(
            digest_cache=args.digest_cache,
            progress=progress,
            gateway_cache=args.gateway_cache,
            gateway_cache_bytes=None if args.gateway_cache_mb is None else args.gateway_cache_mb << 20,
            lock=args.lock,
            upstream_credentials=args.upstream_credentials,
        )
        source = open_sources(args.paths, kept)
    except SpecError as error:
        raise UsageError(str(error)) from None
    if args.rollout_plan is not None:
        source = _planned(source, args.rollout_plan)
    roots = FolderRoots(args.paths)
    check = PortabilityCheck(roots.shown)  # --strict-portable: the skills it warns about are refused instead
    screen = check.screen if args.strict_portable else None
    with _held_back(logging.getLogger(SkillService.__module__)):  # its duplicate-name lines go in the summary
        extension = SkillsExtension(SkillService(source, options, screen=screen), callers=callers)
    catalog = extension.service.catalog
    nothing = nothing_found(catalog, args.paths)
    if nothing is not None:
        raise nothing
    if not args.quiet and args.format == "text":  # on stderr: stdout may be the MCP channel
        print_summary(catalog, sys.stderr, verbose=args.verbose)
    if not args.quiet:  # then what validate warns about, said while serving (it reads every SKILL.md again)
        warned = threading.Thread(target=_warn, args=(args, catalog, roots, check), name="start-warnings", daemon=True)
        warned.start()
        cleanup.callback(warned.join)  # said before the command ends, however soon that is
    if not args.quiet and extension.service.restored:
        where = args.digest_cache or "the gateway cache"
        err(f"{PROG}: restored from {where}; checking the sources in the background")
    tools = _tools(args, extension)
    instructions = args.instructions
    if instructions == "auto":
        from skillwire.server.search_tool import auto_instructions

        searching = args.search_tool or args.tools
        instructions = auto_instructions(catalog, search_tool=searching, scoped=callers is not None, tools=args.tools)
    server = build_server(extension, instructions=instructions)
    if tools is not None:
        tools.install(server)
    if args.prompts:
        from skillwire.server.prompts import SkillPrompts

        SkillPrompts(extension).install(server)
    # Tool answers and prompts are made from the catalog: a change of a caller's view is news for them too.
    announce = frozenset(kind for kind, on in (("tools", args.tools), ("prompts", args.prompts)) if on)
    live = LiveReload(
        extension.service,
        watch=args.watch,
        callers=callers,
        max_listen_streams=limits.max_listen_streams,
        max_listen_streams_per_caller=limits.max_listen_streams_per_caller,
        announce=announce,
    )
    live.install(server)
    if address is None:
        if sys.stdin.isatty() and not args.quiet:  # a person typed the command: say why nothing happens
            err(
                f"{PROG}: waiting for an MCP client on stdin (an MCP host launches this command); "
                "Ctrl-C stops, --http HOST:PORT serves a browser and HTTP clients"
            )
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(lambda: serve_stdio(server, live=live))
        return 0
    host, port = address
    assert sock is not None
    auth = _auth_config(args, resource=(args.public_url + MCP_PATH) if args.public_url else url_for(sock))

    try:
        port = sock.getsockname()[1]
        hosts = HostPolicy.for_bind(host, port, public_url=args.public_url, allowed_hosts=args.allowed_host)
    except ValueError as error:
        raise CliError(str(error)) from None

    def ready(url: str) -> None:
        err(f"{PROG}: listening on {url}")

    async def serving() -> None:
        if args.rollout_plan is None:
            await serving_http()
            return
        from skillwire.service.rollout import follow_plan

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(follow_plan, extension.service, args.rollout_plan)
            await serving_http()
            tasks.cancel_scope.cancel()

    def serving_http() -> Any:
        return serve_http(
            server,
            sock,
            on_ready=ready,
            live=live,
            service=extension.service,
            limits=limits,
            hosts=hosts,
            auth=auth,
            callers=callers,
            replica=args.replica_name,
        )

    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(serving)
    return 0


def _tools(args: argparse.Namespace, extension: SkillsExtension) -> ToolSet | None:
    """The MCP tools asked for: --tools (list_skills, search_skills, read_skill, read_skill_file), --search-tool
    (search_skills alone); a `ToolSet`, or None for none."""
    if not (args.tools or args.search_tool):
        return None
    from skillwire.server.search_tool import SkillSearch
    from skillwire.server.tool_set import ToolSet

    if not args.tools:
        return ToolSet([SkillSearch(extension)])
    from skillwire.server.tools import READ_SKILL, SkillTools

    return ToolSet([SkillTools(extension), SkillSearch(extension, read_tool=READ_SKILL)])


def _warn(args: argparse.Namespace, catalog: Catalog, roots: FolderRoots, check: PortabilityCheck) -> None:
    """Say what `validate` would warn about `catalog` (by its own function, `catalog_warnings`): grouped by rule
    as text, or validate's whole report as JSON or annotations; in one write, so log lines cannot cut into it."""
    from skillwire.cli.catalog_warnings import catalog_warnings
    from skillwire.cli.validate import ValidateReport, build_report

    try:
        warnings = catalog_warnings(catalog, roots, check)
        said = io.StringIO()
        if args.format == "text":
            print_warnings(warnings, said, verbose=args.verbose)
        else:  # validate's report (schema, annotations)
            emit(args.format, ValidateReport(build_report(catalog, roots, warnings)), out=said)
        sys.stderr.write(said.getvalue())
    except Exception as error:  # a thread's failure would otherwise be a traceback on stderr
        logging.getLogger(__name__).error("the start warnings could not be made: %s: %s", type(error).__name__, error)


def _bound(text: str, host: str, port: int, bind: Callable[[str, int], socket.socket]) -> socket.socket:
    """The socket `--http TEXT` asks for, bound (not listening yet); CliError (exit 1) in one line saying what to do."""
    try:
        return bind(host, port)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            why = (
                f"port {port} is in use (another process listens on it); stop that process, or choose another "
                f"port (--http {host}:0 picks a free one)"
            )
        elif error.errno == errno.EACCES:
            why = f"permission denied (port {port} needs privileges); choose a port above 1023"
        elif error.errno == errno.EADDRNOTAVAIL:
            why = f"{host} is not an address of this machine; use 127.0.0.1, 0.0.0.0 or one of its own addresses"
        else:
            why = str(error.strerror or error)
        raise CliError(f"cannot listen on {text}: {why}") from None


def _planned(source: Any, plan: str) -> Any:
    """The git source to start from under rollout plan `plan` (`service/rollout.py`); UsageError if it cannot be."""
    from skillwire.core.errors import SourceError
    from skillwire.service.rollout import BadPlan, planned_source
    from skillwire.sources.git.source import GitSource

    if not isinstance(source, GitSource):
        raise UsageError("--rollout-plan needs exactly one git:PATH@REF source (a plan names one of its commits)")
    try:
        return planned_source(source, plan)
    except BadPlan as error:
        raise UsageError(f"rollout plan {plan}: {error}") from None
    except SourceError as error:
        raise CliError(str(error)) from None


def _auth_config(args: argparse.Namespace, *, resource: str) -> AuthConfig | None:
    """Who may call, from --auth-issuer / --token-file / --required-scope (None: no authentication asked for)."""
    from skillwire.service.auth import AuthConfig

    if args.auth_issuer is None and args.token_file is None:
        if args.required_scope:
            raise UsageError("--required-scope needs --auth-issuer or --token-file")
        return None
    try:
        return AuthConfig(
            resource=resource,
            issuer=args.auth_issuer,
            token_file=args.token_file,
            required_scopes=tuple(args.required_scope),
        )
    except ValueError as error:
        raise CliError(str(error)) from None


def _limits(args: argparse.Namespace, make: Any) -> Any:
    """`ServeLimits` from the serve options (a ValueError names the bad one)."""
    return make(
        max_connections=args.max_connections,
        idle_timeout=args.idle_timeout,
        header_timeout=args.header_timeout,
        max_sessions=args.max_sessions,
        session_idle_timeout=args.session_idle_timeout,
        max_listen_streams=args.max_listen_streams,
        max_listen_streams_per_caller=args.max_listen_streams_per_caller,
        read_budget=args.read_budget_mb << 20,
        read_wait=args.read_wait,
        write_timeout=args.write_timeout,
    )


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise UsageError(f"--http wants HOST:PORT, for example 127.0.0.1:8000, not {text!r}")
    host = host.strip("[]")
    try:
        number = int(port)
    except ValueError:
        raise UsageError(f"--http port must be a number, not {port!r}") from None
    if not 0 <= number <= 65535:
        raise UsageError(f"--http port must be between 0 and 65535, not {number}")
    return host, number


@contextlib.contextmanager
def _held_back(logger: logging.Logger) -> Iterator[None]:
    """`logger` says only errors meanwhile (what it would warn about at start, the summary shows)."""
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def print_summary(
    catalog: Catalog, out: TextIO, *, warnings: Sequence[LintWarning] = (), verbose: bool = False
) -> None:
    """What is served, what hosts may read differently (`warnings`: `cli.catalog_warnings`), and what was refused,
    for a person reading a terminal. Warnings and refusals are grouped by rule, a few examples each (`verbose`:
    every one)."""
    count = len(catalog)
    files = catalog.file_count
    say(f"{PROG}: serving {count} skill{'s' * (count != 1)} ({files} files)", file=out)
    shown = catalog.skills_page(None, 50).items  # the first 50 only: a large catalog is not built just to print
    width = max((len(s.uri) for s in shown), default=0)
    for skill in shown:
        files_word = "file " if len(skill.files) == 1 else "files"
        say(f"  {skill.uri:<{width}}  {len(skill.files):>3} {files_word}  {skill.total_size:>9,} bytes", file=out)
    if count > 50:
        say(f"  ... and {count - 50} more", file=out)
    print_warnings(warnings, out, verbose=verbose)
    refused = [r for r in catalog.refusals if r.skill]
    skipped = [r for r in catalog.refusals if not r.skill]
    if refused:
        say(f"{PROG}: refused {len(refused)} skill{'s' * (len(refused) != 1)}:", file=out)
        _print_grouped([(r.rule, _where(r.path, r.line), r.message) for r in refused], out, verbose)
    if skipped:
        say(f"{PROG}: skipped {len(skipped)} path{'s' * (len(skipped) != 1)} outside any skill:", file=out)
        _print_grouped([(r.rule, _where(r.path, r.line), r.message) for r in skipped], out, verbose)
    out.flush()


def print_warnings(warnings: Sequence[LintWarning], out: TextIO, *, verbose: bool = False) -> None:
    """What is served but hosts may read differently (a host keying skills by name, one reading YAML 1.1), grouped
    by rule as refusals are; nothing when there is nothing to say."""
    if warnings:
        n = len(warnings)
        say(f"{PROG}: {n} warning{'s' * (n != 1)} (served, but hosts may read them differently):", file=out)
        _print_grouped([(w.rule, _where(w.path, w.line, w.column), w.message) for w in warnings], out, verbose)


def _where(path: str, line: int | None, column: int | None = None) -> str:
    return path + (f":{line}" if line is not None else "") + (f":{column}" if line is not None and column else "")


def _print_grouped(items: Sequence[tuple[str, str, str]], out: TextIO, verbose: bool, *, per_rule: int = 5) -> None:
    """(rule, where, message) items grouped by rule, most common first, a few examples each (hundreds stay
    readable; `verbose`: every one)."""
    by_rule: dict[str, list[tuple[str, str]]] = {}
    for rule, where, message in items:
        by_rule.setdefault(rule, []).append((where, message))
    for rule, group in sorted(by_rule.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        say(f"  [{rule}] {len(group)}", file=out)
        shown = group if verbose else group[:per_rule]
        for where, message in shown:
            say(f"    {where}: {message}", file=out)
        if len(group) > len(shown):
            say(f"    ... and {len(group) - len(shown)} more (-v lists every one)", file=out)
