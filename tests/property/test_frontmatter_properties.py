"""Properties of the frontmatter parser on arbitrary bytes and on generated YAML.

SKILL.md comes from skill authors (the server parses it) and from servers (the host parses it
to verify), so the parser is fed hostile text: it must answer a JSON object or raise
FrontmatterError, never anything else, within a deadline and a memory bound; whatever it
accepts must survive the wire and a host's field-by-field comparison; and each fast path must
agree with its general path wherever it answers (the YAML one with the full parser, on any text;
the block one with the conformance suite's extraction expression, on any text).
"""

from __future__ import annotations

import json
import math
import operator
import tracemalloc

import pydantic_core
from hypothesis import example, given
from hypothesis import strategies as st

from skillwire.core.errors import FrontmatterError
from skillwire.core.frontmatter import JSONValue, frontmatter_differences, parse_skill_md, parse_yaml_mapping
from skillwire.core.frontmatter._compose import parse_full
from skillwire.core.frontmatter._fast_block import frontmatter_block
from skillwire.core.frontmatter._fast_yaml import parse_simple
from tests.core.test_frontmatter_fast import TRICKY_KEYS, TRICKY_VALUES, _exactly
from tests.core.test_frontmatter_fast_block import BLOCK_PIECES, expected_block

# The Python objects the parser builds grow linearly with its input: a str per scalar, a container
# per collection, and for every key its event and marks (kept for duplicate-key messages). Measured
# peaks reach about 45 bytes per input byte (a flow mapping of 20,000 short keys) and 4 MiB fixed,
# so 256 bytes per byte plus 4 MiB leaves a 5x margin, and any expansion (billion laughs, an alias
# copied at each use, a quadratic buffer) grows with a power of the input and breaks it at once.
# tracemalloc sees only Python allocations; libyaml's own buffers are C mallocs, bounded by the text.
MEMORY_PER_BYTE = 256
MEMORY_FIXED = 4 * 1024 * 1024


def _parse_bounded(parse: object, data: bytes | str) -> dict[str, JSONValue] | FrontmatterError:
    """Run `parse(data)` under tracemalloc; return its result or FrontmatterError, and check the peak."""
    assert callable(parse)
    tracemalloc.start()
    try:
        result: dict[str, JSONValue] | FrontmatterError = parse(data)
    except FrontmatterError as err:  # the one documented error; anything else fails the test
        result = err
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    size = len(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
    assert peak <= MEMORY_FIXED + MEMORY_PER_BYTE * size, f"peak {peak:,} bytes for {size:,} bytes of input"
    return result


def _assert_servable(value: dict[str, JSONValue]) -> None:
    """What the parser accepts goes on the wire (the SDK's JSON) and compares equal to itself after the trip."""
    json.dumps(value, allow_nan=False)  # JSON has no NaN or Infinity
    wire = pydantic_core.from_json(pydantic_core.to_json({"jsonrpc": "2.0", "result": {"skills": [value]}}))
    back = wire["result"]["skills"][0]
    assert frontmatter_differences(value, back) == ()


# ---------------------------------------------------------------------------------------------- arbitrary bytes

skill_md_bytes = st.one_of(
    st.binary(max_size=2000),
    st.builds(lambda b: b"---\n" + b + b"\n---\n", st.binary(max_size=2000)),
    st.builds(
        lambda t, crlf: ("---\n" + t + "\n---\nbody\n").replace("\n", "\r\n" if crlf else "\n").encode(),
        st.text(max_size=500),
        st.booleans(),
    ),
)


@given(skill_md_bytes)
@example(b"\xef\xbb\xbf---\nname: a\n---\n")
@example(b"---\n" + b"[" * 5000 + b"\n---\n")
def test_any_bytes_parse_to_an_object_or_a_frontmatter_error_within_bounds(data: bytes) -> None:
    """Skill Format (SKILL.md MUST begin with frontmatter): any bytes give an object or FrontmatterError, bounded."""
    result = _parse_bounded(lambda raw: parse_skill_md(raw).frontmatter, data)
    if not isinstance(result, FrontmatterError):
        assert isinstance(result, dict)
        _assert_servable(result)


# ---------------------------------------------------------------------------------------------- generated YAML

scalars = st.one_of(
    st.sampled_from([v for v in TRICKY_VALUES if v]),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=20).map(json.dumps),  # a double-quoted string
    st.integers(0, 39).map(lambda n: "x" * (50_000 if n == 0 else n)),  # now and then a huge scalar
    st.integers(0, 2000).map(lambda n: "9" * n),  # huge numbers (Python's int parsing limit is 4300 digits)
)
tags = st.sampled_from(
    ["", "!!str ", "!!int ", "!!float ", "!!bool ", "!!null ", "!!binary ", "!!timestamp ", "!!set ", "!!omap ",
     "!!map ", "!!seq ", "!custom ", "!<tag:yaml.org,2002:str> ", "! "]
)  # fmt: skip
anchor_names = st.sampled_from(["a", "b", "c", "x1", "a:"])


