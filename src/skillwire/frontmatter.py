"""SKILL.md frontmatter: the one YAML-to-JSON rendering used by server, host and validator.

Spec, Frontmatter: "frontmatter is the skill's SKILL.md YAML frontmatter rendered
verbatim as a JSON object." and "The frontmatter object MUST be identical in content
to the frontmatter of the SKILL.md it describes." Spec, Frontmatter Verification:
hosts "MUST parse its YAML frontmatter and compare it field-by-field against the
entry's frontmatter" (`frontmatter_differences`).

    parsed = parse_skill_md(Path("SKILL.md").read_bytes())
    parsed.frontmatter            # {'name': 'pdf-processing', 'description': '...'}
    frontmatter_differences(entry["frontmatter"], parsed.frontmatter)   # () when identical

Why this module parses YAML itself instead of calling `yaml.safe_load`:

* Parity. A JavaScript host (and the official conformance suite) renders the same
  text with the `yaml` package v2, `YAML.parse(text)`: YAML 1.2, core schema. PyYAML
  resolves YAML 1.1 (`yes`/`on` are booleans, `0755` is octal, `1:30` is 90, dates
  become `date` objects, `<<` merges). If server and host rendered differently, every
  such skill would fail frontmatter verification. So scalars are resolved here with the
  exact regular expressions of yaml v2's core schema, explicit tags follow its rules,
  keys are stringified as JavaScript does, and anchors/aliases follow its semantics
  (an anchor may be redefined; an alias counts against `maxAliasCount` = 100 as there).
* Speed. Scanning and parsing run in libyaml (`yaml.cyaml.CParser`); this module
  consumes its event stream and builds the JSON value in one pass. That is faster than
  libyaml's own composer plus PyYAML resolvers (which could not redefine anchors, as
  YAML and JS allow), and about 10x faster than the pure-Python `yaml.safe_load`. The
  pure-Python parser is used only if PyYAML was built without libyaml. Before any of
  that, the common shape (`key: value` lines, one level of nesting, unambiguous scalars)
  is read by one regular expression, about 5x faster, with the same result.
* libyaml is a YAML 1.1 parser, which treats NEL, LS, PS and a lone CR as line breaks
  and rejects control characters and `\\ud83d`-style surrogate escapes; YAML 1.2 and
  JS take them as ordinary content. They are swapped for unused private-use characters
  before parsing and swapped back in every string afterwards.
* libyaml is laxer than YAML 1.2 in places where JS is strict, so this module adds JS's
  checks: further lines of a quoted value or [...]/{...} must be indented more than the
  enclosing collection; a '#' comment must follow a blank; a `|`/`>` on its own line
  must be indented likewise; a lone `-` inside brackets, `*alias:` and `&anchor:` are
  refused. And as in JS, a block scalar that ends the text (as the last field of every
  SKILL.md does: the line break before `---` is not part of the YAML) keeps its break.

Deliberate differences from `YAML.parse`, each an error where JS returns data
(tests/test_frontmatter_parity.py checks everything else against the real JS package):

* Data without a faithful JSON form: NaN and +-Infinity values, recursive aliases,
  collection keys (JS turns `[1]: a` into the key "[ 1 ]"), two keys that JS turns
  into one property (`1:` and `"1":`; JS silently keeps the last), and the YAML 1.1
  types !!binary, !!timestamp, !!merge, !!omap, !!pairs, !!set (JS gives Uint8Array,
  Date, Map, Set, or for !!pairs a list of one-key objects).
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

import bisect
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import NoReturn, Protocol, TypeAlias, cast

import yaml
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from skillwire.errors import FrontmatterError

__all__ = [
    "JSONValue",
    "ParsedSkillFile",
    "frontmatter_differences",
    "parse_skill_md",
    "parse_yaml_mapping",
]

JSONValue: TypeAlias = bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"] | None


@dataclass(frozen=True)
class ParsedSkillFile:
    """A SKILL.md split into its frontmatter (as a JSON object) and its markdown body."""

    frontmatter: dict[str, JSONValue]
    body: str  # the text after the closing `---` line
    frontmatter_start_line: int  # 1-based line of the first YAML line


# --------------------------------------------------------------------------- parser


class _EventSource(Protocol):
    def get_event(self) -> Event | None: ...
    def dispose(self) -> None: ...


class _PurePythonParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    """PyYAML's pure-Python parser: used only when PyYAML lacks the libyaml extension."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


_new_parser: Callable[[str], _EventSource]
try:
    from yaml._yaml import CParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _new_parser = _PurePythonParser
    USING_LIBYAML = False
else:
    _new_parser = CParser
    USING_LIBYAML = True

