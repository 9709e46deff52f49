"""Extraction: the frontmatter block of a SKILL.md file's bytes, or an error saying why there is none.

Spec, Skill Format: "SKILL.md MUST begin with YAML frontmatter". The conformance suite
(@modelcontextprotocol/conformance) extracts it with
  text.match(/^---\\r?\\n([\\s\\S]*?)\\r?\\n---[ \\t]*(?:\\r?\\n|$)/)   after dropping a BOM;
`FRONTMATTER_BLOCK` is the same expression, so both read the same YAML. Where the suite silently
gets no frontmatter, `extract_block` raises a `FrontmatterError` that says how to fix the file.

    text = decode_skill_md(raw, path="SKILL.md")     # UTF-8, BOM dropped
    yaml_text, body_start = extract_block(text, path="SKILL.md")
"""

from __future__ import annotations

import re
from typing import NoReturn

from skillwire.core.errors import FrontmatterError
from skillwire.core.frontmatter._fast_block import frontmatter_block

# The opening line is exactly `---` (CRLF allowed), the block ends at the first later line of
# `---` plus optional spaces/tabs. The general form of `frontmatter_block`; shared with the linter.
FRONTMATTER_BLOCK = re.compile(r"---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|\Z)")
_EMPTY_FRONTMATTER = re.compile(r"---\r?\n---[ \t]*(?:\r?\n|\Z)")


def decode_skill_md(raw: bytes, *, path: str) -> str:
    """The text of a SKILL.md without its BOM; `FrontmatterError` (rule `not-utf8`) at the first bad byte."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        column = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        raise FrontmatterError(
            f"file is not valid UTF-8 (byte 0x{raw[err.start]:02x} at column {column}); save it as UTF-8",
            rule="not-utf8",
            path=path,
            line=line,
        ) from None
    return text.removeprefix("\ufeff")


def extract_block(text: str, *, path: str) -> tuple[str, int]:
    """The YAML between the `---` lines and the index where the body starts, as `FRONTMATTER_BLOCK` finds them.

    Raises `FrontmatterError` with rule `frontmatter-missing`, `frontmatter-empty` or `frontmatter-unterminated`.
    """
    block = frontmatter_block(text)
    if block is None:
        _raise_extraction_error(text, path)
    return block


def _raise_extraction_error(text: str, path: str) -> NoReturn:
    """Say why `text` has no frontmatter block: no opening line, nothing inside, or no closing line."""
    first, newline, _ = text.partition("\n")
    first = first.removesuffix("\r")
    if first != "---":
        if first.strip() == "---":
            message = f"the first line must be exactly '---', found {first!r}; remove the spaces around it"
        elif not text.strip():
            message = "file is empty; start it with a '---' line, the YAML frontmatter, and another '---' line"
        else:
            message = (
                "file does not start with YAML frontmatter; make the first line '---', then the fields, then '---'"
            )
        raise FrontmatterError(message, rule="frontmatter-missing", path=path, line=1)
    if newline and _EMPTY_FRONTMATTER.match(text):
        raise FrontmatterError(
            "frontmatter is empty; add at least 'name' and 'description' between the '---' lines",
            rule="frontmatter-empty",
            path=path,
            line=2,
        )
    raise FrontmatterError(
        "frontmatter opened by '---' on line 1 is never closed; add a line '---' after the last field",
        rule="frontmatter-unterminated",
        path=path,
        line=1,
    )
