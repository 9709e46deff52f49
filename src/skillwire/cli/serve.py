"""`skillwire serve`: what the command does once its options are parsed (its options are `cli/source_options.py`).

It opens the sources, prints what is served and refused (`print_summary`), checks the exposure rules, and serves
stdio or streamable HTTP until stopped. Heavy imports stay inside `run_serve`: `skillwire --help` loads none.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from skillwire.cli.errors import CliError, UsageError, nothing_found
from skillwire.cli.formats import emit
from skillwire.cli.output import PROG, err, say
from skillwire.core.catalog import Catalog, Refusal

if TYPE_CHECKING:
    from skillwire.server.extension import SkillsExtension
    from skillwire.server.tool_set import ToolSet
    from skillwire.service.auth import AuthConfig


def run_serve(args: argparse.Namespace) -> int:
    """`skillwire serve`: open the sources, print what is served, and serve stdio or HTTP until stopped."""
    import anyio

    from skillwire.cli.progress import ProgressBar
    from skillwire.core.errors import SpecError
    from skillwire.server.extension import SkillsExtension
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
    with _held_back(logging.getLogger(SkillService.__module__)):  # its duplicate-name lines go in the summary
        extension = SkillsExtension(SkillService(source, options), callers=callers)
    catalog = extension.service.catalog
    nothing = nothing_found(catalog, args.paths)
    if nothing is not None:
        raise nothing
    if not args.quiet and args.format == "text":
        print_summary(catalog, sys.stderr, duplicates=extension.service.duplicate_warnings)
    elif not args.quiet:  # validate's report (schema, annotations), on stderr: stdout may be the MCP channel
        from skillwire.cli.validate import serve_report

        emit(args.format, serve_report(catalog, args.paths), out=sys.stderr)
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
    try:
        sock = bind(host, port)
    except OSError as error:
        raise CliError(f"cannot listen on {args.http}: {error.strerror or error}") from None

    auth = _auth_config(args, resource=(args.public_url + MCP_PATH) if args.public_url else url_for(sock))

    try:
        port = sock.getsockname()[1]
        hosts = HostPolicy.for_bind(host, port, public_url=args.public_url, allowed_hosts=args.allowed_host)
    except ValueError as error:
        sock.close()
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


def print_summary(catalog: Catalog, out: TextIO, *, duplicates: Sequence[str] | None = None) -> None:
    """What is served and what was refused, for a person reading a terminal.

    `duplicates`: the service's duplicate-name warnings (`SkillService.duplicate_warnings`; None: `catalog`'s,
    found by the service's rule).
    """
    if duplicates is None:
        from skillwire.server.skill_service import duplicate_name_warnings

        duplicates = duplicate_name_warnings(catalog)
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
    for line in duplicates:  # a host keying skills by name would see one of them
        say(f"{PROG}: warning: {line}", file=out)
    refused = [r for r in catalog.refusals if r.skill]
    skipped = [r for r in catalog.refusals if not r.skill]
    if refused:
        say(f"{PROG}: refused {len(refused)} skill{'s' * (len(refused) != 1)}:", file=out)
        _print_grouped(refused, out)
    if skipped:
        say(f"{PROG}: skipped {len(skipped)} path{'s' * (len(skipped) != 1)} outside any skill:", file=out)
        _print_grouped(skipped, out)
    out.flush()


def _print_grouped(refusals: Sequence[Refusal], out: TextIO, *, per_rule: int = 5) -> None:
    """Refusals grouped by rule, most common first, a few examples each (hundreds stay readable)."""
    by_rule: dict[str, list[Refusal]] = {}
    for r in refusals:
        by_rule.setdefault(r.rule, []).append(r)
    for rule, group in sorted(by_rule.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        say(f"  [{rule}] {len(group)}", file=out)
        for r in group[:per_rule]:
            where = f"{r.path}:{r.line}" if r.line is not None else r.path
            say(f"    {where}: {r.message}", file=out)
        if len(group) > per_rule:
            say(f"    ... and {len(group) - per_rule} more (-v lists every one)", file=out)
