"""YAML 1.2 rules that libyaml does not enforce and JavaScript's `yaml` does: each refused here.

libyaml is laxer than YAML 1.2 in places where JS is strict. If skillwire accepted what a JS
host refuses, that host could not verify the skill. So: further lines of a quoted value or
[...]/{...} must be indented more than the enclosing collection; a '#' comment must follow a
blank; a `|`/`>` on its own line must be indented likewise; a lone `-` inside brackets, `*alias:`
and `&anchor:` are refused. Each check raises `FrontmatterError` (rule `yaml-syntax`).

    if "#" in text and HASH_AFTER_TOKEN.search(text):   # only then are node spans collected
        check_comments(text, spans, where)
"""

from __future__ import annotations

import bisect
import re

from yaml.events import AliasEvent, MappingStartEvent, ScalarEvent, SequenceStartEvent

from skillwire.core.frontmatter._position import AnyMark, Where, mark_of

# libyaml takes a '#' right after a token (`"x"#c`, `[a]#c`) as a comment; YAML 1.2 and JS refuse it.
HASH_AFTER_TOKEN = re.compile(r"(?<=[^ \t\r\n])#")


def check_name_end(
    text: str, event: AliasEvent | ScalarEvent | MappingStartEvent | SequenceStartEvent, where: Where
) -> None:
    """Refuse `*a:` and `&a:`: in YAML 1.2 (and JS) ':' is part of the name, libyaml ends it there."""
    name = event.anchor or ""
    start = mark_of(event).index
    if isinstance(event, AliasEvent):
        sigil, end = "*", start + 1 + len(name)
    else:
        sigil, end = "&", text.find("&" + name, start) + 1 + len(name)
    if text[end : end + 1] == ":":
        raise where.error(
            f"'{sigil}{name}:' makes ':' part of the name in YAML 1.2; put a space before the ':'",
            "yaml-syntax",
            mark_of(event).line,
        )


def check_flow_dash(text: str, event: ScalarEvent, where: Where) -> None:
    """Refuse a plain `-` inside [...] or {...} that is not a key: JS reads it as a block list there."""
    end_index = (event.end_mark or mark_of(event)).index
    if text[end_index : end_index + 1] != ":":  # `{-: x}` is a key, `[-]` an error
        raise where.error(
            "a '-' followed by a space, ',' or a bracket inside [...] or {...} starts a block list, "
            "which is not allowed there; quote it as '-'",
            "yaml-syntax",
            mark_of(event).line,
        )


def check_block_indicator(text: str, event: ScalarEvent, indent: int, where: Where) -> None:
    """Refuse a `|` or `>` that starts a line less indented than its value must be.

    libyaml accepts `key:` with `|` on the next line at the key's column; YAML 1.2 and
    JS do not ("Implicit keys need to be on a single line").
    """
    i = mark_of(event).index
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
        raise where.error(
            f"the block scalar indicator '{text[i]}' is indented {column} spaces, less than the {indent} "
            "it needs (YAML 1.2); put it after the key on the same line",
            "yaml-syntax",
            text.count("\n", 0, i),
        )


def check_comments(text: str, spans: list[tuple[int, int]], where: Where) -> None:
    """Refuse a comment that touches the token before it, as JS does; `spans` are the nodes' (start, end)."""
    starts = [start for start, _ in spans]
    done_lines: set[int] = set()
    for candidate in HASH_AFTER_TOKEN.finditer(text):
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
                raise where.error(
                    f"a comment must be separated from what precedes it by a space (column "
                    f"{position - line_start + 1}); put a space before '#' or quote the value",
                    "yaml-syntax",
                    text.count("\n", 0, position),
                )
            break  # the rest of the line is a comment
        done_lines.add(line_start)


def check_flow_lines(
    lines: list[str], first: int, end: AnyMark, indent: int, *, collection: bool, where: Where
) -> None:
    """Refuse under-indented lines in a multi-line quoted scalar or flow collection.

    YAML 1.2 (and JS, lexer.js continueScalar / parseFlowCollection) requires every
    further line of a flow node in a block collection to be indented more than that
    collection; libyaml does not check. Blank lines are exempt, and in a flow
    collection also comment lines and a closing bracket one column further out.
    `lines` is the text split at "\\n"; `first` the node's first line, `end` where it ends.
    """
    for number in range(first + 1, end.line + 1):
        line = lines[number]
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
        raise where.error(
            f"a line of a multi-line {what} is indented {spaces} space{'' if spaces == 1 else 's'}, "
            f"less than the {indent} it needs (YAML 1.2); indent its continuation lines more",
            "yaml-syntax",
            number,
        )
