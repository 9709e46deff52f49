"""`skillwire` command line: serve folders of skills over MCP.

    skillwire serve skills/                    # stdio (what an MCP host launches)
    skillwire serve skills/ --http 127.0.0.1:8000
    skillwire serve skills/ --no-watch         # rescan only on SIGHUP (POSIX)
    skillwire serve skills/ --digest-cache ~/.cache/skillwire/skills.json   # fast restarts
    skillwire serve skills/ --http 127.0.0.1:8000 --token-file tokens.txt  # bearer tokens from a file
    skillwire serve skills/ --http 0.0.0.0:8000 --public-url https://skills.example.com \
        --auth-issuer https://id.example.com --required-scope skills:read  # OAuth: JWTs for .../mcp
    skillwire serve skills/ --http 127.0.0.1:8000 --scopes scopes.toml      # each caller sees its own skills

Errors are one line on stderr (`skillwire: error: ...`) and exit status 2 for
usage, 1 for failures; `--debug` shows tracebacks. Every line shown to a person,
log records included, goes through `cli/output.py`: text from servers and file
names cannot drive the terminal.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
import urllib.parse
from collections.abc import Sequence

# Only light modules here: the parser (and so every --help) is built without the SDK, Starlette or the client;
# each command's handler imports what it needs (tests/test_lazy_imports.py checks).
import skillwire
from skillwire.cli.errors import CliError
from skillwire.cli.formats import Annotation, add_format_option, github_command
from skillwire.cli.output import PROG, JsonFormatter, SafeFormatter, err, say
from skillwire.errors import AuthenticationRequired, SkillwireError
from skillwire.server.defaults import DEFAULT_CACHE_SCOPE, DEFAULT_PAGE_SIZE, DEFAULT_READ_CACHE_BYTES, DEFAULT_TTL_MS

HOW_TO_SEND_A_TOKEN = "; pass it with --token-file FILE or --header 'Authorization: Bearer TOKEN'"


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    handler = logging.StreamHandler(sys.stderr)
    # Log messages interpolate URIs and file names chosen by others: each record is made terminal safe.
    if args.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(SafeFormatter(f"{PROG}: %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(
        level=logging.DEBUG if args.debug else (logging.INFO if args.verbose else logging.WARNING),
        handlers=[handler],
    )
    # The serve summary already lists every refusal; the library's count line would repeat it. (Only that
    # module: a digest cache that is ignored, and why, is said at the default level.)
    sources_log = logging.getLogger("skillwire.sources.filesystem")
    previous_level = sources_log.level
    if not (args.verbose or args.debug):
        sources_log.setLevel(logging.ERROR)
    try:
        return _run(args)
    finally:
        sources_log.setLevel(previous_level)  # main() may run in-process (tests, embedding): leave logging as found


def _run(args: argparse.Namespace) -> int:
    try:
        result: int = args.func(args)
        return result
    except AuthenticationRequired as error:  # one line: who wants a token, and how to give one
        hint = "" if error.token_sent or error.status == 403 else HOW_TO_SEND_A_TOKEN
        err(f"{PROG}: error: {error}{hint}")
        return 1
    except (CliError, SkillwireError) as error:
        # A message may list one problem per line (pull's refusals): each line is made terminal safe on its own.
        header, *details = str(error).split("\n")
        err(f"{PROG}: error: {header}")
        for line in details:
            err(line)
        if getattr(args, "format", None) == "github":  # the failure as an annotation too, where CI shows them
            say(github_command(Annotation("error", str(error), title=PROG)))
        return error.status if isinstance(error, CliError) else 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`skillwire inspect ... | head`): stop quietly, as other tools do. Point stdout at
        # /dev/null so the interpreter's final flush cannot raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141  # 128 + SIGPIPE, what a shell reports for a command ended by a closed pipe
    except Exception as error:
        if args.debug:  # the traceback, through err like every line: its messages may quote hostile text
            err(traceback.format_exc().rstrip("\n"), multiline=True)
            return 1
        err(f"{PROG}: error: {type(error).__name__}: {error} (run with --debug for details)")
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Serve and consume Agent Skills over MCP.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {skillwire.__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true", help="log what the server does")
    common.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    common.add_argument(
        "--log-format", choices=("text", "json"), default="text", help="log records as text or as JSON lines"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    client_auth = argparse.ArgumentParser(add_help=False)
    credentials = client_auth.add_argument_group("authentication (http(s) servers)")
    credentials.add_argument(
        "--token-file", metavar="FILE", help="send the first token in FILE as 'Authorization: Bearer TOKEN'"
    )
    credentials.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="send this HTTP header, e.g. 'Authorization: Bearer TOKEN' (repeatable)",
    )

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
        "git:PATH@REF, packages:NAME,...); PREFIX=SOURCE serves its skills under PREFIX/",
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
        "--page-size", type=_page_size, default=DEFAULT_PAGE_SIZE, help="entries per page, 1-10000 (default 100)"
    )
    serve.add_argument("--ttl-ms", type=_whole, default=DEFAULT_TTL_MS, help="cache hint ttlMs (default 300000)")
    serve.add_argument(
        "--read-cache-mb",
        type=_whole,
        default=DEFAULT_READ_CACHE_BYTES >> 20,
        metavar="MB",
        help="MiB of verified file contents kept for reads, least recently used out; 0: none (default %(default)s)",
    )
    serve.add_argument(
        "--cache-scope", choices=("public", "private"), default=DEFAULT_CACHE_SCOPE, help="default public"
    )
    serve.add_argument("--quiet", action="store_true", help="print no summary")
    add_format_option(serve)  # of the start summary, on stderr
    serve.add_argument(
        "--search-tool",
        action="store_true",
        help="add an MCP tool search_skills that ranks the served skills for a few words (for hosts without search)",
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
        "--no-watch",
        dest="watch",
        action="store_false",
        help="do not follow changes on disk (send SIGHUP to rescan); clients are still told when the catalog changes",
    )
    auth = serve.add_argument_group("authentication (HTTP only; see README 'Deploying')")
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

    host = sub.add_parser(
        "host",
        parents=[common, client_auth],
        help="try the host side: list, approve, load and read skills from MCP servers",
        description=(
            "Connect to MCP servers under labels you choose, show their skills (with origin and name collisions), "
            "and optionally load one skill (asking for approval) and read its files, verifying every byte."
        ),
    )
    host.add_argument(
        "--server",
        action="append",
        required=True,
        metavar="LABEL=URL|COMMAND",
        help="a server: an http(s) URL, or a command that starts a stdio server (repeatable)",
    )
    host.add_argument("--load", metavar="SKILL", help="load this skill (a handle such as docs:pdf-processing)")
    host.add_argument("--read", action="append", default=[], metavar="PATH", help="read a file of the loaded skill")
    host.add_argument("--ls", action="append", default=[], metavar="PATH", help="list a folder of the loaded skill")
    host.add_argument("--yes", action="store_true", help="approve loading without asking (grants nothing)")
    host.add_argument("--approvals", metavar="FILE", help="persist approvals in this JSON file")
    host.add_argument("--cache", metavar="DIR", help="cache verified skill files here (default: no disk cache)")
    add_format_option(host)  # of the listing
    _max_pages_option(host)
    _timeout_option(host)
    host.set_defaults(func=_host)

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
    validate.set_defaults(func=_validate)

    inspect = sub.add_parser(
        "inspect",
        parents=[common, client_auth],
        help="show what a skills server publishes; --verify checks every file",
        description="Connect to SERVER (an http(s) URL, or a command that starts a stdio server) and list its skills.",
    )
    inspect.add_argument("server", metavar="SERVER", help="an http(s) URL, or a command line (quote it)")
    add_format_option(inspect)
    inspect.add_argument(  # kept so existing scripts work; --format is the one spelling on every command
        "--json", dest="format", action="store_const", const="json", help="deprecated alias of --format json"
    )
    inspect.add_argument("--verify", action="store_true", help="read every file and check it against the manifest")
    _max_pages_option(inspect)
    _timeout_option(inspect)
    inspect.set_defaults(func=_inspect)

    pull = sub.add_parser(
        "pull",
        parents=[common, client_auth],
        help="download one skill, verified, into a folder",
        description=(
            "Read every file of SKILL (a name, or a SKILL.md URI) from SERVER, verify all of them against its entry, "
            "then write them under DEST with a .skillwire-provenance.json. Nothing is written if any check fails."
        ),
    )
    pull.add_argument("server", metavar="SERVER", help="an http(s) URL, or a command line (quote it)")
    pull.add_argument("skill", metavar="SKILL", help="a skill's name (pdf) or its SKILL.md URI (skill://pdf/SKILL.md)")
    pull.add_argument("dest", metavar="DEST", help="a new or empty folder")
    pull.add_argument(
        "--force", action="store_true", help="allow agent configuration: DEST in an agent folder, files like CLAUDE.md"
    )
    add_format_option(pull)
    _timeout_option(pull)
    pull.set_defaults(func=_pull)
    return parser


def _network_options(serve: argparse.ArgumentParser) -> None:
    """--http's exposure and resource bounds (defaults fit a 2-core machine; see server/limits.py)."""
    from skillwire.server import limits

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
        type=_positive_int,
        default=limits.DEFAULT_MAX_CONNECTIONS,
        metavar="N",
        help="open connections; more are closed at once (default %(default)s, lowered to fit the fd limit)",
    )
    net.add_argument(
        "--idle-timeout",
        type=_positive_float,
        default=limits.DEFAULT_IDLE_TIMEOUT_S,
        metavar="S",
        help="close a connection that sends nothing for S seconds while no request is open (default %(default)s)",
    )
    net.add_argument(
        "--header-timeout",
        type=_positive_float,
        default=limits.DEFAULT_HEADER_TIMEOUT_S,
        metavar="S",
        help="seconds a client has to send a whole request once it starts (default %(default)s)",
    )
    net.add_argument(
        "--max-sessions",
        type=_positive_int,
        default=limits.DEFAULT_MAX_SESSIONS,
        metavar="N",
        help="handshake-era sessions; past it the least recently used idle one ends (default %(default)s)",
    )
    net.add_argument(
        "--session-idle-timeout",
        type=_positive_float,
        default=limits.DEFAULT_SESSION_IDLE_TIMEOUT_S,
        metavar="S",
        help="end a handshake-era session unused for S seconds (default %(default)s)",
    )
    net.add_argument(
        "--max-listen-streams",
        type=_positive_int,
        default=limits.DEFAULT_MAX_LISTEN_STREAMS,
        metavar="N",
        help="open subscriptions/listen streams (default %(default)s)",
    )
    net.add_argument(
        "--read-budget-mb",
        type=_positive_int,
        default=limits.DEFAULT_READ_BUDGET_BYTES >> 20,
        metavar="MB",
        help="MiB of large files (1 MiB and up) read at once; more reads wait (default %(default)s)",
    )


