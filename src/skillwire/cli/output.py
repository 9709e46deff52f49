"""Every line the command line shows a person goes through here, made terminal safe (`skillwire.core.display`).

Commands call `say` / `err` instead of `print`, so a name chosen by a server or a file name on disk can
never move the cursor, retitle the window or write the clipboard. Our own styling (colour) is added
after escaping, by `Terminal`; the log handler formats records with `SafeFormatter` (or `JsonFormatter`: one
JSON object a line, for log collectors).

    say(f"server: {name} (self-reported)")           # stdout, one line
    err(f"skillwire: error: {message}")               # stderr
    say(loaded.text, multiline=True)                  # content: newlines and tabs kept, all else escaped
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, TextIO

from skillwire.core.display import json_for_terminal, terminal_safe

__all__ = ["JsonFormatter", "SafeFormatter", "Styled", "Terminal", "err", "say", "say_json"]

PROG: Final = "skillwire"  # the command's name: the prefix of every line it writes about itself
_SGR: Final = {"red": "31", "green": "32", "yellow": "33", "bold": "1", "dim": "2"}


def say(text: str = "", *, file: TextIO | None = None, multiline: bool = False) -> None:
    """Write `text` and a newline to `file` (stdout by default), with every unsafe character escaped."""
    out = sys.stdout if file is None else file
    out.write(terminal_safe(text, multiline=multiline) + "\n")


def err(text: str = "", *, multiline: bool = False) -> None:
    """`say` on stderr, flushed: errors and refusals must show even if the process then stops."""
    say(text, file=sys.stderr, multiline=multiline)
    sys.stderr.flush()


def say_json(value: object, *, file: TextIO | None = None) -> None:
    """Write `value` as indented JSON (exact when parsed, escaped where a terminal would act on it) and a newline."""
    out = sys.stdout if file is None else file
    out.write(json_for_terminal(value) + "\n")


@dataclass(frozen=True, slots=True)
class Styled:
    """A piece of a line to show in a style (red, green, yellow, bold, dim) when colour is on."""

    style: str
    text: str

    def __post_init__(self) -> None:
        if self.style not in _SGR:
            raise ValueError(f"unknown style {self.style!r}; use one of {', '.join(_SGR)}")


@dataclass(frozen=True, slots=True)
class Terminal:
    """A stream and whether to colour it: each line's text is escaped first, then our own colour codes added."""

    out: TextIO
    colour: bool = False

    def say(self, *parts: str | Styled) -> None:
        """Write one line made of `parts` (plain text or `Styled`), every part escaped."""
        self.out.write("".join(self._render(part) for part in parts) + "\n")

    def _render(self, part: str | Styled) -> str:
        if isinstance(part, str):
            return terminal_safe(part)
        text = terminal_safe(part.text)
        return f"\x1b[{_SGR[part.style]}m{text}\x1b[0m" if self.colour else text


class SafeFormatter(logging.Formatter):
    """A log formatter whose lines are terminal safe: messages interpolate server-chosen URIs and file names.

    The message is one line (a newline in a URI cannot forge a second log record); a traceback keeps its lines.
    """

    def format(self, record: logging.LogRecord) -> str:
        cached = record.exc_text
        record.exc_text = None  # another handler may have cached its own, unescaped traceback text
        try:
            return super().format(record)
        finally:
            record.exc_text = cached

    def formatMessage(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().formatMessage(record))

    def formatException(self, ei: logging._SysExcInfoType) -> str:
        return terminal_safe(super().formatException(ei), multiline=True)

    def formatStack(self, stack_info: str) -> str:
        return terminal_safe(super().formatStack(stack_info), multiline=True)


class JsonFormatter(logging.Formatter):
    """One JSON object a line (`time`, `level`, `logger`, `message`, and `exception` with the traceback), terminal
    safe like every other line: control and invisible characters are `\\uXXXX` escapes, so no record can forge
    another."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json_for_terminal(entry, indent=None)
