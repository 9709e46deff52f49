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

This module is the entry point: the parser's skeleton, logging, and each error turned into one line and an exit
status. Each command's options live beside it (`source_options.py`: serve, validate; `client_options.py`: host,
inspect, pull), and its run in its own module, imported only when the command is chosen.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from collections.abc import Sequence

from skillwire.cli.client_options import add_host, add_inspect, add_pull, client_auth
from skillwire.cli.errors import CliError
from skillwire.cli.formats import Annotation, github_command
from skillwire.cli.lock import add_lock
from skillwire.cli.output import PROG, JsonFormatter, SafeFormatter, err, say
from skillwire.cli.source_options import add_serve, add_validate
from skillwire.core.errors import AuthenticationRequired, SkillwireError

# Only light modules here: the parser (and so every --help) is built without the SDK, Starlette or the client;
# each command's handler imports what it needs (tests/test_lazy_imports.py checks).
from skillwire.core.version import __version__

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
    sources_log = logging.getLogger("skillwire.sources.folder.source")
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
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true", help="log what the server does")
    common.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    common.add_argument(
        "--log-format", choices=("text", "json"), default="text", help="log records as text or as JSON lines"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    # The order here is the order `skillwire --help` lists them in; each command's options live beside it.
    server = [common, client_auth()]
    add_serve(sub, common)
    add_host(sub, server)
    add_validate(sub, common)
    add_inspect(sub, server)
    add_pull(sub, server)
    add_lock(sub, common)
    return parser
