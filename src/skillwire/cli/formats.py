"""One `--format text|json|github` for every command that reports: the option, and each format, written once.

A command builds a `Report` (its JSON object, its GitHub annotations, its text for a person) and hands it to
`emit`. `github` prints GitHub Actions workflow commands (`::error file=F,line=N,title=RULE::message`) with
values escaped as the runner unescapes them, then one plain summary line; every line is terminal safe too.

    add_format_option(parser)                       # --format text|json|github (default text)
    emit(args.format, report)                       # on stdout; serve's summary goes to stderr
    say(github_command(Annotation("error", "bad", title="rule")))
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, TextIO

from skillwire.cli.output import say, say_json
from skillwire.core.display import terminal_safe

__all__ = ["FORMATS", "Annotation", "Level", "Report", "add_format_option", "emit", "github_command", "repo_path"]

FORMATS: Final = ("text", "json", "github")
_ALIASES: Final = {"human": "text"}  # validate's old name for text, still accepted

Level = Literal["error", "warning", "notice"]


@dataclass(frozen=True, slots=True)
class Annotation:
    """One finding as GitHub shows it on a pull request: a level, a message and, if known, where and which rule."""

    level: Level
    message: str
    title: str | None = None
    file: str | None = None
    line: int | None = None
    col: int | None = None


class Report(Protocol):
    """What a command found, in the three shapes `--format` offers."""

    def as_json(self) -> dict[str, Any]:
        """The JSON object (each command's schema, versioned)."""
        ...

    def annotations(self) -> Sequence[Annotation]:
        """The findings worth a GitHub annotation (errors and warnings; nothing when all is well)."""
        ...

    def summary(self) -> str:
        """One line saying what was done, printed after the annotations."""
        ...

    def print_text(self, out: TextIO, *, colour: bool, verbose: bool) -> None:
        """The text a person reads (every line through `say` or `Terminal`)."""
        ...


def add_format_option(parser: argparse.ArgumentParser) -> None:
    """`--format text|json|github`, the same on every command."""
    parser.add_argument(
        "--format",
        type=lambda text: _ALIASES.get(text, text),
        choices=FORMATS,
        default="text",
        help="text for people (default), json for scripts, github for GitHub Actions annotations",
    )


def emit(fmt: str, report: Report, *, out: TextIO | None = None, verbose: bool = False) -> None:
    """Write `report` to `out` (stdout by default) in format `fmt`, then flush (a closed pipe is raised here)."""
    stream = sys.stdout if out is None else out
    if fmt == "json":
        say_json(report.as_json(), file=stream)  # controls and bidi characters as \uXXXX: exact once parsed
    elif fmt == "github":
        for annotation in report.annotations():
            stream.write(github_command(annotation) + "\n")
        say(report.summary(), file=stream)
    else:
        colour = stream.isatty() and "NO_COLOR" not in os.environ
        report.print_text(stream, colour=colour, verbose=verbose)
    stream.flush()


def github_command(annotation: Annotation) -> str:
    """`annotation` as one workflow command line: escaped as the runner unescapes it, then made terminal safe.

    GitHub's rules (actions/toolkit `command.ts`): in the message `%`, CR and LF become `%25`, `%0D`, `%0A`; in a
    property `:` and `,` also become `%3A` and `%2C`, so a file name cannot end its property or add another.
    """
    properties = [
        f"{key}={_escape_property(str(value))}"
        for key, value in (
            ("file", annotation.file),
            ("line", annotation.line),
            ("col", annotation.col),
            ("title", annotation.title),
        )
        if value is not None
    ]
    head = f"::{annotation.level}" + (" " + ",".join(properties) if properties else "")
    # After GitHub's escaping no CR or LF is left; escape, bidi and invisible characters are shown as escapes.
    return terminal_safe(f"{head}::{_escape_data(annotation.message)}")


def repo_path(path: str) -> str:
    """`path` relative to the working directory when it lies under it (GitHub matches annotations to repo files)."""
    if not os.path.isabs(path):
        return os.path.normpath(path)  # `./skills/x` as `skills/x`
    here = os.getcwd()
    return os.path.relpath(path, here) if path.startswith(here.rstrip(os.sep) + os.sep) else path


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
