"""The simple-frontmatter fast path (`frontmatter/_fast_yaml.py`) gives exactly the full parser's answer, or declines.

`parse_yaml_mapping` first tries `parse_simple` (flat `key: value` lines, one nesting level)
and uses the libyaml-based `parse_full` (`frontmatter/_compose.py`) only when that returns None.
These tests run both on every YAML text of the frontmatter tests and on generated texts full of
tricky scalars: whenever the fast path answers, its answer must equal the full parser's exactly
(same keys in the same order, same value types: 1, 1.0, True and "1" all differ). The block
extraction fast path has its own test, tests/core/test_frontmatter_fast_block.py.
"""

from __future__ import annotations

import random
from types import ModuleType

import pytest

from skillwire.core import frontmatter as fm
from skillwire.core.errors import FrontmatterError
from skillwire.core.frontmatter import JSONValue, ParsedSkillFile, parse_skill_md, parse_yaml_mapping
from skillwire.core.frontmatter._compose import parse_full
from skillwire.core.frontmatter._fast_yaml import parse_simple
from tests.core import test_frontmatter, test_frontmatter_parity

TYPICAL = (
    "name: skill-00042\n"
    "description: Synthetic skill number 42 for benchmarks\n"
    "license: MIT\n"
    "metadata:\n"
    "  owner: team-a/area-8\n"
    "  version: '1.2'"
)


def _exactly(a: object, b: object) -> bool:
    """Equal as values, types and key order (unlike ==, which takes 1 == 1.0 == True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_exactly(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_exactly(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _full(text: str) -> dict[str, JSONValue] | FrontmatterError:
    """The full parser's result for `text` as `parse_yaml_mapping` would call it, or its error."""
    try:
        return parse_full(text.removeprefix("\ufeff"), path="SKILL.md", first_line=2)
    except FrontmatterError as err:
        return err


def _agrees(text: str) -> bool:
    """Run the fast path on `text`; True if it answered (and then it must match the full parser)."""
    fast = parse_simple(text)
    if fast is None:
        return False
    full = _full(text)
    assert not isinstance(full, FrontmatterError), f"fast path accepted {text!r}, full parser raised {full}"
    assert _exactly(fast, full), f"{text!r}\nfast: {fast!r}\nfull: {full!r}"
    return True


def _parametrized_values(module: ModuleType) -> list[str | bytes]:
    """Every str and bytes value in the module's @pytest.mark.parametrize lists and constants."""
    found: list[str | bytes] = []
    for obj in vars(module).values():
        if isinstance(obj, str | bytes):
            found.append(obj)
        for mark in getattr(obj, "pytestmark", []):
            if mark.name != "parametrize":
                continue
            for case in mark.args[1]:
                values = getattr(case, "values", case)  # pytest.param(...) or a plain tuple/value
                for value in values if isinstance(values, tuple) else (values,):
                    if isinstance(value, str | bytes):
                        found.append(value)
    return found


def _yaml_texts() -> list[str]:
    """The YAML texts of the frontmatter tests: parity vectors, known differences, the rest."""
    texts = [text for _, text in test_frontmatter_parity.VECTORS]
    texts += test_frontmatter_parity.KNOWN_DIFFERENCES.values()
    for value in _parametrized_values(test_frontmatter):
        if isinstance(value, str):
            texts.append(value)
            continue
        try:
            decoded = value.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError:
            continue
        match = fm.FRONTMATTER_BLOCK.match(decoded)
        if match is not None:
            texts.append(match.group(1))
    return list(dict.fromkeys(texts))


YAML_TEXTS = _yaml_texts()


# --------------------------------------------------------------------------- the suite's vectors


def test_the_suite_has_its_vectors() -> None:
    assert len(test_frontmatter_parity.VECTORS) >= 228
    assert len(YAML_TEXTS) > len(test_frontmatter_parity.VECTORS)