@st.composite
def nodes(draw: st.DrawFn, depth: int = 0) -> str:
    """A YAML node in flow style (so it fits anywhere), with tags, anchors and aliases mixed in."""
    kind = draw(st.integers(0, 5 if depth < 4 else 1))  # deep nesting has its own strategy below
    prefix = draw(tags) + (("&" + draw(anchor_names) + " ") if draw(st.integers(0, 5)) == 0 else "")
    if kind == 0:
        return prefix + draw(scalars)
    if kind == 1:
        return "*" + draw(anchor_names)
    if kind in (2, 3):
        items = draw(st.lists(nodes(depth + 1), max_size=4))
        return prefix + "[" + ", ".join(items) + "]"
    pairs = draw(st.lists(st.tuples(st.sampled_from(TRICKY_KEYS[:30]), nodes(depth + 1)), max_size=4))
    return prefix + "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"


@st.composite
def block_documents(draw: st.DrawFn) -> str:
    """Block mappings and sequences, nested by indentation, with flow nodes, comments and document markers."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        indent = " " * draw(st.sampled_from([0, 0, 0, 1, 2, 4]))
        key = draw(st.sampled_from(TRICKY_KEYS))
        shape = draw(st.integers(0, 6))
        if shape == 0:
            lines.append(f"{indent}{key}:")
        elif shape == 1:
            lines.append(f"{indent}- {draw(nodes())}")
        elif shape == 2:
            lines.append(f"{indent}{key}: {draw(st.sampled_from(['|', '>', '|-', '>+', '|2']))}")
            lines.extend(f"{indent}  {draw(scalars)}" for _ in range(draw(st.integers(0, 3))))
        elif shape == 3:
            lines.append(draw(st.sampled_from(["---", "...", "--- !!map", "%YAML 1.1", "%YAML 1.2", "# c", ""])))
        else:
            lines.append(f"{indent}{key}: {draw(nodes())}")
    return "\n".join(lines)


@st.composite
def billion_laughs(draw: st.DrawFn) -> str:
    """Each level an anchored list of aliases to the level below: exponential if aliases were copied."""
    width, levels = draw(st.integers(2, 12)), draw(st.integers(1, 9))
    lines = ["l0: &l0 [lol, lol]"]
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return "\n".join(lines)


@st.composite
def deep_nesting(draw: st.DrawFn) -> str:
    """Nested flow or block collections, from a few levels to past libyaml's own limit (1000)."""
    depth = draw(st.integers(1, 1100))
    style = draw(st.integers(0, 2))
    if style == 0:
        return "a: " + "[" * depth + "]" * depth
    if style == 1:
        return "a: " + "{b: " * depth + "c" + "}" * depth
    return "a:\n" + "".join(" " * (i + 1) + "b:\n" for i in range(min(depth, 300)))


yaml_texts = st.one_of(nodes().map(lambda node: "k: " + node), block_documents(), billion_laughs(), deep_nesting())


@given(yaml_texts)
@example("a: " + "[" * 300 + "]" * 300)  # found by this test: parsed, but then no JSON-RPC message could carry it
def test_generated_yaml_parses_to_a_servable_object_or_a_frontmatter_error_within_bounds(text: str) -> None:
    """Frontmatter (rendered verbatim as a JSON object): hostile YAML gives a wire-safe object or FrontmatterError."""
    result = _parse_bounded(parse_yaml_mapping, text)
    if not isinstance(result, FrontmatterError):
        _assert_servable(result)
        assert frontmatter_differences(result, parse_yaml_mapping(text)) == ()


# ---------------------------------------------------------------------------------------------- fast path


simple_values = st.sampled_from(TRICKY_VALUES)
simple_keys = st.one_of(st.sampled_from(TRICKY_KEYS[:14]), st.sampled_from(TRICKY_KEYS))


