"""Fast path for finding the frontmatter block: the result of `FRONTMATTER_BLOCK.match`, without its lazy scan.

The expression's lazy group tries the closing line at every character of the file; a search that
starts with the closing line's literal line break and dashes finds the same first one. It must
give exactly what the expression gives, for any text: tests/core/test_frontmatter_fast_block.py and
tests/property/test_frontmatter_properties.py prove it.

    frontmatter_block("---\\nname: x\\n---\\nbody")   # ('name: x', 13): the YAML and where the body starts
    frontmatter_block("name: x")                     # None: no opening line
"""

from __future__ import annotations

import re

# FRONTMATTER_BLOCK's closing line: a line of `---` plus optional spaces/tabs.
_CLOSING_LINE = re.compile(r"\n---[ \t]*(?:\r?\n|\Z)")


def frontmatter_block(text: str) -> tuple[str, int] | None:
    """`FRONTMATTER_BLOCK.match(text)` as (group 1, end of the match), or None."""
    if text.startswith("---\n"):
        start = 4
    elif text.startswith("---\r\n"):
        start = 5
    else:
        return None
    closing = _CLOSING_LINE.search(text, start)
    if closing is None:
        return None
    end = closing.start()
    if text[end - 1] == "\r":  # a CRLF before the closing line
        end -= 1
    return text[start:end], closing.end()
