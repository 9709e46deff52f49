"""The options of the commands that read skill sources: `serve` (with its HTTP exposure and limits) and `validate`.

Only light modules here: each command's run is imported when it is chosen, so `--help` loads no SDK.
"""

from __future__ import annotations

import argparse
import urllib.parse

from skillwire.cli.arguments import page_size, positive_float, positive_int, whole
from skillwire.cli.formats import add_format_option
from skillwire.server.defaults import DEFAULT_CACHE_SCOPE, DEFAULT_PAGE_SIZE, DEFAULT_READ_CACHE_BYTES, DEFAULT_TTL_MS


def add_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    """`skillwire serve`: its sources, protocol, paging and cache hints, summary, authentication and HTTP limits."""
    serve = sub.add_parser(
        "serve",
        parents=[common],
        help="serve folders of skills over MCP",
        description=(
            "Serve every skill (a folder with a SKILL.md) under PATH... as skill:// resources. "
            "Uses stdio unless --http is given. Skills that break a rule are left out and listed on stderr."
        ),
    )
    serve.add_argument(
        "paths",
        nargs="*",
        metavar="SOURCE",
        help="a folder of skills or a skill folder; KIND:TARGET for another kind (folder:PATH, "
        "git:PATH@REF, packages:NAME,..., mcp:URL or mcp:stdio:COMMAND: another MCP server's skills, verified); "
        "PREFIX=SOURCE serves its skills under PREFIX/",
    )
    serve.add_argument(
        "--packages",
        nargs="?",
        const="*",
        metavar="NAME,...",
        help="also serve the skills installed Python distributions declare (entry-point group skillwire.skills); "
        "--packages=NAME,... only those distributions",
    )
    mode = serve.add_mutually_exclusive_group()
    mode.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at http://HOST:PORT/mcp (port 0: any)")
    mode.add_argument("--stdio", action="store_true", help="serve one client on stdin/stdout (the default)")
    serve.add_argument(
        "--page-size", type=page_size, default=DEFAULT_PAGE_SIZE, help="entries per page, 1-10000 (default 100)"
    )
    serve.add_argument("--ttl-ms", type=whole, default=DEFAULT_TTL_MS, help="cache hint ttlMs (default 300000)")
    serve.add_argument(
        "--read-cache-mb",
        type=whole,
        default=DEFAULT_READ_CACHE_BYTES >> 20,
        metavar="MB",
        help="MiB of verified file contents kept for reads, least recently used out; 0: none (default %(default)s)",
    )
    serve.add_argument(
        "--cache-scope", choices=("public", "private"), default=DEFAULT_CACHE_SCOPE, help="default public"
    )
    serve.add_argument("--quiet", action="store_true", help="print no summary")
    add_format_option(serve)  # of the start summary, on stderr
    _strict_portable(serve)
    serve.add_argument(
        "--search-tool",
        action="store_true",
        help="add an MCP tool search_skills that ranks the served skills for a few words (for hosts without search)",
    )
    serve.add_argument(
        "--tools",
        action="store_true",
        help="also offer the skills as MCP tools (list_skills, search_skills, read_skill, read_skill_file), for "
        "clients that call tools but do not speak the Skills extension",
    )
    serve.add_argument(
        "--prompts",
        action="store_true",
        help="also offer each skill as an MCP prompt (clients show them as slash commands): prompts/get gives the "
        "SKILL.md, stated as coming from this server",
    )
    serve.add_argument(
        "--instructions",
        metavar="TEXT|auto",
        help="server instructions for the model; 'auto' says the server has skills and how to find them",
    )
    serve.add_argument(
        "--digest-cache",
        metavar="FILE",
        help="remember digests and the catalog in FILE: a restart serves at once and then checks the disk",
    )
    serve.add_argument(
        "--gateway-cache",
        metavar="DIR",
        help="where mcp: sources keep the upstream content they verified, by digest, and each upstream's last "
        "verified state (default $XDG_CACHE_HOME/skillwire/gateway)",
    )
    serve.add_argument(
        "--gateway-cache-mb",
        type=positive_int,
        metavar="MB",
        help="MiB of upstream content the gateway cache holds at most; a skill that does not fit is refused "
        "(default 2048)",
    )
    serve.add_argument(
        "--lock",
        metavar="FILE",
        help="pin mcp: sources to the versions in FILE (written from their first verified state if missing); "
        "upstream changes wait in FILE.pending until `skillwire lock accept`",
    )
    serve.add_argument(
        "--upstream-credentials",
        metavar="FILE",
        help="credentials for mcp: upstreams, by URL (JSON): a bearer token file, or OAuth client credentials "
        "(client_id, client_secret_file, issuer, scope); secrets only in files, never logged",
    )
    serve.add_argument(
        "--no-watch",
        dest="watch",
        action="store_false",
        help="do not follow changes on disk (send SIGHUP to rescan); clients are still told when the catalog changes",
    )
    auth = serve.add_argument_group("authentication (HTTP only; see docs/deploying.md)")
    auth.add_argument(
        "--auth-issuer",
        metavar="URL",
        help="accept JWT access tokens from this OAuth issuer (keys found from its metadata), audience PUBLIC_URL/mcp",
    )
    auth.add_argument(
        "--token-file",
        metavar="FILE",
        help="accept the bearer tokens in FILE (one a line: TOKEN [subject=NAME] [scopes=a,b]); re-read on change",
    )
    auth.add_argument(
        "--required-scope",
        action="append",
        default=[],
        metavar="SCOPE",
        help="a token must carry this scope (repeatable; 403 insufficient_scope otherwise)",
    )
    serve.add_argument(
        "--scopes",
        metavar="FILE",
        help="a TOML policy saying which skills each caller (by token subject, client, scope or claim) may see; "
        "re-read when it changes",
    )
    _network_options(serve)
    serve.set_defaults(func=_serve, usage_error=serve.error)  # no SOURCE and no --packages: argparse's usage error


