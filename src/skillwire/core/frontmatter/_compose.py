"""The general parser: any YAML text to the JSON object JavaScript's `YAML.parse` gives, or a clear error.

Consumes libyaml's event stream and builds the JSON value in one pass, as yaml v2's compose + toJS:
faster than libyaml's own composer plus PyYAML resolvers (which could not redefine anchors, as YAML
and JS allow). Scalars resolve in `_resolve`, YAML 1.2 strictness is in `_strict`, alias bookkeeping
in `_nodes`; here are aliases (yaml v2's `maxAliasCount` = 100), duplicate keys as JS sees them, depth,
and the values JSON cannot carry (NaN, Infinity, recursive aliases, collection keys, YAML 1.1 types).

    parse_full("a: &x [1, 2]\\nb: *x\\n", path="SKILL.md", first_line=2)   # {'a': [1, 2], 'b': [1, 2]}
"""

from __future__ import annotations

import json
import math
import re
from typing import Final, TypeAlias, cast

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

from skillwire.core.errors import FrontmatterError
from skillwire.core.frontmatter import _libyaml, _strict
from skillwire.core.frontmatter._nodes import Anchor, Frame
from skillwire.core.frontmatter._position import AnyMark, Where, mark_of
from skillwire.core.frontmatter._resolve import (
    UNSUPPORTED_COLLECTION_TAGS,
    UNSUPPORTED_SCALAR_TAGS,
    YAML_TAG,
    JSONValue,
    Raw,
    integral_as_int,
    js_key,
    js_number_str,
    resolve_plain,
    resolve_tagged,
)
from skillwire.core.names import json_type

# yaml v2 `toJS({maxAliasCount: 100})`: an alias resolution counts the anchor's uses
# times the aliases inside it; over 100 is refused as a resource-exhaustion attack.
MAX_ALIAS_COUNT = 100
# Deepest nesting of collections in the frontmatter value (its top mapping is level 1), aliases
# expanded. The MCP SDK reads a JSON-RPC message with at most 200 levels (pydantic-core) and the
# entry sits 4 levels down, and Python's own recursion limit is 1000: deeper frontmatter would
# parse here and then break skills/list for every skill on its page, or a host's comparison.
MAX_DEPTH = 64

_QUOTED = frozenset(("'", '"'))  # the other styles: plain ('' or None), block ('|', '>')
_NODE_EVENTS = frozenset((ScalarEvent, AliasEvent, MappingStartEvent, SequenceStartEvent))
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class _NoDocument:
    """The root before any node: the text held only blank lines and comments."""


_NO_DOCUMENT: Final = _NoDocument()
_Root: TypeAlias = Raw | _NoDocument


def parse_full(text: str, *, path: str, first_line: int) -> dict[str, JSONValue]:
    """`parse_yaml_mapping` for any text (without a BOM): libyaml events through `_Composer`."""
    last_line = first_line + text.count("\n")
    if text and text[-1] != "\n":
        # JS ends a block scalar at the end of the text as if a line break followed
        # (`a: |` + `  x` is "x\n"); libyaml keeps no break. The frontmatter of a SKILL.md
        # always ends so: the break before the closing `---` is not part of it.
        text += "\n"
    root = _Composer(text, Where(path, first_line, last_line)).run()
    if root is _NO_DOCUMENT:
        raise FrontmatterError(
            "frontmatter is empty (no YAML fields, only blank or comment lines); add at least 'name' and 'description'",
            rule="frontmatter-empty",
            path=path,
            line=first_line,
        )
    if not isinstance(root, dict):
        kind = "a single string" if isinstance(root, str) else json_type(root)
        raise FrontmatterError(
            f"frontmatter must be a YAML mapping of fields ('name: ...'), but it is {kind}; write 'key: value' lines",
            rule="frontmatter-not-mapping",
            path=path,
            line=first_line,
        )
    return root


