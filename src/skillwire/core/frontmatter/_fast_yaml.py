"""Fast path for simple frontmatter: `key: value` lines and one nested level, read by one regex.

Nearly all SKILL.md frontmatter has this shape, and one regular expression over its lines is
several times faster than composing libyaml events. It must give exactly the general parser's
object or decline (None) and leave the text to it; every error is the general parser's to report.
tests/core/test_frontmatter_fast.py and tests/property/test_frontmatter_properties.py prove it.

    parse_simple("name: x\\nmetadata:\\n  version: '1.2'")   # {'name': 'x', 'metadata': {'version': '1.2'}}
    parse_simple("name: x # comment")                        # None: the composer decides
"""

from __future__ import annotations

import math
import re
from sys import intern

from skillwire.core.frontmatter._resolve import CORE_FIRST, JSONValue, integral_as_int, resolve_plain

# The fast path's lines. A non-empty line of a trivially simple frontmatter gives groups 1-4:
# indentation, key, and the value if any, as a plain scalar or a quoted one with its quotes.
# The key is short enough to be an implicit key (libyaml allows 1024 characters). A plain
# value starts with no indicator ('-' only before a digit or '.', as in -1 and -.5), holds
# no '#' or ': ' and ends in neither ':' nor a space. A quoted value holds no '#', no quote
# of its kind, and no backslash. Any other line gives group 5. Tabs, CR and non-printable
# characters pass here: `parse_simple` refuses them with `str.isprintable`.
_SIMPLE_LINES = re.compile(
    r"^(?:( *)([A-Za-z_][A-Za-z0-9_.-]{0,127}):(?: +(?:"
    r"((?:[^-?:,\[\]{}#&*!|>'\"%@` \n]|-[0-9.])[^#:\n]*(?::+[^ #:\n][^#:\n]*)*(?<! ))"
    r"|('[^'#\n]*'|\"[^\"\\#\n]*\")"
    r"))?|(.+))$",
    re.MULTILINE,
)


_SHARED_UP_TO = 40
"""Keys, and string values up to this long (a license, a version, an owner), are interned: 100,000 skills' frontmatter
then shares one `name` key and one `MIT` instead of holding a copy each (about 60 bytes per skill file)."""


def parse_simple(text: str) -> dict[str, JSONValue] | None:
    """The JSON object of a trivially simple YAML text (no BOM), or None to leave it to the composer."""
    if not text.replace("\n", "").isprintable():
        return None
    result: dict[str, JSONValue] = {}
    nested: dict[str, JSONValue] | None = None  # the mapping that indented lines go into
    opener = ""  # the last top-level key if it has no value: indented lines below are its mapping
    indent = 0
    for spaces, key, plain, quoted, other in _SIMPLE_LINES.findall(text):
        if other or (key[0] in CORE_FIRST and type(resolve_plain(key)) is not str):  # `null:`, `True:`
            return None
        value: JSONValue = None
        if plain:
            value = resolve_plain(plain)
            if type(value) is float:
                if not math.isfinite(value):  # the composer reports it
                    return None
                value = integral_as_int(value)
        elif quoted:
            value = quoted[1:-1]
        if spaces:
            if nested is None:
                if not opener:  # the continuation of a value, or an indented first line
                    return None
                nested = result[opener] = {}
                indent = len(spaces)
            elif len(spaces) != indent:
                return None
            opener = ""
            target = nested
        else:
            nested = None
            opener = "" if plain or quoted else key
            target = result
        if key in target:
            return None
        if type(value) is str and len(value) <= _SHARED_UP_TO:
            value = intern(value)
        target[intern(key)] = value
    return result or None