def add_validate(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    """`skillwire validate`: the sources to check and the report's format."""
    validate = sub.add_parser(
        "validate",
        parents=[common],
        help="check folders of skills: what the server would refuse, and portability warnings",
        description=(
            "Run the rules `skillwire serve` applies to every skill under PATH... and report each refusal "
            "(file:line, rule, fix), plus warnings about YAML and encoding traps that other hosts read differently. "
            "Exit status 1 if any skill would be refused."
        ),
    )
    validate.add_argument(
        "paths", nargs="+", metavar="SOURCE", help="a folder of skills or a skill folder; any SOURCE serve takes"
    )
    add_format_option(validate)
    _strict_portable(validate)
    validate.set_defaults(func=_validate)


def _network_options(serve: argparse.ArgumentParser) -> None:
    """--http's exposure and resource bounds (defaults fit a 2-core machine; see service/limits.py)."""
    from skillwire.service import limits

    net = serve.add_argument_group("HTTP exposure and limits")
    net.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="serve a non-loopback address without authentication (otherwise refused)",
    )
    # --public-url is defined here only: authentication takes its resource URL (the token audience) from it, and
    # the Host/Origin checks take the allowed host from it.
    net.add_argument(
        "--public-url",
        metavar="URL",
        type=_public_url,
        help="the URL clients reach this server at (scheme://host[:port], e.g. behind a proxy); its host is allowed",
    )
    net.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="also answer requests for this Host (repeatable; loopback names always work)",
    )
    net.add_argument(
        "--replica-name",
        type=_replica_name,
        metavar="NAME",
        help="this replica's name behind a load balancer: session ids start with NAME. (see deploy/)",
    )
    net.add_argument(
        "--rollout-plan",
        metavar="FILE",
        help='with one git: source, switch to the commit FILE names at the time it says: {"commit": ID, "at": UNIX}',
    )
    net.add_argument(
        "--max-connections",
        type=positive_int,
        default=limits.DEFAULT_MAX_CONNECTIONS,
        metavar="N",
        help="open connections; more are closed at once (default %(default)s, lowered to fit the fd limit)",
    )
    net.add_argument(
        "--idle-timeout",
        type=positive_float,
        default=limits.DEFAULT_IDLE_TIMEOUT_S,
        metavar="S",
        help="close a connection that sends nothing for S seconds while no request is open (default %(default)s)",
    )
    net.add_argument(
        "--header-timeout",
        type=positive_float,
        default=limits.DEFAULT_HEADER_TIMEOUT_S,
        metavar="S",
        help="seconds a client has to send a whole request once it starts (default %(default)s)",
    )
    net.add_argument(
        "--max-sessions",
        type=positive_int,
        default=limits.DEFAULT_MAX_SESSIONS,
        metavar="N",
        help="handshake-era sessions; past it the least recently used idle one ends (default %(default)s)",
    )
    net.add_argument(
        "--session-idle-timeout",
        type=positive_float,
        default=limits.DEFAULT_SESSION_IDLE_TIMEOUT_S,
        metavar="S",
        help="end a handshake-era session unused for S seconds (default %(default)s)",
    )
    net.add_argument(
        "--max-listen-streams",
        type=positive_int,
        default=limits.DEFAULT_MAX_LISTEN_STREAMS,
        metavar="N",
        help="open subscriptions/listen streams (default %(default)s)",
    )
    net.add_argument(
        "--max-listen-streams-per-caller",
        type=positive_int,
        default=limits.DEFAULT_MAX_LISTEN_STREAMS_PER_CALLER,
        metavar="N",
        help="listen streams one token (or JWT client and subject) may hold open (default %(default)s)",
    )
    net.add_argument(
        "--read-budget-mb",
        type=positive_int,
        default=limits.DEFAULT_READ_BUDGET_BYTES >> 20,
        metavar="MB",
        help="MiB of large files (1 MiB and up) being read or sent at once, and as much again of smaller ones;"
        " more reads wait (default %(default)s)",
    )
    net.add_argument(
        "--read-wait",
        type=positive_float,
        default=limits.DEFAULT_READ_WAIT_S,
        metavar="S",
        help="seconds a read waits for room in the read budget before it is answered 503 busy (default %(default)s)",
    )
    net.add_argument(
        "--write-timeout",
        type=positive_float,
        default=limits.DEFAULT_WRITE_TIMEOUT_S,
        metavar="S",
        help="close a connection whose client does not take the next 64 KiB of an answer within S seconds"
        " (default %(default)s)",
    )


def _replica_name(text: str) -> str:
    from skillwire.service.replica import check_replica_name

    try:
        return check_replica_name(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _public_url(text: str) -> str:
    """--public-url: an http(s) origin, no path, query or credentials (a trailing slash is dropped)."""
    # Keep the name: argparse shows it when urlsplit raises ValueError ("invalid _public_url value: ...").
    parts = urllib.parse.urlsplit(text)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or parts.username is not None
    ):
        raise argparse.ArgumentTypeError(f"want scheme://host[:port], e.g. https://skills.example.com, not {text!r}")
    return f"{parts.scheme}://{parts.netloc}"


def _serve(args: argparse.Namespace) -> int:
    from skillwire.cli.serve import run_serve

    return run_serve(args)


def _validate(args: argparse.Namespace) -> int:
    from skillwire.cli.validate import run_validate

    return run_validate(args)


def _strict_portable(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strict-portable",
        action="store_true",
        help="refuse a skill that has a portability warning (a value other hosts read differently) instead of "
        "warning about it",
    )
