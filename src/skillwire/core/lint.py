"""Portability warnings for a SKILL.md: things that are served, but that another host may read differently.

Pure: it takes the bytes of one SKILL.md and returns warnings; it reads no files. The hard
rules (what the server refuses) are not here: they live in the core (`skill_rules`, `frontmatter`,
`names`, `fields`), which every source applies, and `skillwire validate` runs that code.
What is here is the gap between YAML 1.1 parsers (PyYAML, many Python hosts) and YAML 1.2
parsers (JavaScript `yaml`, which `skillwire.core.frontmatter` matches), and other traps:

* `yes`/`no`/`on`/`off`/`y`/`n` are booleans in YAML 1.1 and strings in 1.2;
* `0755` is octal in 1.1 and decimal in 1.2; `1:30` is 90 in 1.1; `1_000`, `0b101` are
  numbers only in 1.1; `0o17` and `1e3` are numbers only in 1.2; `2024-01-31` is a date in 1.1;
* `<<` merges mappings in 1.1 and is an ordinary key in 1.2;
* integers beyond 2^53 lose precision in JavaScript;
* `[a: b]` silently makes a one-field mapping; ` #` silently ends a plain value (a comment);
* `allowed-tools` written as a list (the Agent Skills text first allowed only a space-delimited string);
* CRLF line endings and a byte order mark; descriptions near the 1024 limit, or over it
  when counted in UTF-16 code units as JavaScript does;
* and, over a whole listing, two skills with one name (`duplicate_name_warnings`).

    for w in lint_skill_md(Path("SKILL.md").read_bytes(), path="pdf/SKILL.md"):
        print(w)        # pdf/SKILL.md:3:10: 'yes' is true in YAML 1.1 ... [yaml11-bool] fix: write 'yes' in quotes
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import yaml
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from skillwire.core.errors import FrontmatterError
from skillwire.core.frontmatter import (
    FRONTMATTER_BLOCK,  # the one extraction expression, not a copy
    parse_skill_md,
)
from skillwire.core.names import MAX_DESCRIPTION_LENGTH

if TYPE_CHECKING:
    from skillwire.core.catalog import Catalog

__all__ = [
    "DESCRIPTION_NEAR_LIMIT",
    "DUPLICATE_NAME",
    "RULES",
    "LintWarning",
    "duplicate_name_warnings",
    "lint_skill_md",
]

DUPLICATE_NAME = "duplicate-name"  # a warning: the spec allows it, hosts that key skills by name do not

DESCRIPTION_NEAR_LIMIT = 900  # characters: warn before the 1024 limit is reached
JS_SAFE_INTEGER = 2**53 - 1  # Number.MAX_SAFE_INTEGER

try:
    _Loader: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader


@dataclass(frozen=True, slots=True)
class LintWarning:
    """A portability problem: where (file, 1-based line and column), which rule, what happens, how to fix it."""

    path: str
    line: int | None
    column: int | None
    rule: str
    message: str
    fix: str

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message} [{self.rule}] fix: {self.fix}"


# Plain scalars that YAML 1.1 (PyYAML's resolvers) and YAML 1.2 core (JS `yaml`) type differently.
# (rule, pattern, what 1.1 does, what 1.2 does)
_TRAPS: tuple[tuple[str, re.Pattern[str], str, str], ...] = (
    ("yaml11-bool", re.compile(r"y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF"), "a boolean", "the string"),
    ("yaml11-octal", re.compile(r"[-+]?0[0-9_]+"), "an octal number (or a string)", "the decimal number"),
    (
        "yaml11-sexagesimal",
        re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?"),
        "a base-60 number",
        "the string",
    ),
    ("yaml11-number", re.compile(r"[-+]?(?:0b[01_]+|[0-9][0-9_]*_[0-9_]*(?:\.[0-9_]*)?)"), "a number", "the string"),
    ("yaml12-number", re.compile(r"0o[0-7]+|[-+]?[0-9]+[eE][-+]?[0-9]+"), "a string", "a number"),
    (
        "yaml11-date",
        re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}.*)?"),
        "a date",
        "the string",
    ),
)
RULES = frozenset(
    {
        "bom",
        "crlf",
        "colon-in-value",
        "yaml11-merge",
        "integer-precision",
        "comment-cuts-value",
        "description-utf16",
        "description-near-limit",
        "allowed-tools-list",
        *(rule for rule, *_ in _TRAPS),
    }
)
"""Every rule `lint_skill_md` may warn by (a `--strict-portable` refusal carries one of them)."""
_INTEGER = re.compile(r"[-+]?[0-9]+")
_NODE_EVENTS = (ScalarEvent, AliasEvent, MappingStartEvent, SequenceStartEvent)


def lint_skill_md(raw: bytes, *, path: str = "SKILL.md") -> list[LintWarning]:
    """Every portability warning for one SKILL.md (raw bytes), in file order. Never raises on bad input."""
    out: list[LintWarning] = []
    if raw.startswith(b"\xef\xbb\xbf"):
        out.append(
            LintWarning(
                path,
                1,
                1,
                "bom",
                "file starts with a byte order mark; some hosts then find no frontmatter",
                "save the file as UTF-8 without BOM",
            )
        )
    if b"\r\n" in raw:
        first = raw[: raw.index(b"\r\n")].count(b"\n") + 1
        out.append(
            LintWarning(
                path,
                first,
                None,
                "crlf",
                "file has CRLF (Windows) line endings; hosts that split on '\\n' keep a '\\r' in every value",
                "convert to LF line endings (git config core.autocrlf input, or dos2unix)",
            )
        )
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return out  # a refusal (not-utf8), reported by the scan
    match = FRONTMATTER_BLOCK.match(text)
    if match is None:
        return out
    block = match.group(1)
    out.extend(_yaml_warnings(block, path, first_line=2))
    try:
        parsed = parse_skill_md(raw, path=path)
    except FrontmatterError:
        return out
    description = parsed.frontmatter.get("description")
    if isinstance(description, str):
        out.extend(_description_warnings(description, block, path))
    tools = parsed.frontmatter.get("allowed-tools")
    if isinstance(tools, list):
        names = [t for t in tools if isinstance(t, str)]
        if len(names) == len(tools):  # other shapes are refused (`fields.py`)
            out.append(_allowed_tools_list(names, block, path))
    return out


def duplicate_name_warnings(catalog: Catalog, shown: Callable[[str], str] = str) -> list[LintWarning]:
    """One warning per name that several of `catalog`'s skills share, naming each one's SKILL.md by `shown(uri)`.

    The spec allows it (skills are told apart by path), but a host that keys skills by name sees only one of
    them: a skillwire choice to warn (issue 11). `shown`: how to name a skill to the reader (its URI by default;
    `validate` and `serve` name the path as it was given, so two skills reached through a link are two paths).
    """
    out = []
    for name, uris in catalog.duplicate_names().items():
        paths = [shown(uri) for uri in uris]
        out.append(
            LintWarning(
                path=paths[0],
                line=None,
                column=None,
                rule=DUPLICATE_NAME,
                message=f"the name '{name}' is used by {len(paths)} skills: {', '.join(paths)}; "
                "a host that keys skills by name sees only one",
                fix="rename all but one of them (the folder and its 'name'), or serve them from separate servers",
            )
        )
    return out


def _yaml_warnings(block: str, path: str, *, first_line: int) -> list[LintWarning]:
    out: list[LintWarning] = []
    lines = block.split("\n")
    try:
        events = list(yaml.parse(block, Loader=_Loader))
    except yaml.YAMLError:
        return out  # a refusal (yaml-syntax), reported by the scan
    # Per open collection: None for a sequence; for a mapping, whether its next node is a key.
    stack: list[bool | None] = []
    for event in events:
        is_key = bool(stack) and stack[-1] is True
        if stack and stack[-1] is not None and isinstance(event, _NODE_EVENTS):
            stack[-1] = not stack[-1]
        if isinstance(event, MappingStartEvent):
            if event.flow_style and stack and stack[-1] is None and not _starts_with(lines, event, "{"):
                out.append(
                    _at(
                        (path, first_line),
                        event,
                        "colon-in-value",
                        "': ' inside [...] makes a one-field mapping, not the text you wrote",
                        "quote the item: ['a: b']",
                    )
                )
            stack.append(True)
            continue
        if isinstance(event, SequenceStartEvent):
            stack.append(None)
            continue
        if isinstance(event, MappingEndEvent | SequenceEndEvent):
            stack.pop()
            continue
        if not isinstance(event, ScalarEvent) or event.style or event.tag:
            continue
        value = event.value
        quoted = _quote(value)
        if is_key and value == "<<":
            out.append(
                _at(
                    (path, first_line),
                    event,
                    "yaml11-merge",
                    "'<<' merges a mapping in YAML 1.1 (PyYAML); YAML 1.2 (JavaScript) reads a field named '<<'",
                    "write the fields out instead of merging",
                )
            )
            continue
        for rule, pattern, v11, v12 in _TRAPS:
            if pattern.fullmatch(value):
                out.append(
                    _at(
                        (path, first_line),
                        event,
                        rule,
                        f"{value!r} is {v11} in YAML 1.1 (PyYAML) but {v12} in YAML 1.2 (JavaScript)",
                        f"write it in quotes: {quoted}"
                        + (" (or true/false for a boolean)" if rule == "yaml11-bool" else ""),
                    )
                )
                break
        if _INTEGER.fullmatch(value) and abs(int(value)) > JS_SAFE_INTEGER:
            out.append(
                _at(
                    (path, first_line),
                    event,
                    "integer-precision",
                    f"{value} is beyond 2^53: JavaScript (and the served JSON) rounds it to {int(float(value))}",
                    f"write it in quotes: {quoted}",
                )
            )
        end = event.end_mark
        if end is not None and end.line < len(lines):
            rest = lines[end.line][end.column :]
            if re.match(r"[ \t]+#", rest) and not is_key:
                out.append(
                    _at(
                        (path, first_line),
                        event,
                        "comment-cuts-value",
                        f"' #' starts a comment: the value ends at {value[-30:]!r}, dropping {rest.strip()[:40]!r}",
                        "quote the whole value, or remove the space before '#'",
                    )
                )
    return out


def _description_warnings(description: str, block: str, path: str) -> list[LintWarning]:
    line = _field_line(block, "description")
    length = len(description)
    utf16 = len(description.encode("utf-16-le")) // 2
    if length > MAX_DESCRIPTION_LENGTH:
        return []  # refused (description-format), reported by the scan
    if utf16 > MAX_DESCRIPTION_LENGTH:
        return [
            LintWarning(
                path,
                line,
                None,
                "description-utf16",
                f"description is {length} characters but {utf16} UTF-16 code units; "
                f"a JavaScript host counting .length finds it over the {MAX_DESCRIPTION_LENGTH} limit",
                "shorten it, or use fewer emoji and other characters outside the BMP",
            )
        ]
    if length >= DESCRIPTION_NEAR_LIMIT:
        return [
            LintWarning(
                path,
                line,
                None,
                "description-near-limit",
                f"description is {length} characters, near the {MAX_DESCRIPTION_LENGTH} limit",
                "shorten it: say what the skill does and when to use it; move detail into the body",
            )
        ]
    return []


def _allowed_tools_list(tools: list[str], block: str, path: str) -> LintWarning:
    """Agent Skills, `allowed-tools`: "Accepts either: A space-delimited string; A YAML sequence of strings" now,
    "A space-delimited list of tools" before: a list is served, but a host written to the earlier text may refuse it."""
    joined = " ".join(tools)
    shown = joined if len(joined) <= 60 else joined[:60] + "..."
    return LintWarning(
        path,
        _field_line(block, "allowed-tools"),
        None,
        "allowed-tools-list",
        "allowed-tools is a YAML list; the Agent Skills spec accepts that only since a later revision, "
        "and hosts that expect its space-delimited string may reject or misread it",
        f"write it as one string: allowed-tools: {shown}",
    )


def _field_line(block: str, key: str) -> int | None:
    for index, line in enumerate(block.split("\n")):
        if re.match(rf"{key}[ \t]*:", line):
            return index + 2
    return None


def _starts_with(lines: list[str], event: MappingStartEvent, char: str) -> bool:
    mark = event.start_mark
    return mark is not None and mark.line < len(lines) and lines[mark.line][mark.column : mark.column + 1] == char


def _at(
    where: tuple[str, int], event: ScalarEvent | MappingStartEvent, rule: str, message: str, fix: str
) -> LintWarning:
    """A warning at `event`; `where` is the file and the file line of the frontmatter's first line."""
    path, first_line = where
    mark = event.start_mark
    line = first_line + mark.line if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    return LintWarning(path, line, column, rule, message, fix)


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