@pytest.mark.parametrize("text", YAML_TEXTS, ids=range(len(YAML_TEXTS)))
def test_vector_fast_path_matches_full_parser(text: str) -> None:
    _agrees(text)


def test_fast_path_answers_a_good_share_of_the_vectors() -> None:
    accepted = [text for text in YAML_TEXTS if _agrees(text)]
    parity_accepted = [name for name, text in test_frontmatter_parity.VECTORS if parse_simple(text) is not None]
    # 35 of the 228 parity vectors are simple; the rest, and nearly all other texts of
    # test_frontmatter.py (mostly errors), are what the fast path leaves alone.
    assert len(parity_accepted) >= 35, parity_accepted
    assert len(accepted) >= 36, len(accepted)
    for name in ("plain-strings", "int-beyond-safe", "float-integral", "yaml11-bool-words", "non-ascii"):
        assert name in parity_accepted


def test_typical_frontmatter_takes_the_fast_path() -> None:
    expected = {
        "name": "skill-00042",
        "description": "Synthetic skill number 42 for benchmarks",
        "license": "MIT",
        "metadata": {"owner": "team-a/area-8", "version": "1.2"},
    }
    fast = parse_simple(TYPICAL)
    assert fast is not None
    assert _exactly(fast, expected)
    assert _agrees(TYPICAL)


# --------------------------------------------------------------------------- generated texts

# Scalars as written after `key: `. Most of them the fast path must decline, or resolve
# exactly as the core schema does (a '' entry writes `key:` with no value).
TRICKY_VALUES = [
    *("yes", "no", "on", "off", "y", "n", "Yes", "ON"),
    *("true", "True", "TRUE", "false", "False", "FALSE", "tRUE"),
    *("null", "Null", "NULL", "nULL", "~", "", "~x"),
    *("0", "-0", "+0", "42", "-17", "+5", "0755", "007", "08", "0o17", "0O17", "-0o17", "0x1F", "0xff", "0X1F"),
    *("-0x1F", "0x", "0b101", "1_000", "1:30", "190:20:30", "1:30.5"),
    *("9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740993"),
    *("123456789012345678901234567890", "-123456789012345678901234567890123"),
    *("9" * 400, "9" * 401, "0x1FFFFFFFFFFFFF1", "0o7777777777777777777777"),
    *("1.0", "1.", "1e3", "1E3", "1e+2", "1e-7", ".5", "-.5", "+.5", ".5e1", "1e21", "1e20", "100.000", "-2.0", "-0.0"),
    *("1.5e300", "1e400", "-1e400", "1e-400", "0.1000000000000000055511151231257827", "1.7976931348623157e308"),
    *(".inf", "-.Inf", "+.INF", ".nan", ".NaN", "inf", "nan", "Infinity", ".iNf"),
    *("1e", "e3", "1.2.3", "1,5", ".", "+."),
    *("2024-01-01", "2001-12-14t21:59:43.10-05:00", "v1.0", "1.10", "1.2.3-beta"),
    *("''", '""', "'x y'", '"x y"', "'1.2'", "'true'", '"null"', "'it''s'", '"a\\nb"', '"q\\"q"', "'#x'", '"#x"'),
    *("' padded '", "'x' y", '"x" y', "'x'y", "'x", '"x', "'\\ud83d'", '"\\ud83d"'),
    *("a: b", "x #y", "C#", "x#y", "a:b", "http://x.io:8080/p", "a::b", "x:", "x::", "x :y", "x : y", "a:: b"),
    *("Bash(git:*) Read Write", "don't", 'say "hi"', "50%", "a, b", "a,[b]{c}", "a|b", "a>b", "a&b", "a*b", "a!b"),
    *("résumé", "日本語のテキスト", "😀 party 🎉", "x—y", "x\u00a0y", "x\u200dy", "x\u2028y", "x\x85y", "x\ufeffy"),
    *("x\ue000y", "x\ufffey", "x\ty", "x\x01y", "x\x7fy", "x\ry", "\\ud83d\\ude00", "a\\b"),
    *("- x", "-x", "-", "--", "---", "...", "? x", "?x", ": x", ":x", ", x", ",x", "[a, b]", "[]", "{a: 1}", "{}"),
    *("&a x", "*a", "!tag x", "!!str 1", "!!int '7'", "|", "|-", ">", ">-", "%x", "@x", "`x`", "<<", "=", "#x"),
    *("x  y", " x", "  x", "x ", "x\t", "<x>", "(x)", "/x/", "\\x", "$x", "^x", ";x", "x;y", "'", '"'),
]