@st.composite
def simple_texts(draw: st.DrawFn) -> str:
    """Texts shaped like common frontmatter (key: value lines, one nested level), with stray lines at times."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        key = draw(simple_keys)
        if draw(st.booleans()):
            value = draw(simple_values)
            lines.append(f"{key}:{' ' * draw(st.integers(1, 2)) + value if value else ''}")
        else:
            lines.append(f"{key}:")
            indent = " " * draw(st.integers(1, 4))
            for _ in range(draw(st.integers(0, 4))):
                value = draw(simple_values)
                lines.append(f"{indent}{draw(simple_keys)}:{' ' + value if value else ''}")
    if draw(st.integers(0, 5)) == 0:
        extra = ("# c", "  more", "   deeper: 1", "\t", " ", "- item", "...", "--- ", "%YAML 1.2", "a: b: c")
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(extra)))
    text = "\n".join(lines) + draw(st.sampled_from(["", "\n"]))
    return text.replace("\n", "\r\n") if draw(st.integers(0, 9)) == 0 else text


_ORDINARY = st.text(st.sampled_from("abkxyzé_0123456789."), min_size=1, max_size=8)
_KEYS = st.builds(operator.add, st.sampled_from("abkxyz_"), st.text(st.sampled_from("abkxyz_0.-"), max_size=5))
_VALUES = st.builds(lambda q, v: q + v + q, st.sampled_from(["", "", "'", '"']), _ORDINARY)
# Characters that decide what a YAML line is: indicators, quotes, blanks, controls, and line breaks
# or surrogates that libyaml reads differently from YAML 1.2.
_DECISIVE = st.sampled_from(" :#'\"-?,[]{}&*!|>%@`~\t\r\n\\\x00\x7f\x85\u2028\ufeff\ud83d")


@st.composite
def edge_texts(draw: st.DrawFn) -> str:
    """A text the fast path takes (`key: value` lines, one nested level) with up to two decisive characters put in.

    So each example sits on the edge of the fast path's domain: a text it answers, or one or two characters away.
    """
    lines: list[str] = []
    for n in range(draw(st.integers(1, 3))):  # keys end in their line's number: no duplicates
        if draw(st.booleans()):
            lines.append(f"{draw(_KEYS)}{n}: {draw(_VALUES)}")
            continue
        lines.append(f"{draw(_KEYS)}{n}:")
        indent = " " * draw(st.integers(1, 3))
        lines.extend(f"{indent}{draw(_KEYS)}{m}: {draw(_VALUES)}" for m in range(draw(st.integers(0, 2))))
    text = "\n".join(lines)
    for _ in range(draw(st.integers(0, 2))):
        position = draw(st.integers(0, len(text)))
        text = text[:position] + draw(_DECISIVE) + text[position:]
    return text


def _assert_fast_path_agrees(text: str) -> None:
    """If the fast path answers `text`, the full parser accepts it and gives exactly the same object."""
    fast = parse_simple(text)
    if fast is None:
        return
    try:
        full = parse_full(text, path="SKILL.md", first_line=2)
    except FrontmatterError as err:
        raise AssertionError(f"the fast path accepted {text!r}, the full parser refused it: {err}") from None
    assert _exactly(fast, full), f"fast: {fast!r}\nfull: {full!r}"
    assert all(not isinstance(v, float) or math.isfinite(v) for v in fast.values())


@given(st.one_of(simple_texts(), st.text(max_size=200).map(lambda t: t.removeprefix("\ufeff"))))
@example("a: 1\n  \nb: 2")
@example("a: x\x85y")
def test_fast_path_agrees_with_the_full_parser_wherever_it_answers(text: str) -> None:
    """skillwire guarantee (_fast_yaml.py): on any text the fast path gives the full parser's object or declines."""
    _assert_fast_path_agrees(text)


@given(edge_texts())
def test_fast_path_agrees_with_the_full_parser_at_the_edge_of_its_domain(text: str) -> None:
    """skillwire guarantee (_fast_yaml.py): a character or two from a text it answers, it agrees or declines."""
    _assert_fast_path_agrees(text)


block_texts = st.one_of(
    st.text(max_size=100),
    st.builds(
        lambda opening, pieces: opening + "".join(pieces),
        st.sampled_from(["---\n", "---\r\n", "--- \n", "---\r", "\n---\n", "\ufeff---\n", ""]),
        st.lists(st.one_of(st.sampled_from(BLOCK_PIECES), st.text(max_size=3)), max_size=12),
    ),
)


@given(block_texts)
@example("---\n\n---")
@example("---\r\n\r\n---\r\n")
def test_block_fast_path_agrees_with_the_expression_on_any_text(text: str) -> None:
    """skillwire guarantee (_fast_block.py): on any text the fast path finds what FRONTMATTER_BLOCK matches."""
    assert frontmatter_block(text) == expected_block(text)
