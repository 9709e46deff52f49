"""Security gates a host applies to MCP-served skills: origin tags, permission fields, display hygiene.

Security Considerations: content "MUST [be tagged] with its originating server
identity at the point it enters model context"; frontmatter fields that widen
permissions (`allowed-tools`, hooks) "MUST be ignored for MCP-origin skills
unless the user has explicitly approved that grant for that skill". The host
acts on an allow-list (`SAFE_FIELDS`); any other field needs a grant.

    effective_frontmatter(fm, grants=frozenset())   # only SAFE_FIELDS kept
    tag_for_model(key, uri, text)                   # text wrapped with its origin
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from urllib.parse import quote

from skillwire.core.display import HIDDEN, INVISIBLE, LAYOUT, clip
from skillwire.core.hosting.approvals import SAFE_FIELDS
from skillwire.core.hosting.entry import SkillEntry
from skillwire.core.hosting.registry import SkillKey

# What a reader might skip over inside a closing tag: whitespace and invisible characters.
_GAP = f"[\\s{INVISIBLE}]*"
_CLOSING = re.compile(f"<{_GAP}/{_GAP}skill-content", re.IGNORECASE)
_OPENING = re.compile(f"<{_GAP}skill-content", re.IGNORECASE)
# Layout characters become spaces, so a catalog line stays one line (the other hidden characters are dropped).
_BREAKS = str.maketrans(dict.fromkeys(LAYOUT, " "))
# What a URI may not hold literally (quotes, <, >, spaces, controls, non-ASCII) is %-encoded in a tag attribute.
_URI_SAFE = "!#$%&'()*+,/:;=?@[]~"


def effective_frontmatter(frontmatter: Mapping[str, object], grants: frozenset[str]) -> dict[str, object]:
    """The frontmatter the host acts on: the fields of `SAFE_FIELDS`, and any other only where the user granted it."""
    return {k: v for k, v in frontmatter.items() if k in SAFE_FIELDS or k in grants}


def display_text(text: str, *, limit: int = 1024) -> str:
    """Text safe to show in a catalog: no control, zero-width or bidi characters, one line, bounded."""
    # The character classes are display.py's, where a terminal shows the same characters as escapes instead.
    return clip(HIDDEN.sub("", unicodedata.normalize("NFC", text)).translate(_BREAKS), limit)


def origin_tag(key: SkillKey) -> str:
    """How a skill's origin is named to the model: server label and uri, marked as MCP-served."""
    return f"mcp-server {key.origin!r}, {key.uri}"


def tag_for_model(key: SkillKey, uri: str, text: str) -> str:
    """Wrap content with its origin, so the model never mistakes it for a local skill or for user text."""
    # The content can neither close its own wrapper nor open a fake one claiming another origin.
    body = _OPENING.sub("&lt;skill-content", _CLOSING.sub("&lt;/skill-content", text))
    # Nor can a server-chosen URI: a quote, '>' or newline in it would otherwise end the attribute or the tag.
    origin, skill, resource = (quote(v, safe=_URI_SAFE) for v in (key.origin, key.uri, uri))
    return (
        f'<skill-content origin="mcp:{origin}" skill="{skill}" resource="{resource}" trust="untrusted">\n'
        f"{body}\n</skill-content>"
    )


def declined_reason(entry: SkillEntry | None, *, allow_dynamic: bool) -> str | None:
    """Why the host will not load a listed skill (over the spec's limits, or dynamic when that is not allowed), or None.

    A host's own skill (no entry) is never declined here: it is read from its folder, not loaded over MCP.
    """
    if entry is None:
        return None
    over = entry.over_limits()
    if over is not None:
        return f"not loadable: {over}"
    if entry.is_dynamic and not allow_dynamic:
        return "not loadable: its content is dynamic, so it cannot be verified or content-bound"
    return None