# yaml v2 `toJS({maxAliasCount: 100})`: an alias resolution counts the anchor's uses
# times the aliases inside it; over 100 is refused as a resource-exhaustion attack.
MAX_ALIAS_COUNT = 100
# Deepest nesting of collections in the frontmatter value (its top mapping is level 1), aliases
# expanded. The MCP SDK reads a JSON-RPC message with at most 200 levels (pydantic-core) and the
# entry sits 4 levels down, and Python's own recursion limit is 1000: deeper frontmatter would
# parse here and then break skills/list for every skill on its page, or a host's comparison.
MAX_DEPTH = 64

# yaml v2 core schema (schema/core/*.js), in the order the tags are tried. The tests are
# mutually exclusive, so one alternation tells which tag a plain scalar resolves to.
_CORE = re.compile(
    r"(?P<null>~|[Nn]ull|NULL|)"  # nullTag (the empty plain scalar is null)
    r"|(?P<bool>[Tt]rue|TRUE|[Ff]alse|FALSE)"  # boolTag: no yes/no/on/off/y/n
    r"|(?P<oct>0o[0-7]+)"  # intOct: 0o17 (0755 is decimal 755)
    r"|(?P<int>[-+]?[0-9]+)"  # int: no 1_000, no 1:30
    r"|(?P<hex>0x[0-9a-fA-F]+)"  # intHex
    r"|(?P<special>[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)"  # floatNaN
    r"|(?P<exp>[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+)"  # floatExp
    r"|(?P<float>[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*))"  # float
)
_CORE_FIRST = frozenset("~nNtTfF0123456789+-.")
_YAML_TAG = "tag:yaml.org,2002:"
# An explicit core tag applies only if one of its own tests matches; otherwise JS
# warns "Unresolved tag" and keeps the string (`!!int 1.5` is "1.5", `!!float 1` is "1").
_TAG_GROUPS = {
    "null": ("null",),
    "bool": ("bool",),
    "int": ("oct", "int", "hex"),
    "float": ("special", "exp", "float"),
}
# YAML 1.1 types that JS builds as Uint8Array/Date/Symbol (scalars) or Map/Set/pairs.
_UNSUPPORTED_SCALAR_TAGS = frozenset(("binary", "timestamp", "merge"))
_UNSUPPORTED_COLLECTION_TAGS = {"omap": False, "pairs": False, "set": True}  # name -> is a mapping

# libyaml refuses `\\u` escapes of UTF-16 surrogates, which JS accepts (a pair is one
# character). Group 2 is such an escape if its backslash is not itself escaped.
_SURROGATE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)(\\u[dD][89a-fA-F][0-9a-fA-F]{2})")
# Characters that libyaml (YAML 1.1) rejects or reads as line breaks, but YAML 1.2 and
# JS read as ordinary content: C0/C1 controls, NEL, LS, PS, BOM, non-characters,
# surrogates, and a CR not followed by LF.
_NOT_LIBYAML_CHAR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
_LONE_CR = re.compile("\r(?!\n)")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_LIBYAML = re.compile(f"{_NOT_LIBYAML_CHAR.pattern}|{_LONE_CR.pattern}")

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

_QUOTED = frozenset(("'", '"'))  # the other styles: plain ('' or None), block ('|', '>')
_HASH_AFTER_TOKEN = re.compile(r"(?<=[^ \t\r\n])#")
_NODE_EVENTS = frozenset((ScalarEvent, AliasEvent, MappingStartEvent, SequenceStartEvent))
_AnyMark: TypeAlias = "yaml.error.Mark | yaml._yaml.Mark"

_Raw: TypeAlias = JSONValue  # a value before JSON checks: numbers may still be NaN/Infinity

# --------------------------------------------------------------------------- extraction

# The conformance suite (@modelcontextprotocol/conformance) extracts frontmatter with
#   text.match(/^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/)   after dropping a BOM.
# The same expression here: the opening line is exactly `---` (CRLF allowed), the block
# ends at the first later line of `---` plus optional spaces/tabs. Difference: where the
# suite silently gets no frontmatter, this module raises an error saying why.
# The frontmatter block as the conformance suite extracts it; shared with the linter.
FRONTMATTER_BLOCK = re.compile(r"---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|\Z)")
_EMPTY_FRONTMATTER = re.compile(r"---\r?\n---[ \t]*(?:\r?\n|\Z)")
# FRONTMATTER_BLOCK's closing line, found by `_frontmatter_block` without the lazy scan.
_CLOSING_LINE = re.compile(r"\n---[ \t]*(?:\r?\n|\Z)")


def parse_skill_md(raw: bytes, *, path: str = "SKILL.md") -> ParsedSkillFile:
    """Split a SKILL.md file (raw bytes) into its frontmatter JSON object and body.

    Spec, Skill Format: "SKILL.md MUST begin with YAML frontmatter". Raises
    `FrontmatterError` (rule `not-utf8`, `frontmatter-missing`, `frontmatter-unterminated`,
    `frontmatter-empty`, or any rule of `parse_yaml_mapping`) with the 1-based line.
    """
    raw = bytes(raw)
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
    if text.startswith("\ufeff"):
        text = text[1:]
    block = _frontmatter_block(text)
    if block is None:
        _raise_extraction_error(text, path)
    yaml_text, end = block
    frontmatter = parse_yaml_mapping(yaml_text, path=path, first_line=2)
    return ParsedSkillFile(frontmatter=frontmatter, body=text[end:], frontmatter_start_line=2)


