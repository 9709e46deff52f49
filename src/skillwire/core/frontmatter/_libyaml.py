"""libyaml as a YAML 1.2 event source: the parser, the characters it mishandles, and its errors made readable.

Scanning and parsing run in libyaml (`yaml.cyaml.CParser`), about 10x faster than PyYAML's pure-Python
parser, which is used only if PyYAML was built without libyaml. libyaml is a YAML 1.1 parser: it reads
NEL, LS, PS and a lone CR as line breaks and rejects control characters and `\\ud83d`-style surrogate
escapes, which YAML 1.2 and JS take as ordinary content. `Swap` trades them for unused private-use
characters before parsing and gives them back in every scalar afterwards.

    swap = Swap.of(text)                    # None when the text holds nothing libyaml mishandles
    parser = new_parser(swap.text if swap else text)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import yaml
from yaml.events import Event

from skillwire.core.errors import FrontmatterError
from skillwire.core.frontmatter._position import Where


class EventSource(Protocol):
    """What the composer reads: a PyYAML parser's event stream."""

    def get_event(self) -> Event | None: ...
    def dispose(self) -> None: ...


class PurePythonParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    """PyYAML's pure-Python parser: used only when PyYAML lacks the libyaml extension."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


new_parser: Callable[[str], EventSource]
try:
    from yaml._yaml import CParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    new_parser = PurePythonParser
    USING_LIBYAML = False
else:
    new_parser = CParser
    USING_LIBYAML = True

# libyaml refuses `\\u` escapes of UTF-16 surrogates, which JS accepts (a pair is one
# character). Group 2 is such an escape if its backslash is not itself escaped.
_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\U(0{2}(?:0[0-9a-fA-F]|10)[0-9a-fA-F]{4})")
_SURROGATE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)(\\u[dD][89a-fA-F][0-9a-fA-F]{2})")
# Characters that libyaml (YAML 1.1) rejects or reads as line breaks, but YAML 1.2 and
# JS read as ordinary content: C0/C1 controls, NEL, LS, PS, BOM, non-characters,
# surrogates, and a CR not followed by LF.
_NOT_LIBYAML_CHAR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
_LONE_CR = re.compile("\r(?!\n)")
_NOT_LIBYAML = re.compile(f"{_NOT_LIBYAML_CHAR.pattern}|{_LONE_CR.pattern}")


@dataclass(frozen=True, slots=True)
class Swap:
    """A text with what libyaml mishandles swapped for private-use stand-ins, and the tables that undo it.

    `as_escape` undoes the swap in double-quoted scalars, where a surrogate escape such as
    `\\ud83d` is an escape (JS reads it as a UTF-16 code unit); `as_text` everywhere else.
    """

    text: str
    as_text: dict[int, str]
    as_escape: dict[int, str]

    @classmethod
    def of(cls, text: str) -> Swap | None:
        """The swap for `text`, or None if libyaml can read it as it is."""
        if (
            _NOT_LIBYAML_CHAR.search(text)
            or ("\r" in text and _LONE_CR.search(text))
            or ("\\u" in text and _SURROGATE_ESCAPE.search(text))
        ):
            return cls(*_swap_out(text))
        return None

    def restore(self, value: str, *, double_quoted: bool) -> str:
        """A scalar's value with the stand-ins given back; in double quotes a surrogate pair becomes one character."""
        if not double_quoted:
            return value.translate(self.as_text)
        value = value.translate(self.as_escape)
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _swap_out(text: str) -> tuple[str, dict[int, str], dict[int, str]]:
    """Replace what libyaml mishandles with unused private-use characters; return the text and both undo tables."""
    used = set(text)  # a stand-in must be no character of the text, written out or as an escape
    used.update(chr(int(code, 16)) for pair in _UNICODE_ESCAPE.findall(text) for code in pair if code)
    spare = (
        chr(code)
        for block in (range(0xE000, 0xF900), range(0xF0000, 0xFFFFE), range(0x100000, 0x10FFFE))
        for code in block
        if chr(code) not in used
    )
    as_text: dict[int, str] = {}
    as_escape: dict[int, str] = {}
    forward: dict[str, str] = {}
    for char in set(_NOT_LIBYAML.findall(text)):
        stand_in = forward[char] = next(spare)
        as_text[ord(stand_in)] = as_escape[ord(stand_in)] = char
    if forward:
        text = _NOT_LIBYAML.sub(lambda m: forward[m.group()], text)
    if "\\u" in text:
        escapes: dict[str, str] = {}
        for match in _SURROGATE_ESCAPE.finditer(text):
            escape = match.group(2)
            if escape not in escapes:
                stand_in = escapes[escape] = next(spare)
                as_text[ord(stand_in)] = escape
                as_escape[ord(stand_in)] = chr(int(escape[2:], 16))
        if escapes:
            text = _SURROGATE_ESCAPE.sub(lambda m: m.group(1) + escapes[m.group(2)], text)
    return text, as_text, as_escape


# How to fix libyaml's most common complaints (checked in order; the first match wins).
_SYNTAX_HINTS = (
    ("mapping values are not allowed", "quote the value: it contains ': '"),
    ("cannot start any token", "quote the value, and indent with spaces, not tabs"),
    ("could not find expected ':'", "give each line a 'key: value' form or indent continuation lines"),
    ("incompatible YAML document", "remove the %YAML directive"),
    ("found unknown escape character", "escape the backslash as '\\\\' or use single quotes"),
    ("found unexpected end of stream", "close the quote or bracket"),
    ("expected <document start>", "remove the '...' line: it ends the YAML document"),
    ("did not find expected ',' or", "close the bracket, or quote values that contain ',', ']' or '}'"),
)
_SYNTAX_HINT = "check the indentation there, and quote values that contain ': ' or ' #' or start with a symbol"


def syntax_error(err: yaml.MarkedYAMLError, where: Where) -> FrontmatterError:
    """libyaml's complaint as a `yaml-syntax` error: what, where (line and column), and how to fix it."""
    mark = err.problem_mark or err.context_mark
    problem = err.problem or err.context or "invalid YAML"
    column = f" at column {mark.column + 1}" if mark is not None else ""  # the line is in `line`
    context = ""
    if err.context and err.problem:
        context = f" ({err.context}"
        if err.context_mark is not None:
            context += f" started at line {where.line(err.context_mark.line)}"
        context += ")"
    hint = next((hint for words, hint in _SYNTAX_HINTS if words in problem), _SYNTAX_HINT)
    return where.error(
        f"invalid YAML{column}: {problem}{context}; {hint}", "yaml-syntax", mark.line if mark is not None else None
    )
