r"""Text from servers and files made safe to show: one set of character classes, for terminals and catalogs.

A skill name, a server's self-reported name, a URI or a file name is chosen by someone else. On a
terminal, ESC starts a sequence that can retitle the window (OSC 0), clear the screen (CSI 2J) or
write the clipboard (OSC 52); U+009B is a CSI by itself on some terminals; U+202E reverses what
follows; zero-width and tag characters hide text. `terminal_safe` shows every such character as a
visible escape, so a person sees that something is there; `json_for_terminal` does the same for JSON
without changing what it parses to. `host.policy.display_text` strips the same classes for the
model-facing catalog.

    terminal_safe("evil\x1b]0;owned\x07")        # 'evil\\x1b]0;owned\\x07'
    terminal_safe("line one\nline two", multiline=True)
    json_for_terminal({"name": "a\u202eb"})      # '{"name": "a\\u202eb"}' (same value when parsed)
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = [
    "CONTROLS",
    "HIDDEN",
    "INVISIBLE",
    "LAYOUT",
    "UNSAFE_IN_NAME",
    "clip",
    "json_for_terminal",
    "terminal_safe",
]

# -- the character classes (regex class bodies; one place for every display rule) -------------------------------------

CONTROLS: Final = "\x00-\x08\x0b-\x1f\x7f-\x9f"
"""C0 controls but tab and newline (ESC, the start of every escape sequence, is one), DEL, and C1 (U+009B is CSI)."""

INVISIBLE: Final = (
    # Every Unicode format character (category Cf), as of Unicode 15:
    "\u00ad"  # soft hyphen
    "\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2"  # prepended concatenation marks (Arabic, Syriac)
    "\u061c"  # Arabic letter mark (a bidi mark)
    "\u180e"  # Mongolian vowel separator
    "\u200b-\u200f"  # zero-width space, non-joiner, joiner; left-to-right and right-to-left marks
    "\u202a-\u202e"  # bidi embeddings and overrides (U+202E reverses what follows)
    "\u2060-\u206f"  # word joiner, invisible operators, bidi isolates, deprecated format characters
    "\ufeff"  # zero-width no-break space (BOM)
    "\ufff9-\ufffb"  # interlinear annotation marks
    "\U000110bd\U000110cd"  # Kaithi number signs
    "\U00013430-\U0001343f"  # Egyptian hieroglyph format controls
    "\U0001bca0-\U0001bca3"  # shorthand format controls
    "\U0001d173-\U0001d17a"  # musical symbol format controls
    # Other default-ignorable characters that render as nothing:
    "\u034f"  # combining grapheme joiner
    "\u115f\u1160\u3164\uffa0"  # Hangul fillers
    "\u17b4\u17b5"  # Khmer inherent vowels
    "\U000e0000-\U000e0fff"  # tag characters (invisible ASCII: "ASCII smuggling"), variation selectors supplement
)
"""Characters that show as nothing or reorder what follows. Variation selectors U+FE00-FE0F stay: emoji need them."""

LAYOUT: Final = "\t\n\u2028\u2029"
"""Tab, newline, line and paragraph separators: they break a line or move the cursor, but hide nothing."""

HIDDEN: Final = re.compile(f"[{CONTROLS}{INVISIBLE}]")
"""One control or invisible character (tab and newline excluded: they are LAYOUT)."""

_SURROGATES = "\ud800-\udfff"  # lone surrogates: `os.fsdecode` turns each byte that is not UTF-8 into U+DC80-U+DCFF

UNSAFE_IN_NAME: Final = re.compile(f"[{CONTROLS}{INVISIBLE}{_SURROGATES}{LAYOUT}]")
"""One character no file name written for a person may hold: it hides, reorders, breaks a line or is not UTF-8."""
_MULTILINE = re.compile(f"(?!\r\n)[{CONTROLS}{INVISIBLE}{_SURROGATES}\u2028\u2029]")
_SINGLE_LINE = UNSAFE_IN_NAME
_JSON = re.compile(f"[{CONTROLS}{INVISIBLE}{_SURROGATES}\u2028\u2029]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def terminal_safe(text: str, *, multiline: bool = False) -> str:
    r"""`text` with every control, escape, bidi, invisible and undecodable character shown as a visible escape.

    `\x1b` for C0 controls and DEL, `\u009b` for C1, `\u202e` / `\U000e0041` for the rest, `\xff` for a byte that
    was not UTF-8 (a surrogate-escaped file name), `\n` `\t` `\r` by name. Nothing is dropped. `multiline` keeps
    newlines, tabs and CRLF line ends (a CR directly before LF cannot overwrite anything); a lone CR is escaped.

    A literal backslash is left alone: it does nothing on a terminal, and leaving it makes the function idempotent,
    so text escaped earlier (a message quoting a name with `!r` or `unicode_escape`) is not escaped twice when a log
    line or `say` passes it through again. The price: `\x1b` typed literally looks like an escaped ESC. Where the
    exact characters matter, the JSON outputs give them.
    """
    pattern = _MULTILINE if multiline else _SINGLE_LINE
    return pattern.sub(_escape, text)


def json_for_terminal(value: Any, *, indent: int | None = 2) -> str:
    """`value` as JSON that is safe on a terminal and parses to exactly `value`.

    Readable non-ASCII text stays as is (unlike `ensure_ascii=True`); controls, bidi, invisible characters and
    lone surrogates become `\\uXXXX` escapes. They can only occur inside JSON strings, where such an escape means
    the same character.
    """
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    return _JSON.sub(_json_escape, text)


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, ending in '…' when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x80:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the original byte
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON escapes an astral character as its UTF-16 surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