def _frontmatter_block(text: str) -> tuple[str, int] | None:
    """`FRONTMATTER_BLOCK.match(text)` as (group 1, end of the match), or None, but faster.

    The expression's lazy group tries the closing line at every character; a search that
    starts with the closing line's literal line break and dashes finds the same first one.
    """
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


def _raise_extraction_error(text: str, path: str) -> NoReturn:
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


# --------------------------------------------------------------------------- YAML


def parse_yaml_mapping(text: str, *, path: str = "SKILL.md", first_line: int = 1) -> dict[str, JSONValue]:
    """Render YAML `text` (the frontmatter, without `---` lines) as a JSON object.

    Gives the same object as JavaScript's `YAML.parse(text)` (yaml v2, YAML 1.2 core
    schema). `first_line` is the file line of the text's first line, used in errors.
    Raises `FrontmatterError` with rule `yaml-syntax`, `yaml-duplicate-key`,
    `yaml-not-json`, `yaml-alias-limit`, `yaml-too-deep`, `frontmatter-empty` or `frontmatter-not-mapping`.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    simple = _parse_simple(text)
    if simple is not None:
        return simple
    return _parse_full(text, path=path, first_line=first_line)


# The fast path's lines. A non-empty line of a trivially simple frontmatter gives groups 1-4:
# indentation, key, and the value if any, as a plain scalar or a quoted one with its quotes.
# The key is short enough to be an implicit key (libyaml allows 1024 characters). A plain
# value starts with no indicator ('-' only before a digit or '.', as in -1 and -.5), holds
# no '#' or ': ' and ends in neither ':' nor a space. A quoted value holds no '#', no quote
# of its kind, and no backslash. Any other line gives group 5. Tabs, CR and non-printable
# characters pass here: `_parse_simple` refuses them with `str.isprintable`.
_SIMPLE_LINES = re.compile(
    r"^(?:( *)([A-Za-z_][A-Za-z0-9_.-]{0,127}):(?: +(?:"
    r"((?:[^-?:,\[\]{}#&*!|>'\"%@` \n]|-[0-9.])[^#:\n]*(?::+[^ #:\n][^#:\n]*)*(?<! ))"
    r"|('[^'#\n]*'|\"[^\"\\#\n]*\")"
    r"))?|(.+))$",
    re.MULTILINE,
)


def _parse_simple(text: str) -> dict[str, JSONValue] | None:
    """The JSON object of a trivially simple YAML text, or None to leave it to `_parse_full`.

    Nearly all frontmatter is `key: value` lines plus at most one level of nested ones;
    one regular expression over them is several times faster than composing libyaml events.
    The result is the one `_parse_full` gives (tests/test_frontmatter_fast.py compares them);
    anything less plain, and every error, returns None.
    """
    if not text.replace("\n", "").isprintable():
        return None
    result: dict[str, JSONValue] = {}
    nested: dict[str, JSONValue] | None = None  # the mapping that indented lines go into
    opener = ""  # the last top-level key if it has no value: indented lines below are its mapping
    indent = 0
    for spaces, key, plain, quoted, other in _SIMPLE_LINES.findall(text):
        if other or (key[0] in _CORE_FIRST and type(_resolve_plain(key)) is not str):  # `null:`, `True:`
            return None
        value: JSONValue = None
        if plain:
            value = _resolve_plain(plain)
            if type(value) is float:
                if not math.isfinite(value):  # the full parser reports it
                    return None
                value = _integral_as_int(value)
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
        target[key] = value
    return result or None


def _parse_full(text: str, *, path: str, first_line: int) -> dict[str, JSONValue]:
    """`parse_yaml_mapping` for any text (without a BOM): libyaml events through `_Composer`."""
    last_line = first_line + text.count("\n")
    if text and text[-1] != "\n":
        # JS ends a block scalar at the end of the text as if a line break followed
        # (`a: |` + `  x` is "x\n"); libyaml keeps no break. The frontmatter of a SKILL.md
        # always ends so: the break before the closing `---` is not part of it.
        text += "\n"
    composer = _Composer(text, path, first_line, last_line)
    root = composer.run()
    if root is _NO_DOCUMENT:
        raise FrontmatterError(
            "frontmatter is empty (no YAML fields, only blank or comment lines); add at least 'name' and 'description'",
            rule="frontmatter-empty",
            path=path,
            line=first_line,
        )
    if not isinstance(root, dict):
        kind = _describe(root)
        raise FrontmatterError(
            f"frontmatter must be a YAML mapping of fields ('name: ...'), but it is {kind}; write 'key: value' lines",
            rule="frontmatter-not-mapping",
            path=path,
            line=first_line,
        )
    return root


class _NoDocument:
    pass


_NO_DOCUMENT = _NoDocument()


class _Anchor:
    """An anchored node, with yaml v2's alias bookkeeping (the `anchors` map of toJS)."""

    __slots__ = ("alias_count", "collection", "complete", "count", "has_scalar", "height", "sources", "value")

    def __init__(self, value: _Raw, *, collection: bool) -> None:
        self.value = value
        self.collection = collection
        self.complete = not collection  # a collection is complete at its end event
        self.count = 1
        self.height = 0  # levels of collections in the value (0 for a scalar), set at its end event
        self.alias_count = 0  # getAliasCount, computed at the first alias (again while 0)
        # What getAliasCount reads of an anchored collection: whether it has a scalar
        # leaf, and the anchors of the aliases inside it (their counts are read late).
        self.has_scalar = False
        self.sources: list[_Anchor] = []