TRICKY_KEYS = [
    *("name", "description", "license", "metadata", "allowed-tools", "a.b", "x_y", "_k", "k9", "Name", "NAME"),
    *("yes", "on", "no", "y", "n", "nan", "inf", "e3", "x-", "a..b"),
    *("null", "Null", "NULL", "true", "True", "FALSE", "~", "1", "0x10", "1e3", "1.5", ".nan", "-1", "'q'", '"q"'),
    *("__proto__", "toString", "<<", "a b", "a:b", "k" * 128, "k" * 129, "k" * 1100, "é", "😀", "-x", "?x", ""),
]


def test_every_tricky_value_alone_and_nested() -> None:
    accepted = 0
    for value in TRICKY_VALUES:
        line = f"a: {value}" if value else "a:"
        for text in (line, line + "\n", f"m:\n  {line}\n", f"x: 1\nm:\n    {line}\n    b: 2\nz: 3"):
            accepted += _agrees(text)
    assert accepted >= 4 * 100, accepted  # the values the fast path takes, in all four forms


def test_every_tricky_key_alone_and_nested() -> None:
    accepted = 0
    for key in TRICKY_KEYS:
        for text in (f"{key}: v", f"{key}:\n", f"m:\n  {key}: v\n", f"m:\n  {key}:\nz: 3"):
            accepted += _agrees(text)
    assert accepted >= 90, accepted  # of 196: the plain identifiers


# The values the fast path takes alone: drawn more often, so that many texts are answered.
SIMPLE_VALUES = [value for value in TRICKY_VALUES if value and parse_simple(f"a: {value}") is not None]


def _random_value(rng: random.Random) -> str:
    return rng.choice(SIMPLE_VALUES if rng.random() < 0.85 else TRICKY_VALUES)


def _random_text(rng: random.Random) -> str:
    """A frontmatter-like text: mostly simple lines, sometimes something that is not."""
    lines: list[str] = []
    keys = TRICKY_KEYS[:14] if rng.random() < 0.8 else TRICKY_KEYS
    for _ in range(rng.randint(1, 6)):
        key = rng.choice(keys)
        shape = rng.random()
        if shape < 0.6:
            value = _random_value(rng)
            lines.append(f"{key}:{' ' * rng.choice((1, 1, 1, 2)) + value if value else ''}")
        elif shape < 0.7:
            lines.append(f"{key}:")
        else:
            lines.append(f"{key}:")
            indent = " " * rng.randint(1, 4)
            for _ in range(rng.randint(1, 4)):
                value = _random_value(rng)
                lines.append(f"{indent}{rng.choice(keys)}:{' ' + value if value else ''}")
        if rng.random() < 0.1:
            lines.append("")
    if rng.random() < 0.15:  # something the fast path must decline (or may take, if harmless)
        position = rng.randrange(len(lines) + 1)
        extra = rng.choice(("# c", "  more text", "   deeper: 1", "\t", " ", "- item", "...", "--- ", "%YAML 1.2"))
        lines.insert(position, extra)
    text = "\n".join(lines)
    if rng.random() < 0.5:
        text += "\n"
    if rng.random() < 0.05:
        text = text.replace("\n", "\r\n")
    return text


@pytest.mark.parametrize("seed", range(4))
def test_random_texts_fast_path_matches_full_parser(seed: int) -> None:
    rng = random.Random(seed)
    count = 1500
    accepted = sum(_agrees(_random_text(rng)) for _ in range(count))
    assert accepted >= count // 4, accepted  # the fast path does answer for a good share