class _Composer:
    """Builds the JSON value from libyaml's event stream, as yaml v2's compose + toJS."""

    def __init__(self, text: str, where: Where) -> None:
        self.where = where
        # Undo the swap of what libyaml mishandles in every scalar (None: nothing was swapped).
        self.swap = _libyaml.Swap.of(text)
        if self.swap is not None:
            text = self.swap.text
        self.text = text
        self.lines: list[str] | None = None  # split when a multi-line flow node is checked
        # Where a '#' follows a non-blank, node spans are kept to tell a comment from content.
        self.spans: list[tuple[int, int]] | None = None
        if "#" in text and _strict.HASH_AFTER_TOKEN.search(text):
            self.spans = []
        self.anchors: dict[str, Anchor] = {}
        self.stack: list[Frame] = []
        self.root: _Root = _NO_DOCUMENT

    def error(self, message: str, rule: str, event: Event) -> FrontmatterError:
        """A `FrontmatterError` at the line where `event` starts."""
        return self.where.error(message, rule, mark_of(event).line)

    def run(self) -> _Root:
        """Read every event; the root value, or `_NO_DOCUMENT` for a text of blank lines and comments."""
        parser = _libyaml.new_parser(self.text)
        documents = 0
        try:
            while True:
                event = parser.get_event()
                if event is None:  # pragma: no cover - the stream always ends with StreamEndEvent
                    return self.root
                kind = type(event)
                if self.spans is not None and kind in _NODE_EVENTS:
                    self.spans.append((mark_of(event).index, (event.end_mark or mark_of(event)).index))
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
                        _strict.check_comments(self.text, self.spans, self.where)
                    return self.root
        except yaml.MarkedYAMLError as err:
            raise _libyaml.syntax_error(err, self.where) from None
        except yaml.YAMLError as err:  # pragma: no cover - reader errors are prevented by the swap
            raise FrontmatterError(
                f"invalid YAML: {err}; fix the YAML", rule="yaml-syntax", path=self.where.path, line=None
            ) from None
        finally:
            parser.dispose()

    # ---- events

    def scalar(self, event: ScalarEvent) -> None:
        value = event.value
        style = event.style
        if self.swap is not None:
            value = self.swap.restore(value, double_quoted=style == '"')
            if style == '"' and (lone := _LONE_SURROGATE.search(value)):
                # JS keeps a lone surrogate, but no UTF-8 JSON-RPC message can carry one: serving it would
                # break skills/list for every skill on the server. Refused, a deliberate difference.
                raise self.error(
                    f"a lone UTF-16 surrogate escape (\\u{ord(lone.group()):04x}) is not a character JSON can "
                    "carry in UTF-8; write the whole character (a surrogate pair) or remove the escape",
                    "yaml-surrogate",
                    event,
                )
        if style and self.stack and self.stack[-1].indent:
            if style in _QUOTED:
                start, end = mark_of(event), event.end_mark
                if end is not None and end.line > start.line:
                    self.check_flow_lines(start.line, end, self.stack[-1].indent, collection=False)
            else:
                _strict.check_block_indicator(self.text, event, self.stack[-1].indent, self.where)
        if event.anchor is not None:
            _strict.check_name_end(self.text, event, self.where)
        if value == "-" and not style and self.stack and self.stack[-1].flow:
            _strict.check_flow_dash(self.text, event, self.where)
        raw = self.resolve(event, value)
        if event.anchor is not None:
            self.anchors[event.anchor] = Anchor(raw, collection=False)
        if self.stack:
            self.stack[-1].has_scalar = True
        self.place(raw, event, value)

    def check_flow_lines(self, first: int, end: AnyMark, indent: int, *, collection: bool) -> None:
        if self.lines is None:
            self.lines = self.text.split("\n")
        _strict.check_flow_lines(self.lines, first, end, indent, collection=collection, where=self.where)

    def resolve(self, event: ScalarEvent, value: str) -> Raw:
        tag = event.tag
        if tag is None:
            if event.style:  # quoted and block scalars are strings
                return value
            return resolve_plain(value)
        name = tag[len(YAML_TAG) :] if tag.startswith(YAML_TAG) else None
        if name in UNSUPPORTED_SCALAR_TAGS:
            raise self.error(
                f"the tag !!{name} is not supported in frontmatter (no JSON equivalent); remove the tag",
                "yaml-not-json",
                event,
            )
        return resolve_tagged(tag, value)

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
        if tag is not None and tag.startswith(YAML_TAG):
            name = tag[len(YAML_TAG) :]
            if UNSUPPORTED_COLLECTION_TAGS.get(name) is is_map:
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
            _strict.check_name_end(self.text, event, self.where)
            anchor = self.anchors[event.anchor] = Anchor(container, collection=True)
        flow = bool(event.flow_style)
        if not flow:  # a block collection: flow nodes inside must be indented more
            indent, flow_start = mark_of(event).column + 1, None
        elif parent is None or parent.flow:  # at the top, or nested in a flow collection
            indent, flow_start = (parent.indent if parent else 0), None
        else:  # the outermost flow collection in a block one: its lines are checked at its end
            indent, flow_start = parent.indent, mark_of(event).line
        self.stack.append(Frame(container, anchor, flow, indent, flow_start))

    def end(self, event: Event) -> None:
        frame = self.stack.pop()
        if frame.flow_start is not None and frame.indent and mark_of(event).line > frame.flow_start:
            self.check_flow_lines(frame.flow_start, mark_of(event), frame.indent, collection=True)
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

    def alias(self, event: AliasEvent) -> None:
        _strict.check_name_end(self.text, event, self.where)
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
            anchor.alias_count = anchor.compute_alias_count()
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

    # ---- building

    def place(self, raw: Raw, event: Event, source: str | None, *, from_alias: bool = False) -> None:
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

    def json_value(self, raw: Raw, event: Event) -> JSONValue:
        if type(raw) is float:
            if math.isnan(raw) or math.isinf(raw):
                raise self.error(
                    f"the value {js_number_str(raw)} cannot be represented in JSON; quote it to keep it as text",
                    "yaml-not-json",
                    event,
                )
            return integral_as_int(raw)
        return raw

    def add_key(self, frame: Frame, raw: Raw, event: Event, source: str | None, from_alias: bool) -> None:
        if isinstance(raw, list | dict):  # an alias to a collection, used as a key
            raise self.error(
                "an alias to a collection is used as a key; JSON keys are strings, so use a plain scalar key",
                "yaml-not-json",
                event,
            )
        key = js_key(raw)
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
            first_line = self.where.line(mark_of(first_event).line)
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