class _Frame:
    """A mapping or sequence being built."""

    __slots__ = (
        "anchor",
        "container",
        "flow",
        "flow_start",
        "has_key",
        "has_scalar",
        "height",
        "indent",
        "key",
        "seen",
        "sources",
    )

    def __init__(
        self,
        container: dict[str, JSONValue] | list[JSONValue],
        anchor: _Anchor | None,
        flow: bool,
        indent: int,
        flow_start: int | None,
    ) -> None:
        self.container = container
        self.anchor = anchor
        self.flow = flow
        self.indent = indent  # spaces the lines of a flow node inside must have (JS `indentNext`)
        self.flow_start = flow_start  # for an outermost flow collection: its first line
        self.has_key = False  # a mapping's key is read and waits for its value
        self.key = ""
        # JSON key -> (identity as yaml v2's duplicate check sees it, key event, key text)
        self.seen: dict[str, tuple[object, Event, str | None]] = {}
        self.has_scalar = False  # some scalar leaf below (not through aliases)
        self.sources: list[_Anchor] = []  # anchors of the aliases below
        self.height = 1  # levels of collections in this one's value so far (itself included)


class _Composer:
    """Builds the JSON value from libyaml's event stream, as yaml v2's compose + toJS."""

    def __init__(self, text: str, path: str, first_line: int, last_line: int) -> None:
        self.path = path
        self.first_line = first_line
        self.last_line = last_line  # errors at the end of the text point at its last line
        # Undo _swap_out in scalars: `restore` in most, `restore_escapes` in double-quoted ones.
        self.restore: dict[int, str] | None = None
        self.restore_escapes: dict[int, str] = {}
        if (
            _NOT_LIBYAML_CHAR.search(text)
            or ("\r" in text and _LONE_CR.search(text))
            or ("\\u" in text and _SURROGATE_ESCAPE.search(text))
        ):
            text, self.restore, self.restore_escapes = _swap_out(text)
        self.text = text
        self.lines: list[str] | None = None  # split when a multi-line flow node is checked
        # libyaml takes a '#' right after a token (`"x"#c`, `[a]#c`) as a comment; YAML 1.2
        # and JS refuse it. Where a '#' follows a non-blank, node spans are kept to find out.
        self.spans: list[tuple[int, int]] | None = None
        if "#" in text and _HASH_AFTER_TOKEN.search(text):
            self.spans = []
        self.anchors: dict[str, _Anchor] = {}
        self.stack: list[_Frame] = []
        self.root: _Raw | _NoDocument = _NO_DOCUMENT

    def error(self, message: str, rule: str, event: Event | None) -> FrontmatterError:
        mark = event.start_mark if event is not None else None
        line = self.line(mark.line) if mark is not None else None
        return FrontmatterError(message, rule=rule, path=self.path, line=line)

    def line(self, index: int) -> int:
        """The file line of 0-based line `index` of the text."""
        return min(self.first_line + index, self.last_line)

    def run(self) -> _Raw | _NoDocument:
        parser = _new_parser(self.text)
        documents = 0
        try:
            while True:
                event = parser.get_event()
                if event is None:  # pragma: no cover - the stream always ends with StreamEndEvent
                    return self.root
                kind = type(event)
                if self.spans is not None and kind in _NODE_EVENTS:
                    self.spans.append((_mark(event).index, (event.end_mark or _mark(event)).index))
                if kind is ScalarEvent:
                    self.scalar(cast(ScalarEvent, event))
                elif kind is MappingStartEvent or kind is SequenceStartEvent:
                    self.start(cast(MappingStartEvent | SequenceStartEvent, event), kind is MappingStartEvent)
                elif kind is MappingEndEvent or kind is SequenceEndEvent:
                    self.end(event)
                elif kind is AliasEvent:
                    self.alias(cast(AliasEvent, event))
                elif kind is DocumentStartEvent:
                    if cast(DocumentStartEvent, event).version == (1, 1):  # JS would switch to its YAML 1.1 schema
                        raise self.error(
                            "the '%YAML 1.1' directive is not supported: frontmatter is read as YAML 1.2; "
                            "remove the directive",
                            "yaml-syntax",
                            event,
                        )
                    documents += 1
                    if documents > 1:
                        raise self.error(
                            "frontmatter holds more than one YAML document (a '---' or '...' line inside it); "
                            "remove the extra marker",
                            "yaml-syntax",
                            event,
                        )
                elif kind is StreamEndEvent:
                    if self.spans is not None:
                        self.check_comments(self.spans)
                    return self.root
        except yaml.MarkedYAMLError as err:
            raise self.syntax_error(err) from None
        except yaml.YAMLError as err:  # pragma: no cover - reader errors are prevented by _swap_out
            raise FrontmatterError(
                f"invalid YAML: {err}; fix the YAML", rule="yaml-syntax", path=self.path, line=None
            ) from None
        finally:
            parser.dispose()

    def syntax_error(self, err: yaml.MarkedYAMLError) -> FrontmatterError:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "invalid YAML"
        where = f" at column {mark.column + 1}" if mark is not None else ""  # the line is in `line`
        context = ""
        if err.context and err.problem:
            context = f" ({err.context}"
            if err.context_mark is not None:
                context += f" started at line {self.line(err.context_mark.line)}"
            context += ")"
        hint = next((hint for words, hint in _SYNTAX_HINTS if words in problem), _SYNTAX_HINT)
        return FrontmatterError(
            f"invalid YAML{where}: {problem}{context}; {hint}",
            rule="yaml-syntax",
            path=self.path,
            line=self.line(mark.line) if mark is not None else None,
        )

    # ---- events

    def scalar(self, event: ScalarEvent) -> None:
        value = event.value
        if self.restore is not None:
            if event.style == '"':
                # A UTF-16 surrogate pair from two escapes is one character, as in JS.
                value = value.translate(self.restore_escapes)
                value = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
                if lone := _LONE_SURROGATE.search(value):
                    # JS keeps a lone surrogate, but no UTF-8 JSON-RPC message can carry one: serving it would
                    # break skills/list for every skill on the server. Refused, a deliberate difference.
                    raise self.error(
                        f"a lone UTF-16 surrogate escape (\\u{ord(lone.group()):04x}) is not a character JSON can "
                        "carry in UTF-8; write the whole character (a surrogate pair) or remove the escape",
                        "yaml-surrogate",
                        event,
                    )
            else:
                value = value.translate(self.restore)
        style = event.style
        if style and self.stack and self.stack[-1].indent:
            if style in _QUOTED:
                start, end = _mark(event), event.end_mark
                if end is not None and end.line > start.line:
                    self.check_flow_lines(start.line, end, self.stack[-1].indent, collection=False)
            else:
                self.check_block_indicator(event, self.stack[-1].indent)
        if event.anchor is not None:
            self.check_name_end(event)
        if value == "-" and not style and self.stack and self.stack[-1].flow:
            end_index = (event.end_mark or _mark(event)).index
            if self.text[end_index : end_index + 1] != ":":  # `{-: x}` is a key, `[-]` an error
                raise self.error(
                    "a '-' followed by a space, ',' or a bracket inside [...] or {...} starts a block list, "
                    "which is not allowed there; quote it as '-'",
                    "yaml-syntax",
                    event,
                )
        raw = self.resolve(event, value)
        if event.anchor is not None:
            self.anchors[event.anchor] = _Anchor(raw, collection=False)
        if self.stack:
            self.stack[-1].has_scalar = True
        self.place(raw, event, value)

    def check_block_indicator(self, event: ScalarEvent, indent: int) -> None:
        """Refuse a `|` or `>` that starts a line less indented than its value must be.

        libyaml accepts `key:` with `|` on the next line at the key's column; YAML 1.2 and
        JS do not ("Implicit keys need to be on a single line").
        """
        text, i = self.text, _mark(event).index
        while i < len(text):  # skip the value's tag and anchor, and line breaks after them
            char = text[i]
            if char in " \t\r\n":
                i += 1
            elif char == "!" and text.startswith("!<", i):
                i = text.find(">", i) + 1 or len(text)
            elif char in "!&":
                while i < len(text) and text[i] not in " \t\r\n":
                    i += 1
            else:
                break
        column = i - (text.rfind("\n", 0, i) + 1)
        if text[i : i + 1] in ("|", ">") and column < indent:
            raise FrontmatterError(
                f"the block scalar indicator '{text[i]}' is indented {column} spaces, less than the {indent} "
                "it needs (YAML 1.2); put it after the key on the same line",
                rule="yaml-syntax",
                path=self.path,
                line=self.line(text.count("\n", 0, i)),
            )

    def check_comments(self, spans: list[tuple[int, int]]) -> None:
        """Refuse a comment that touches the token before it, as JS does."""
        text = self.text
        starts = [start for start, _ in spans]
        done_lines: set[int] = set()
        for candidate in _HASH_AFTER_TOKEN.finditer(text):
            line_start = text.rfind("\n", 0, candidate.start()) + 1
            if line_start in done_lines or text.startswith("%", line_start):
                continue  # the line's comment is already found; directives are not checked
            position = text.find("#", line_start)
            while position != -1:
                k = bisect.bisect_right(starts, position) - 1
                if k >= 0 and position < spans[k][1]:  # inside a scalar, tag, anchor or alias
                    position = text.find("#", position + 1)
                    continue
                if position > line_start and text[position - 1] not in " \t":
                    line = self.line(text.count("\n", 0, position))
                    raise FrontmatterError(
                        f"a comment must be separated from what precedes it by a space (column "
                        f"{position - line_start + 1}); put a space before '#' or quote the value",
                        rule="yaml-syntax",
                        path=self.path,
                        line=line,
                    )
                break  # the rest of the line is a comment
            done_lines.add(line_start)

    def check_flow_lines(self, first: int, end: _AnyMark, indent: int, *, collection: bool) -> None:
        """Refuse under-indented lines in a multi-line quoted scalar or flow collection.

        YAML 1.2 (and JS, lexer.js continueScalar / parseFlowCollection) requires every
        further line of a flow node in a block collection to be indented more than that
        collection; libyaml does not check. Blank lines are exempt, and in a flow
        collection also comment lines and a closing bracket one column further out.
        """
        if self.lines is None:
            self.lines = self.text.split("\n")
        for number in range(first + 1, end.line + 1):
            line = self.lines[number]
            rest = line.lstrip(" ")
            spaces = len(line) - len(rest)
            if spaces >= indent or rest in ("", "\r"):
                continue
            if collection:
                content = rest.lstrip(" \t")
                if content in ("", "\r") or content.startswith("#"):
                    continue
                at_end_bracket = number == end.line and len(line) - len(content) == end.column
                if at_end_bracket and spaces == indent - 1:
                    continue
            what = "flow collection" if collection else "quoted value"
            raise FrontmatterError(
                f"a line of a multi-line {what} is indented {spaces} space{'' if spaces == 1 else 's'}, "
                f"less than the {indent} it needs (YAML 1.2); indent its continuation lines more",
                rule="yaml-syntax",
                path=self.path,
                line=self.line(number),
            )

    def resolve(self, event: ScalarEvent, value: str) -> _Raw:
        tag = event.tag
        if tag is None:
            if event.style:  # quoted and block scalars are strings
                return value
            return _resolve_plain(value)
        if tag == "!" or not tag.startswith(_YAML_TAG):
            return value  # non-specific and unknown tags: JS keeps the string
        name = tag[len(_YAML_TAG) :]
        groups = _TAG_GROUPS.get(name)
        if groups is not None:
            match = _CORE.fullmatch(value)
            if match is not None and match.lastgroup in groups:
                return _construct(match.lastgroup, value)
            return value
        if name in _UNSUPPORTED_SCALAR_TAGS:
            raise self.error(
                f"the tag !!{name} is not supported in frontmatter (no JSON equivalent); remove the tag",
                "yaml-not-json",
                event,
            )
        return value  # !!str, and tags that do not apply to scalars (!!map, !!set...)

    def start(self, event: MappingStartEvent | SequenceStartEvent, is_map: bool) -> None:
        parent = self.stack[-1] if self.stack else None
        if parent is not None and not parent.has_key and isinstance(parent.container, dict):
            raise self.error(
                f"a {'mapping' if is_map else 'sequence'} is used as a key; JSON keys are strings, "
                "so use a plain scalar key",
                "yaml-not-json",
                event,
            )
        tag = event.tag
        if tag is not None and tag.startswith(_YAML_TAG):
            name = tag[len(_YAML_TAG) :]
            if _UNSUPPORTED_COLLECTION_TAGS.get(name) is is_map:
                raise self.error(
                    f"the tag !!{name} is not supported in frontmatter (no JSON equivalent); remove the tag",
                    "yaml-not-json",
                    event,
                )
        if len(self.stack) >= MAX_DEPTH:
            raise self._too_deep(event)
        container: dict[str, JSONValue] | list[JSONValue] = {} if is_map else []
        anchor = None
        if event.anchor is not None:
            self.check_name_end(event)
            anchor = self.anchors[event.anchor] = _Anchor(container, collection=True)
        flow = bool(event.flow_style)
        if not flow:  # a block collection: flow nodes inside must be indented more
            indent, flow_start = _mark(event).column + 1, None
        elif parent is None or parent.flow:  # at the top, or nested in a flow collection
            indent, flow_start = (parent.indent if parent else 0), None
        else:  # the outermost flow collection in a block one: its lines are checked at its end
            indent, flow_start = parent.indent, _mark(event).line
        self.stack.append(_Frame(container, anchor, flow, indent, flow_start))

    def end(self, event: Event) -> None:
        frame = self.stack.pop()
        if frame.flow_start is not None and frame.indent and _mark(event).line > frame.flow_start:
            self.check_flow_lines(frame.flow_start, _mark(event), frame.indent, collection=True)
        if frame.anchor is not None:
            frame.anchor.complete = True
            frame.anchor.has_scalar = frame.has_scalar
            frame.anchor.sources = frame.sources
            frame.anchor.height = frame.height
        if self.stack:
            parent = self.stack[-1]
            parent.height = max(parent.height, frame.height + 1)
            if frame.has_scalar:
                parent.has_scalar = True
            if frame.sources:
                parent.sources.extend(frame.sources)
        self.place(frame.container, event, None)

    def check_name_end(self, event: AliasEvent | ScalarEvent | MappingStartEvent | SequenceStartEvent) -> None:
        """Refuse `*a:` and `&a:`: in YAML 1.2 (and JS) ':' is part of the name, libyaml ends it there."""
        name = event.anchor or ""
        start = _mark(event).index
        if isinstance(event, AliasEvent):
            end = start + 1 + len(name)
        else:
            end = self.text.find("&" + name, start) + 1 + len(name)
        if self.text[end : end + 1] == ":":
            sigil = "*" if isinstance(event, AliasEvent) else "&"
            raise self.error(
                f"'{sigil}{name}:' makes ':' part of the name in YAML 1.2; put a space before the ':'",
                "yaml-syntax",
                event,
            )

    def alias(self, event: AliasEvent) -> None:
        self.check_name_end(event)
        name = event.anchor or ""
        anchor = self.anchors.get(name)
        if anchor is None:
            raise self.error(
                f"alias *{name} has no anchor &{name} before it; define the anchor first or remove the alias",
                "yaml-syntax",
                event,
            )
        if not anchor.complete:
            raise self.error(
                f"alias *{name} refers to a node that contains it; JSON cannot represent recursive data",
                "yaml-not-json",
                event,
            )
        anchor.count += 1
        if anchor.alias_count == 0:
            anchor.alias_count = self.alias_count(anchor)
        if anchor.count * anchor.alias_count > MAX_ALIAS_COUNT:
            raise self.error(
                f"too many alias expansions at *{name} (over {MAX_ALIAS_COUNT}, as in JavaScript's yaml); "
                "write the values out instead of using aliases",
                "yaml-alias-limit",
                event,
            )
        if len(self.stack) + anchor.height > MAX_DEPTH:  # an alias adds its anchor's levels where it is used
            raise self._too_deep(event)
        if self.stack:
            parent = self.stack[-1]
            parent.sources.append(anchor)
            parent.height = max(parent.height, anchor.height + 1)
        self.place(anchor.value, event, None, from_alias=True)

    def _too_deep(self, event: Event) -> FrontmatterError:
        return self.error(
            f"collections nested more than {MAX_DEPTH} levels deep (aliases expanded); no JSON-RPC message "
            "could carry them: flatten the frontmatter",
            "yaml-too-deep",
            event,
        )

    @staticmethod
    def alias_count(anchor: _Anchor) -> int:
        """yaml v2 getAliasCount: the largest leaf below (scalar 1, alias uses x its count)."""
        if not anchor.collection:
            return 1
        count = 1 if anchor.has_scalar else 0
        for source in anchor.sources:
            count = max(count, source.count * source.alias_count)
        return count

    # ---- building

    def place(self, raw: _Raw, event: Event, source: str | None, *, from_alias: bool = False) -> None:
        if not self.stack:
            self.root = raw
            return
        frame = self.stack[-1]
        container = frame.container
        if isinstance(container, list):
            container.append(self.json_value(raw, event))
        elif frame.has_key:
            container[frame.key] = self.json_value(raw, event)
            frame.has_key = False
        else:
            self.add_key(frame, raw, event, source, from_alias)

    def json_value(self, raw: _Raw, event: Event) -> JSONValue:
        if type(raw) is float:
            if math.isnan(raw) or math.isinf(raw):
                raise self.error(
                    f"the value {_js_number_str(raw)} cannot be represented in JSON; quote it to keep it as text",
                    "yaml-not-json",
                    event,
                )
            return _integral_as_int(raw)
        return raw

    def add_key(self, frame: _Frame, raw: _Raw, event: Event, source: str | None, from_alias: bool) -> None:
        if isinstance(raw, list | dict):  # an alias to a collection, used as a key
            raise self.error(
                "an alias to a collection is used as a key; JSON keys are strings, so use a plain scalar key",
                "yaml-not-json",
                event,
            )
        key = _js_key(raw)
        # yaml v2 reports keys whose scalar values are === as duplicates (`a` and "a",
        # 1 and 1.0); alias keys are not compared, NaN never equals itself.
        identity: object
        if from_alias or (type(raw) is float and math.isnan(raw)):
            identity = object()
        elif type(raw) is int or type(raw) is float:
            identity = (float, float(raw))
        else:
            identity = (type(raw), raw)
        previous = frame.seen.get(key)
        if previous is not None:
            first_identity, first_event, first_source = previous
            first_line = self.line(_mark(first_event).line)
            if first_identity == identity:
                raise self.error(
                    f"duplicate key {key!r} (first at line {first_line}); remove one of them",
                    "yaml-duplicate-key",
                    event,
                )
            raise self.error(
                f"keys {_as_written(first_event, first_source)} (line {first_line}) and "
                f"{_as_written(event, source)} both become the JSON key {json.dumps(key, ensure_ascii=False)}; "
                "rename one of them",
                "yaml-duplicate-key",
                event,
            )
        frame.seen[key] = (identity, event, source)
        frame.key = key
        frame.has_key = True