# --------------------------------------------------------------------------- fallbacks

# Texts the fast path must leave to the full parser: (id, text, whether the full parser raises).
FALLBACKS: list[tuple[str, str, bool]] = [
    ("empty", "", True),
    ("blank-lines-only", "\n\n", True),
    ("comment-line", "# c\na: 1\n", False),
    ("comment-after-value", "a: 1 # c\n", False),
    ("hash-in-plain", "a: C#\n", False),
    ("hash-in-single-quoted", "a: '#x'\n", False),
    ("hash-in-double-quoted", 'a: "#x"\n', False),
    ("comment-touching-quote", 'a: "x"#c\n', True),
    ("tab-separator", "a:\tb\n", False),
    ("tab-in-value", "a: x\ty\n", False),
    ("tab-indent", "m:\n\ta: 1\n", True),
    ("tab-only-line", "a: 1\n\t\nb: 2\n", True),
    ("cr", "a: 1\r\nb: 2\r\n", False),
    ("lone-cr", "a: x\ry\n", False),
    ("bom", "\ufeffa: 1\n", False),
    ("bom-inside", "a: x\ufeffy\n", False),
    ("nel", "a: x\x85y\n", False),
    ("line-separator", "a: x\u2028y\n", False),
    ("control-char", "a: x\x01y\n", False),
    ("no-break-space", "a: x\u00a0y\n", False),
    ("private-use", "a: x\ue000y\n", False),
    ("duplicate-key", "a: 1\na: 2\n", True),
    ("duplicate-nested-key", "m:\n  a: 1\n  a: 2\n", True),
    ("duplicate-null-key", "a:\na: 1\n", True),
    ("duplicate-after-nested", "m:\n  a: 1\nm: 2\n", True),
    ("null-key", "null: a\n", False),
    ("tilde-key", "~: a\n", False),
    ("bool-key", "True: a\n", False),
    ("bool-key-collision", "true: a\nTrue: b\n", True),
    ("number-key", "1: a\n", False),
    ("quoted-key", "'a': 1\n", False),
    ("long-key", "k" * 129 + ": v\n", False),
    ("too-long-key", "k" * 1100 + ": v\n", True),
    ("anchor", "a: &x 1\n", False),
    ("alias", "a: &x 1\nb: *x\n", False),
    ("alias-unknown", "a: *x\n", True),
    ("tag", "a: !!str 1\n", False),
    ("local-tag", "a: !x 1\n", False),
    ("unsupported-tag", "a: !!binary aGk=\n", True),
    ("sequence", "a:\n  - x\n", False),
    ("sequence-at-key-column", "a:\n- x\n", False),
    ("top-level-sequence", "- x\n", True),
    ("literal-block", "a: |\n  x\n", False),
    ("folded-block", "a: >-\n  x\n", False),
    ("flow-sequence", "a: [1, 2]\n", False),
    ("flow-mapping", "a: {x: 1}\n", False),
    ("flow-unclosed", "a: [1\n", True),
    ("multi-line-plain", "a: one\n  two\n", False),
    ("multi-line-plain-in-nested", "m:\n  a: one\n   two\n", False),
    ("multi-line-quoted", "a: 'one\n  two'\n", False),
    ("indented-first-line", "  a: 1\n", False),
    ("indented-after-value", "a: 1\n  b: 2\n", True),
    ("indented-after-quoted", "a: 'x'\n  b: 2\n", True),
    ("indented-after-null-word", "a: null\n  b: 2\n", True),
    ("two-nesting-levels", "m:\n  n:\n    a: 1\n", False),
    ("nested-indent-changes", "m:\n  a: 1\n   b: 2\n", True),
    ("nested-indent-shrinks", "m:\n    a: 1\n  b: 2\n", True),
    ("blank-line-with-spaces", "a: 1\n  \nb: 2\n", False),
    ("trailing-space", "a: x \n", False),
    ("trailing-space-after-key", "a: \n", False),
    ("trailing-space-after-quote", "a: 'x' \n", False),
    ("text-after-quote", "a: 'x' y\n", True),
    ("single-quote-escape", "a: 'it''s'\n", False),
    ("double-quote-escape", 'a: "x\\ny"\n', False),
    ("double-quote-bad-escape", 'a: "\\q"\n', True),
    ("colon-space-in-value", "a: b: c\n", True),
    ("colon-at-end", "a: b:\n", True),
    ("key-without-space", "a:b\n", True),
    ("document-start", "--- \na: 1\n", False),
    ("document-end", "a: 1\n...\n", False),
    ("second-document", "a: 1\n...\nb: 2\n", True),
    ("directive", "%YAML 1.2\n--- \na: 1\n", False),
    ("yaml-11-directive", "%YAML 1.1\n--- \na: yes\n", True),
    ("explicit-key", "? a\n: 1\n", False),
    ("dash-value", "a: - x\n", True),
    ("dash-word", "a: -x\n", False),
    ("question-value", "a: ?x\n", False),
    ("at-sign", "a: @x\n", True),
    ("backtick", "a: `x`\n", True),
    ("percent-start", "a: %x\n", True),
    ("infinity", "a: .inf\n", True),
    ("nan", "a: .nan\n", True),
    ("float-overflow", "a: 1e400\n", True),
    ("int-past-double", "a: " + "9" * 401 + "\n", True),
    ("scalar-document", "just text\n", True),
]


