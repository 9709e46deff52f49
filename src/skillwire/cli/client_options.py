"""The options of the commands that talk to a skills server: `host`, `inspect` and `pull`.

They share how to authenticate, how long to wait and how many listing pages to follow. Only light modules here:
each command's run (and with it the SDK's client) is imported when it is chosen, so `--help` loads no SDK.
"""

from __future__ import annotations

import argparse

from skillwire.cli.arguments import positive_float, positive_int
from skillwire.cli.formats import add_format_option


def client_auth() -> argparse.ArgumentParser:
    """The parent parser of --token-file and --header: what every command that connects to a server accepts."""
    parent = argparse.ArgumentParser(add_help=False)
    credentials = parent.add_argument_group("authentication (http(s) servers)")
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
    return parent


def add_host(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: list[argparse.ArgumentParser]) -> None:
    """`skillwire host`: the servers to connect to, and what to load, read and list."""
    host = sub.add_parser(
        "host",
        parents=parents,
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


def add_inspect(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: list[argparse.ArgumentParser]
) -> None:
    """`skillwire inspect`: the server, the listing's format, and --verify."""
    inspect = sub.add_parser(
        "inspect",
        parents=parents,
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


def add_pull(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: list[argparse.ArgumentParser]) -> None:
    """`skillwire pull`: the server, the skill, and where to write it."""
    pull = sub.add_parser(
        "pull",
        parents=parents,
        help="download one skill, verified, into a folder",
        description=(
            "Read every file of SKILL (a name, or a SKILL.md URI) from SERVER, verify all of them against its entry, "
            "then write them under DEST with a .skillwire-provenance.json. Nothing is written if any check fails. "
            "A skill holding a version-control folder (.git, .hg, ...) or a file a tool runs or trusts on entering "
            "a folder (.envrc, .vscode/, mise.toml, ...) is refused whole, --force or not: --force is about your "
            "own folders, not about trusting the server."
        ),
    )
    pull.add_argument("server", metavar="SERVER", help="an http(s) URL, or a command line (quote it)")
    pull.add_argument("skill", metavar="SKILL", help="a skill's name (pdf) or its SKILL.md URI (skill://pdf/SKILL.md)")
    pull.add_argument("dest", metavar="DEST", help="a new or empty folder")
    pull.add_argument(
        "--force",
        action="store_true",
        help="allow agent configuration: DEST in an agent folder, files like CLAUDE.md (never .git/, .envrc and the "
        "like)",
    )
    add_format_option(pull)
    _timeout_option(pull)
    pull.set_defaults(func=_pull)


def _max_pages_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-pages",
        type=positive_int,
        metavar="N",
        help="follow at most N pages of a server's skills/list (default 10000); past that the listing is incomplete",
    )


def _timeout_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=30.0,
        metavar="SECONDS",
        help="give up on a server that does not answer a request (connecting included) in SECONDS (default 30)",
    )


def _host(args: argparse.Namespace) -> int:
    from skillwire.cli.hostcmd import run_host

    return run_host(args)


def _inspect(args: argparse.Namespace) -> int:
    from skillwire.cli.inspect import run_inspect

    return run_inspect(args)


def _pull(args: argparse.Namespace) -> int:
    from skillwire.cli.pull import run_pull

    return run_pull(args)