def _as_written(event: Event, source: str | None) -> str:
    """A key as the YAML shows it, for messages: plain, "quoted" or *alias."""
    if isinstance(event, AliasEvent):
        return f"*{event.anchor}"
    if isinstance(event, ScalarEvent) and event.style:
        return json.dumps(source, ensure_ascii=False)
    return source or ""


def _mark(event: Event) -> _AnyMark:
    mark = event.start_mark
    assert mark is not None  # both parsers set marks on every event
    return mark


def _resolve_plain(value: str) -> _Raw:
    """The JavaScript value of an untagged plain scalar: yaml v2 core-schema resolution."""
    if value and value[0] not in _CORE_FIRST:
        return value
    match = _CORE.fullmatch(value)
    return value if match is None else _construct(match.lastgroup, value)


def _integral_as_int(number: float) -> int | float:
    """A finite double as a JSON value: an `int` if JSON.stringify prints it as an integer."""
    if number.is_integer() and abs(number) < 1e21:
        return int(number)
    return number


def _construct(group: str | None, value: str) -> _Raw:
    """The JavaScript value of a plain scalar that matched core-schema test `group`."""
    if group == "null":
        return None
    if group == "bool":
        return value[0] in "tT"
    if group == "int":
        digits = value.lstrip("+-").lstrip("0")
        if len(digits) <= 15:
            return int(value)
        if len(digits) > 400:  # beyond any double (and Python's int-parsing limit): parseInt gives Infinity
            return -math.inf if value.startswith("-") else math.inf
        return _to_double(int(value))
    if group == "oct":
        return _to_double(int(value[2:], 8))
    if group == "hex":
        return _to_double(int(value[2:], 16))
    if group == "special":
        if value[-3:].lower() == "nan":
            return math.nan
        return -math.inf if value.startswith("-") else math.inf
    return float(value)  # exp, float: parseFloat