def _replica_name(text: str) -> str:
    from skillwire.server.replica import check_replica_name

    try:
        return check_replica_name(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _positive_float(text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        number = 0.0
    if not 0 < number < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return number


def _validate(args: argparse.Namespace) -> int:
    from skillwire.cli.validate import run_validate

    return run_validate(args)


def _max_pages_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-pages",
        type=_positive_int,
        metavar="N",
        help="follow at most N pages of a server's skills/list (default 10000); past that the listing is incomplete",
    )


def _page_size(text: str) -> int:
    """--page-size: a whole number from 1 to 10000 (argparse names the flag in its error)."""
    number = _positive_int(text)
    if number > 10_000:
        raise argparse.ArgumentTypeError(f"{text!r} is more than 10000")
    return number


def _whole(text: str) -> int:
    """--ttl-ms, --read-cache-mb: a whole number, 0 or more."""
    try:
        number = int(text)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 0 or more")
    return number


def _timeout_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=30.0,
        metavar="SECONDS",
        help="give up on a server that does not answer a request (connecting included) in SECONDS (default 30)",
    )


def _positive_int(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return number


def _inspect(args: argparse.Namespace) -> int:
    from skillwire.cli.inspect import run_inspect

    return run_inspect(args)


def _pull(args: argparse.Namespace) -> int:
    from skillwire.cli.pull import run_pull

    return run_pull(args)


def _host(args: argparse.Namespace) -> int:
    from skillwire.cli.hostcmd import run_host

    return run_host(args)


def _serve(args: argparse.Namespace) -> int:
    from skillwire.cli.serve import run_serve

    return run_serve(args)


def _public_url(text: str) -> str:
    """--public-url: an http(s) origin, no path, query or credentials (a trailing slash is dropped)."""
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
