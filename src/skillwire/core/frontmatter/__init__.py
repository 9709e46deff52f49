"""SKILL.md frontmatter: the one YAML-to-JSON rendering used by server, host and validator.

Spec, Frontmatter: "frontmatter is the skill's SKILL.md YAML frontmatter rendered
verbatim as a JSON object." and "The frontmatter object MUST be identical in content
to the frontmatter of the SKILL.md it describes." Spec, Frontmatter Verification:
hosts "MUST parse its YAML frontmatter and compare it field-by-field against the
entry's frontmatter" (`frontmatter_differences`).

    parsed = parse_skill_md(Path("SKILL.md").read_bytes())
    parsed.frontmatter            # {'name': 'pdf-processing', 'description': '...'}
    frontmatter_differences(entry["frontmatter"], parsed.frontmatter)   # () when identical

Why skillwire parses YAML itself instead of calling `yaml.safe_load`: a JavaScript host (and
the official conformance suite) renders the same text with the `yaml` package v2,
`YAML.parse(text)`: YAML 1.2, core schema. PyYAML resolves YAML 1.1 (`yes`/`on` are booleans,
`0755` is octal, `1:30` is 90, dates become `date` objects, `<<` merges). If server and host
rendered differently, every such skill would fail frontmatter verification. The package, one
seam per module:

    _extract      the frontmatter block of SKILL.md bytes, or why there is none
    _fast_block   fast path: the same block without the expression's lazy scan
    _fast_yaml    fast path: `key: value` lines (nearly all frontmatter) by one regex
    _compose      the general parser: libyaml events to JSON, as yaml v2's compose + toJS
    _nodes        its anchors (alias limit) and open collections
    _libyaml      libyaml as a YAML 1.2 event source: swapped characters, readable errors
    _strict       YAML 1.2 rules libyaml does not enforce and JS does
    _resolve      YAML 1.2 core-schema scalars as JavaScript values
    _compare      the field-by-field comparison hosts must make

Each fast path gives exactly the general path's answer or declines; a test beside it proves it.

Deliberate differences from `YAML.parse`, each an error where JS returns data
(tests/core/test_frontmatter_parity.py checks everything else against the real JS package):

* Data without a faithful JSON form: NaN and +-Infinity values, recursive aliases,
  collection keys (JS turns `[1]: a` into the key "[ 1 ]"), two keys that JS turns
  into one property (`1:` and `"1":`; JS silently keeps the last), half a UTF-16
  character (`"\\ud83d"`), and the YAML 1.1 types !!binary, !!timestamp, !!merge, !!omap,
  !!pairs, !!set (JS gives Uint8Array, Date, Map, Set, or for !!pairs a list of one-key objects).
* A `%YAML 1.1` directive (JS then switches to YAML 1.1 rules) is refused.
* Collections nested more than MAX_DEPTH (64) levels deep, aliases expanded, are refused
  (`yaml-too-deep`): no JSON-RPC message could carry them.
* libyaml itself rejects a few inputs JS accepts: an empty implicit key (`: x`), a
  line holding only tabs, a tag directly before `]` or `}`, `&anchor:` as a key.

Numbers are JavaScript numbers: every integer or float becomes the nearest IEEE
double (so 9007199254740993 is 9007199254740992), and a double that JavaScript's
JSON.stringify prints as an integer (integral, magnitude below 1e21: `1.0`, `1e3`)
is returned as a Python `int`; other doubles are `float`. Key order is the YAML order
(a JS object lists integer-like keys first; JSON objects are unordered anyway).
"""

from __future__ import annotations

from dataclasses import dataclass

from skillwire.core.frontmatter._compare import frontmatter_differences
from skillwire.core.frontmatter._compose import MAX_ALIAS_COUNT as MAX_ALIAS_COUNT
from skillwire.core.frontmatter._compose import MAX_DEPTH as MAX_DEPTH
from skillwire.core.frontmatter._compose import parse_full
from skillwire.core.frontmatter._extract import FRONTMATTER_BLOCK as FRONTMATTER_BLOCK
from skillwire.core.frontmatter._extract import decode_skill_md, extract_block
from skillwire.core.frontmatter._fast_yaml import parse_simple
from skillwire.core.frontmatter._libyaml import USING_LIBYAML as USING_LIBYAML
from skillwire.core.frontmatter._resolve import JSONValue

# Beside `__all__`, importable from here as before the split: FRONTMATTER_BLOCK (the linter's extraction
# expression), MAX_ALIAS_COUNT and MAX_DEPTH (the limits), USING_LIBYAML (which parser runs).
__all__ = [
    "JSONValue",
    "ParsedSkillFile",
    "frontmatter_differences",
    "parse_skill_md",
    "parse_yaml_mapping",
]


@dataclass(frozen=True)
class ParsedSkillFile:
    """A SKILL.md split into its frontmatter (as a JSON object) and its markdown body."""

    frontmatter: dict[str, JSONValue]
    body: str  # the text after the closing `---` line
    frontmatter_start_line: int  # 1-based line of the first YAML line


def parse_skill_md(raw: bytes, *, path: str = "SKILL.md") -> ParsedSkillFile:
    """Split a SKILL.md file (raw bytes) into its frontmatter JSON object and body.

    Spec, Skill Format: "SKILL.md MUST begin with YAML frontmatter". Raises
    `FrontmatterError` (rule `not-utf8`, `frontmatter-missing`, `frontmatter-unterminated`,
    `frontmatter-empty`, or any rule of `parse_yaml_mapping`) with the 1-based line.
    """
    text = decode_skill_md(bytes(raw), path=path)
    yaml_text, body_start = extract_block(text, path=path)
    frontmatter = parse_yaml_mapping(yaml_text, path=path, first_line=2)
    return ParsedSkillFile(frontmatter=frontmatter, body=text[body_start:], frontmatter_start_line=2)


def parse_yaml_mapping(text: str, *, path: str = "SKILL.md", first_line: int = 1) -> dict[str, JSONValue]:
    """Render YAML `text` (the frontmatter, without `---` lines) as a JSON object.

    Gives the same object as JavaScript's `YAML.parse(text)` (yaml v2, YAML 1.2 core
    schema). `first_line` is the file line of the text's first line, used in errors.
    Raises `FrontmatterError` with rule `yaml-syntax`, `yaml-duplicate-key`, `yaml-not-json`,
    `yaml-alias-limit`, `yaml-too-deep`, `yaml-surrogate`, `frontmatter-empty` or `frontmatter-not-mapping`.
    """
    text = text.removeprefix("\ufeff")
    return parse_simple(text) or parse_full(text, path=path, first_line=first_line)