def _to_double(number: int) -> int | float:
    """A parsed integer as JavaScript holds it: exact up to 2**53, else the nearest double."""
    if -(2**53) <= number <= 2**53:
        return number
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


def _js_key(raw: _Raw) -> str:
    """The property name JavaScript gives a scalar key: String(value), null -> ''."""
    if raw is None:
        return ""
    if raw is True:
        return "true"
    if raw is False:
        return "false"
    if isinstance(raw, str):
        return raw
    if isinstance(raw, int):
        return str(raw)
    assert isinstance(raw, float)
    return _js_number_str(raw)


def _js_number_str(number: float) -> str:
    """ECMAScript Number::toString(10) (shortest round-trip digits, as Python's repr)."""
    if math.isnan(number):
        return "NaN"
    if number == 0:
        return "0"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number < 0:
        return "-" + _js_number_str(-number)
    _, digit_tuple, exponent = Decimal(repr(number)).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = exponent + k  # number = 0.digits * 10**n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def _swap_out(text: str) -> tuple[str, dict[int, str], dict[int, str]]:
    """Replace what libyaml mishandles with unused private-use characters.

    Returns the new text and two translation tables that undo the swap: one for
    double-quoted scalars, where a surrogate escape such as `\\ud83d` is an escape
    (JS reads it as a UTF-16 code unit), and one for everything else, where it is text.
    """
    used = set(text)
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


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a single string"
    return "a list"


# --------------------------------------------------------------------------- comparison


def frontmatter_differences(expected: Mapping[str, object], actual: Mapping[str, object]) -> tuple[str, ...]:
    """Top-level field names whose values differ between two frontmatter objects.

    Spec, Frontmatter Verification: hosts "compare it field-by-field against the entry's
    frontmatter. Any discrepancy MUST be treated as a verification failure". Values are
    compared as JSON values: numbers as JavaScript doubles (1 == 1.0), booleans never
    equal numbers, object key order is irrelevant, array order matters. A field missing
    on either side counts. Returns field names in `expected` order, then extra `actual`
    fields; an empty tuple means identical.
    """
    names = list(expected)
    names.extend(name for name in actual if name not in expected)
    return tuple(
        name
        for name in names
        if name not in expected or name not in actual or not _json_equal(expected[name], actual[name])
    )


def _json_equal(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return _as_double(a) == _as_double(b)
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return False


def _as_double(number: int | float) -> float:
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf
