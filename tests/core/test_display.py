"""Terminal-safe text (skillwire choice, issue 9 hole 8): every hostile character shown as a visible escape.

The table is the attack catalogue: escape sequences that retitle the window, clear the screen or
write the clipboard; C1 controls; bidi overrides; invisible characters; bytes that were not UTF-8.
Each must come out as an escape a person can see, never raw and never silently dropped.
"""

from __future__ import annotations

import json
import re
import unicodedata

import pytest

from skillwire.core.display import HIDDEN, INVISIBLE, clip, json_for_terminal, terminal_safe
from skillwire.core.hosting.policy import display_text

# Categories that a terminal acts on or shows as nothing: controls, format characters, surrogates, line separators.
UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}
ALL_CODE_POINTS = "".join(map(chr, range(0x110000)))

HOSTILE = [
    ("\x1b]0;owned\x07", r"\x1b]0;owned\x07"),  # OSC 0: retitle the window
    ("\x1b[2J", r"\x1b[2J"),  # CSI 2J: clear the screen
    ("\x1b]52;c;Y3VybA==\x07", r"\x1b]52;c;Y3VybA==\x07"),  # OSC 52: write the clipboard
    ("\x1bP+q\x1b\\", r"\x1bP+q\x1b" + "\\"),  # DCS ... ST (the backslash after ESC is the string terminator)
    ("\x9b2J", r"\u009b2J"),  # C1 CSI: clears the screen on terminals that read 8-bit controls
    ("\x9d0;owned\x9c", r"\u009d0;owned\u009c"),  # C1 OSC ... ST
    ("a\x85b", r"a\u0085b"),  # C1 next line
    ("\x00\x07\x08\x7f", r"\x00\x07\x08\x7f"),  # NUL, bell, backspace (overwrites), DEL
    ("invoice\u202efdp.exe", r"invoice\u202efdp.exe"),  # right-to-left override: reads "invoiceexe.pdf"
    ("\u202a\u202b\u202c\u202d", r"\u202a\u202b\u202c\u202d"),  # bidi embeddings and overrides
    ("\u2066\u2067\u2068\u2069", r"\u2066\u2067\u2068\u2069"),  # bidi isolates
    ("\u200e\u200f\u061c", r"\u200e\u200f\u061c"),  # bidi marks
    ("pdf\u200b", r"pdf\u200b"),  # zero-width space: a look-alike of "pdf"
    ("\u200c\u200d\u2060\u2064\ufeff\u00ad", r"\u200c\u200d\u2060\u2064\ufeff\u00ad"),  # other invisibles
    ("ok\U000e0041\U000e007f", r"ok\U000e0041\U000e007f"),  # tag characters: invisible ASCII
    ("a\u2028b\u2029c", r"a\u2028b\u2029c"),  # line and paragraph separators
    ("bad\udcff.md", r"bad\xff.md"),  # a file name byte that was not UTF-8 (surrogate-escaped): the byte
    ("\udc80\udcc3", r"\x80\xc3"),
    ("\ud800", r"\ud800"),  # any other lone surrogate (JSON allows one)
    ("a\nb\tc\rd", r"a\nb\tc\rd"),  # one line: layout characters escaped too
    ("a\r\nb", r"a\r\nb"),
]

UNCHANGED = [
    "pdf-processing",
    "Extract, fill, and assemble PDF documents",
    "café, naïve, Ærø, 日本語, עברית, العربية",  # readable text in any script stays as it is
    "I \u2764\ufe0f PDFs \U0001f600",  # emoji and their variation selector
    "C:\\Users\\me\\skills",  # backslashes are left alone (see terminal_safe's docstring)
    "\u00a0non-breaking\u3000spaces",
]


@pytest.mark.parametrize(("text", "shown"), HOSTILE)
def test_hostile_characters_are_shown_as_visible_escapes(text: str, shown: str) -> None:
    """Each attack character comes out as a readable escape, in place, never raw and never dropped."""
    assert terminal_safe(text) == shown


@pytest.mark.parametrize("text", UNCHANGED)
def test_ordinary_text_is_unchanged(text: str) -> None:
    """Readable text in any script, emoji, spaces and backslashes pass as they are."""
    assert terminal_safe(text) == text
    assert terminal_safe(text, multiline=True) == text


@pytest.mark.parametrize(("text", "shown"), HOSTILE)
def test_escaping_is_idempotent(text: str, shown: str) -> None:
    """Text escaped once (in a message, then again by the log formatter or `say`) is not escaped twice."""
    assert terminal_safe(shown) == shown
    assert terminal_safe(shown, multiline=True) == shown


def test_multiline_keeps_newlines_tabs_and_crlf_and_escapes_the_rest() -> None:
    """Loaded content keeps its lines; a lone CR (which lets a line overwrite itself) and every escape are shown."""
    text = "# Title\r\n\n\tindented\nsafe\rEVIL\x1b]52;c;eA==\x07\u202e\u2028end"
    assert (
        terminal_safe(text, multiline=True)
        == "# Title\r\n\n\tindented\nsafe\\rEVIL\\x1b]52;c;eA==\\x07\\u202e\\u2028end"
    )


def test_no_code_point_that_a_terminal_acts_on_or_hides_survives() -> None:
    """Exhaustive: every control, format, surrogate and separator code point in Unicode comes out escaped."""
    for multiline in (False, True):
        shown = terminal_safe(ALL_CODE_POINTS, multiline=multiline)
        left = {c for c in shown if unicodedata.category(c) in UNSAFE_CATEGORIES}
        assert left <= ({"\n", "\t"} if multiline else set()), sorted(map(hex, map(ord, left)))


def test_every_unsafe_code_point_is_escaped_visibly() -> None:
    """No hostile character is dropped: each becomes a backslash escape that names it."""
    unsafe = [c for c in ALL_CODE_POINTS if unicodedata.category(c) in UNSAFE_CATEGORIES]
    invisible = re.compile(f"[{INVISIBLE}]")
    unsafe += [c for c in ALL_CODE_POINTS if invisible.fullmatch(c)]
    for char in unsafe:
        shown = terminal_safe(char)
        assert shown != char, hex(ord(char))
        assert re.fullmatch(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|[ntr])", shown), (hex(ord(char)), shown)


def test_display_text_and_terminal_safe_share_one_rule() -> None:
    """One rule in one place: what the model-facing catalog strips is exactly what a terminal shows escaped."""
    for char in ALL_CODE_POINTS:
        if HIDDEN.fullmatch(char):
            assert display_text(f"a{char}b") == "ab", hex(ord(char))
            assert terminal_safe(char) != char, hex(ord(char))


# -- JSON ------------------------------------------------------------------------------------------------------------

REPORT = {
    "name": "docs\x1b]0;owned\x07\x1b[2J\u202e",
    "version": "1.0\x9b31m\x7f",
    "paths": ["bad\udcff.md", "a\u2028b", "tag\U000e0041", "x\u200by"],
    "readable": "café 日本語 \u2764\ufe0f",
    "nested": {"k\u202e": [1, None, True]},
}


def test_json_for_terminal_is_exact_when_parsed() -> None:
    """JSON output stays exact: the same data after parsing, lone surrogates and astral characters included."""
    assert json.loads(json_for_terminal(REPORT)) == REPORT
    assert json.loads(json_for_terminal(REPORT, indent=None)) == REPORT


def test_json_for_terminal_escapes_c1_bidi_and_invisible_characters() -> None:
    """`ensure_ascii=False` let C1 controls and U+202E through raw; now they are \\uXXXX, readable text stays."""
    text = json_for_terminal(REPORT)
    assert not [c for c in text if unicodedata.category(c) in UNSAFE_CATEGORIES - {"Cc"} or c == "\x7f"]
    assert not [c for c in text if unicodedata.category(c) == "Cc" and c != "\n"]
    assert "\\u202e" in text
    assert "\\u009b" in text
    assert "\\udcff" in text
    assert "\\udb40\\udc41" in text  # an astral character as its UTF-16 pair
    assert "café 日本語 \u2764\ufe0f" in text


def test_clip_marks_a_cut() -> None:
    """skillwire choice: long values are cut with an ellipsis, so a person sees that text was left out."""
    assert clip("short", 5) == "short"
    assert clip("x" * 10, 5) == "xxxx…"