def test_fallback_ids_are_unique() -> None:
    names = [name for name, _, _ in FALLBACKS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(("text", "raises"), [case[1:] for case in FALLBACKS], ids=[case[0] for case in FALLBACKS])
def test_fast_path_declines(text: str, raises: bool) -> None:
    assert parse_simple(text) is None
    # So parse_yaml_mapping gives the full parser's answer, errors included.
    if raises:
        with pytest.raises(FrontmatterError):
            parse_yaml_mapping(text)
    else:
        full = _full(text)
        assert not isinstance(full, FrontmatterError), full
        assert _exactly(parse_yaml_mapping(text), full)


# --------------------------------------------------------------------------- wiring


def test_simple_text_never_reaches_the_full_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str, *, path: str, first_line: int) -> dict[str, JSONValue]:
        raise AssertionError("the full parser was called")

    monkeypatch.setattr(fm, "parse_full", refuse)
    assert parse_yaml_mapping(TYPICAL)["metadata"] == {"owner": "team-a/area-8", "version": "1.2"}
    assert parse_yaml_mapping("\ufeff" + TYPICAL)["license"] == "MIT"  # the BOM is dropped first


def test_other_text_reaches_the_full_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str, int]] = []
    full = parse_full

    def spy(text: str, *, path: str, first_line: int) -> dict[str, JSONValue]:
        calls.append((text, path, first_line))
        return full(text, path=path, first_line=first_line)

    monkeypatch.setattr(fm, "parse_full", spy)
    assert parse_yaml_mapping("a: 1 # c\n", path="p/SKILL.md", first_line=2) == {"a": 1}
    assert calls == [("a: 1 # c\n", "p/SKILL.md", 2)]
    with pytest.raises(FrontmatterError) as caught:
        parse_yaml_mapping("a: 1\nb: 2\na: 3\n", first_line=10)
    assert caught.value.line == 12
    assert "first at line 10" in caught.value.message


def test_parse_skill_md_with_the_fast_path() -> None:
    raw = f"---\n{TYPICAL}\n---\n\n# skill-00042\n".encode()
    parsed = parse_skill_md(raw)
    assert parsed == ParsedSkillFile(
        frontmatter=parse_yaml_mapping(TYPICAL), body="\n# skill-00042\n", frontmatter_start_line=2
    )
    assert _exactly(parsed.frontmatter, _full(TYPICAL))
