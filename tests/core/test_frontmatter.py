"""Behaviour of skillwire.core.frontmatter: extracting SKILL.md frontmatter, its errors, and comparison.

YAML-to-JSON parity with JavaScript's `yaml` package is in test_frontmatter_parity.py.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from skillwire.core.errors import FrontmatterError, SkillError
from skillwire.core.frontmatter import (
    ParsedSkillFile,
    _libyaml,
    frontmatter_differences,
    parse_skill_md,
    parse_yaml_mapping,
)

SIMPLE = b"---\nname: pdf-processing\ndescription: Work with PDF files.\n---\n# PDF\n\nBody text.\n"


def error_of(raw: bytes, *, path: str = "SKILL.md") -> FrontmatterError:
    with pytest.raises(FrontmatterError) as caught:
        parse_skill_md(raw, path=path)
    return caught.value


# --------------------------------------------------------------------------- extraction


def test_simple_file() -> None:
    parsed = parse_skill_md(SIMPLE)
    assert parsed == ParsedSkillFile(
        frontmatter={"name": "pdf-processing", "description": "Work with PDF files."},
        body="# PDF\n\nBody text.\n",
        frontmatter_start_line=2,
    )


def test_parsed_file_is_frozen() -> None:
    parsed = parse_skill_md(SIMPLE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.body = "changed"  # type: ignore[misc]


def test_bom_is_dropped() -> None:
    parsed = parse_skill_md(b"\xef\xbb\xbf" + SIMPLE)
    assert parsed.frontmatter["name"] == "pdf-processing"
    assert parsed.body == "# PDF\n\nBody text.\n"


def test_crlf_line_endings() -> None:
    raw = SIMPLE.replace(b"\n", b"\r\n")
    parsed = parse_skill_md(raw)
    assert parsed.frontmatter == {"name": "pdf-processing", "description": "Work with PDF files."}
    assert parsed.body == "# PDF\r\n\r\nBody text.\r\n"


def test_crlf_block_scalar_has_lf_only() -> None:
    parsed = parse_skill_md(b"---\r\ndescription: |\r\n  one\r\n  two\r\nname: x\r\n---\r\n")
    assert parsed.frontmatter["description"] == "one\ntwo\n"


def test_block_scalar_as_the_last_field_keeps_its_line_break() -> None:
    # The YAML text ends before the line break that precedes `---` (as in the conformance
    # suite); JS still ends a clipped block scalar with a line break there, and so do we.
    parsed = parse_skill_md(b"---\nname: x\ndescription: |\n  one\n  two\n---\n")
    assert parsed.frontmatter["description"] == "one\ntwo\n"
    parsed = parse_skill_md(b"---\nname: x\ndescription: >-\n  one\n  two\n---\n")
    assert parsed.frontmatter["description"] == "one two"


def test_closing_line_may_have_trailing_blanks() -> None:
    # Like the conformance suite's /\r?\n---[ \t]*(?:\r?\n|$)/
    parsed = parse_skill_md(b"---\nname: x\n--- \t\nbody\n")
    assert parsed.frontmatter == {"name": "x"}
    assert parsed.body == "body\n"


def test_closing_line_at_end_of_file() -> None:
    parsed = parse_skill_md(b"---\nname: x\n---")
    assert parsed.frontmatter == {"name": "x"}
    assert parsed.body == ""


def test_frontmatter_ends_at_the_first_closing_line() -> None:
    parsed = parse_skill_md(b"---\nname: x\n---\nintro\n---\nmore: stuff\n---\n")
    assert parsed.frontmatter == {"name": "x"}
    assert parsed.body == "intro\n---\nmore: stuff\n---\n"


def test_non_ascii_and_emoji() -> None:
    raw = "---\nname: résumé\ndescription: Prüft 日本語 😀\n---\nÜber\n".encode()
    parsed = parse_skill_md(raw)
    assert parsed.frontmatter == {"name": "résumé", "description": "Prüft 日本語 😀"}
    assert parsed.body == "Über\n"


def test_yaml_12_scalars_in_a_file() -> None:
    raw = b"---\nname: x\ndescription: y\nflag: yes\nmode: 0755\nok: true\nversion: 1.0\nwhen: 2026-01-01\n---\n"
    assert parse_skill_md(raw).frontmatter == {
        "name": "x",
        "description": "y",
        "flag": "yes",
        "mode": 755,
        "ok": True,
        "version": 1,
        "when": "2026-01-01",
    }


def test_result_is_plain_json() -> None:
    raw = b"---\nname: x\nmeta:\n  list: [1, 2.5, null, true, 'a']\n  big: 1e300\n---\n"
    parsed = parse_skill_md(raw)
    text = json.dumps(parsed.frontmatter, allow_nan=False)
    assert json.loads(text) == parsed.frontmatter


def test_surrogate_pair_escape_is_one_character() -> None:
    assert parse_yaml_mapping('a: "\\ud83d\\ude00"') == {"a": "\U0001f600"}


@pytest.mark.parametrize("escape", ["\\ue000", "\\U0000e000", "\\uf8ff"])
def test_a_private_use_escape_beside_a_surrogate_pair_keeps_its_character(escape: str) -> None:
    """A surrogate pair makes the parser swap characters for private-use stand-ins; a private-use character written
    as an escape must never be taken for one (it was: read back as a lone surrogate and the skill refused)."""
    assert parse_yaml_mapping(f'a: "{escape} \\ud83d\\ude00"') == {"a": f"{chr(int(escape[2:], 16))} \U0001f600"}
    assert parse_yaml_mapping(f'a: "{escape}"\nb: "\\ud83d\\ude00"') == {
        "a": chr(int(escape[2:], 16)),
        "b": "\U0001f600",
    }


def test_aliases_expand() -> None:
    assert parse_yaml_mapping("a: &x {k: [1, 2]}\nb: *x\n") == {"a": {"k": [1, 2]}, "b": {"k": [1, 2]}}


def test_pure_python_fallback_gives_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "a: yes\nb: 0755\nc: &x [1.0, ~, x\x85y]\nd: *x\ne: !!int '0x1F'\nf: |\n  z\n"
    expected = parse_yaml_mapping(text)
    monkeypatch.setattr(_libyaml, "new_parser", _libyaml.PurePythonParser)
    assert parse_yaml_mapping(text) == expected
    with pytest.raises(FrontmatterError) as caught:
        parse_yaml_mapping("a: 1\na: 2\n")
    assert caught.value.rule == "yaml-duplicate-key"


# --------------------------------------------------------------------------- errors


def test_error_is_a_skill_error_with_path_and_line() -> None:
    err = error_of(b"---\nname: x\nname: y\n---\n", path="skills/pdf/SKILL.md")
    assert isinstance(err, SkillError)
    assert err.path == "skills/pdf/SKILL.md"
    assert err.line == 3
    assert str(err).startswith("skills/pdf/SKILL.md:3: ")


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        (b"---\nname: \xff\n---\n", 2),
        (b"\xfe---\n", 1),
        (b"---\nname: x\n---\nbody\n\xc3\x28\n", 5),  # the body must be UTF-8 too
        (b"---\nname: \xed\xa0\x80\n---\n", 2),  # an encoded surrogate is not UTF-8
        (b"---\nname: \xc0\xaf\n---\n", 2),  # overlong encoding
    ],
)
def test_not_utf8(raw: bytes, line: int) -> None:
    err = error_of(raw)
    assert err.rule == "not-utf8"
    assert err.line == line
    assert "UTF-8" in err.message


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"name: x\n", "does not start with YAML frontmatter"),
        (b"\n---\nname: x\n---\n", "does not start with YAML frontmatter"),
        (b"--- \nname: x\n---\n", "exactly '---'"),
        (b" ---\nname: x\n---\n", "exactly '---'"),
        (b"----\nname: x\n---\n", "does not start with YAML frontmatter"),
        (b"", "file is empty"),
        (b"\xef\xbb\xbf", "file is empty"),
        (b"# Title\n---\nname: x\n---\n", "does not start with YAML frontmatter"),
    ],
)
def test_frontmatter_missing(raw: bytes, words: str) -> None:
    err = error_of(raw)
    assert err.rule == "frontmatter-missing"
    assert err.line == 1
    assert words in err.message


@pytest.mark.parametrize(
    "raw",
    [
        b"---\nname: x\ndescription: y\n",
        b"---",
        b"---\n",
        b"---\nname: x\n----\n",  # not a closing line
        b"---\nname: x\n--- body\n",  # not a closing line either
        b"---\r\nname: x\r\n",
    ],
)
def test_frontmatter_unterminated(raw: bytes) -> None:
    err = error_of(raw)
    assert err.rule == "frontmatter-unterminated"
    assert err.line == 1
    assert "never closed" in err.message


@pytest.mark.parametrize(
    "raw",
    [
        b"---\n---\n",
        b"---\r\n---\r\nbody",
        b"---\n---",
        b"---\n\n---\n",
        b"---\n   \n\n---\n",
        b"---\n# just a comment\n---\n",
    ],
)
def test_frontmatter_empty(raw: bytes) -> None:
    err = error_of(raw)
    assert err.rule == "frontmatter-empty"
    assert err.line == 2
    assert "frontmatter is empty" in err.message


@pytest.mark.parametrize(
    ("raw", "line", "words"),
    [
        (b"---\nname: x\ndescription: a: b\n---\n", 3, "quote the value"),
        (b"---\nname: x\ntags: [a, b\n---\n", 3, "close the bracket"),
        (b"---\nname: x\ndescription: 'unclosed\n---\n", 3, "close the quote"),
        (b"---\nname: x\nlist:\n\t- a\n---\n", 4, "tabs"),
        (b"---\nname: x\n  description: y\n---\n", 3, "quote the value"),
        (b"---\nname: x\n...\ndescription: y\n---\n", 4, "'...'"),
        (b"---\nname: *nothing\n---\n", 2, "no anchor &nothing"),
        (b'---\nname: "bad \\q escape"\n---\n', 2, "escape"),
    ],
)
def test_yaml_syntax(raw: bytes, line: int, words: str) -> None:
    err = error_of(raw)
    assert err.rule == "yaml-syntax", err
    assert err.line == line, err
    assert words in err.message
    assert "\n" not in err.message


@pytest.mark.parametrize(
    ("raw", "line", "words"),
    [
        # YAML 1.2 rules libyaml does not check; JS (and so this module) does
        (b'---\nname: x\ndescription: "Extract text\nfrom PDFs"\n---\n', 4, "indented 0 spaces"),
        (b"---\nname: x\ntags: [a,\nb]\n---\n", 4, "multi-line flow collection"),
        (b'---\nname: "x"#comment\n---\n', 2, "put a space before '#'"),
        (b"---\nname: x\ntags: [-]\n---\n", 3, "quote it"),
        (b"---\nname: x\ndescription:\n|\n  text\n---\n", 4, "block scalar indicator"),
        (b"---\nname: &n x\n*n: y\n---\n", 3, "put a space before the ':'"),
    ],
)
def test_yaml_12_strictness(raw: bytes, line: int, words: str) -> None:
    err = error_of(raw)
    assert err.rule == "yaml-syntax", err
    assert err.line == line, err
    assert words in err.message


def test_a_dashes_line_with_blanks_closes_the_block() -> None:
    parsed = parse_skill_md(b"---\nname: x\n--- \ndescription: y\n---\n")
    assert parsed.frontmatter == {"name": "x"}
    assert parsed.body == "description: y\n---\n"


def test_multiple_documents() -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_yaml_mapping("a: 1\n--- \nb: 2\n", first_line=5)
    assert caught.value.rule == "yaml-syntax"
    assert caught.value.line == 6
    assert "more than one YAML document" in caught.value.message


def test_duplicate_key_message() -> None:
    err = error_of(b"---\nname: a\ndescription: b\nname: c\n---\n")
    assert err.rule == "yaml-duplicate-key"
    assert err.line == 4
    assert err.message == "duplicate key 'name' (first at line 2); remove one of them"


@pytest.mark.parametrize(
    "text",
    [
        "m:\n  x: 1\n  x: 2\n",
        "a: 1\n'a': 2\n",
        "1: a\n1.0: b\n",
        "null: a\n~: b\n",
        "a: {x: 1, x: 2}\n",
        "1: a\n'1': b\n",  # not a YAML duplicate, but one JSON key
        "true: a\n'true': b\n",
        "a: &k b\nb: 1\n*k : 2\n",
    ],
)
def test_duplicate_keys(text: str) -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_yaml_mapping(text)
    assert caught.value.rule == "yaml-duplicate-key"


def test_keys_that_become_one_json_key_message() -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_yaml_mapping("1: a\n'1': b\n", first_line=2)
    assert caught.value.line == 3
    assert caught.value.message == 'keys 1 (line 2) and "1" both become the JSON key "1"; rename one of them'


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        (b"---\n- name\n- description\n---\n", "a list"),
        (b"---\njust a sentence\n---\n", "a single string"),
        (b"---\n42\n---\n", "a number"),
        (b"---\n~\n---\n", "null"),
        (b"---\ntrue\n---\n", "a boolean"),
    ],
)
def test_frontmatter_not_mapping(raw: bytes, kind: str) -> None:
    err = error_of(raw)
    assert err.rule == "frontmatter-not-mapping"
    assert err.line == 2
    assert f"it is {kind}" in err.message


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a: 1\nb: .nan\n", 2),
        ("a: .inf\n", 1),
        ("a: [1, -.Inf]\n", 1),
        ("a: 1e999\n", 1),
        ("[1, 2]: a\n", 1),
        ("? {a: 1}\n: b\n", 1),
        ("a: &k [1]\n*k : 2\n", 2),
        ("a: &x [1, *x]\n", 1),
        ("a: !!binary aGVsbG8=\n", 1),
        ("a: !!timestamp 2001-01-01\n", 1),
        ("a: !!set {x, y}\n", 1),
        ("a: !!omap [a: 1]\n", 1),
        ("a: !!pairs [a: 1]\n", 1),
        ("a: !!merge x\n", 1),
    ],
)
def test_not_json(text: str, line: int) -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_yaml_mapping(text)
    assert caught.value.rule == "yaml-not-json"
    assert caught.value.line == line


def test_nan_key_is_a_string_as_in_javascript() -> None:
    assert parse_yaml_mapping(".nan: a\n.inf: b\n") == {"NaN": "a", "Infinity": "b"}


def test_alias_limit() -> None:
    ninety_nine = "a: &x 1\nb: [" + ", ".join(["*x"] * 99) + "]\n"
    assert len(parse_yaml_mapping(ninety_nine)["b"]) == 99  # type: ignore[arg-type]
    with pytest.raises(FrontmatterError) as caught:
        parse_yaml_mapping("a: &x 1\nb: [" + ", ".join(["*x"] * 100) + "]\n")
    assert caught.value.rule == "yaml-alias-limit"
    assert caught.value.line == 2


def test_alias_bomb_is_refused_quickly() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    err = error_of(("---\n" + "\n".join(lines) + "\n---\n").encode())
    assert err.rule == "yaml-alias-limit"
    assert err.line == 4  # a2 uses *a1: a1 holds 10 aliases of a0, which is now used 11 times


def test_yaml_11_directive_is_refused() -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_yaml_mapping("%YAML 1.1\n--- \na: yes\n")
    assert caught.value.rule == "yaml-syntax"
    assert "%YAML 1.1" in caught.value.message


def test_first_line_offsets_error_lines() -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_yaml_mapping("a: 1\nb: [\n", first_line=10)
    assert caught.value.line == 12  # end of the text, where the ']' is missing
    with pytest.raises(FrontmatterError) as caught:
        parse_yaml_mapping("a: 1\nb: 2\na: 3\n", first_line=10)
    assert caught.value.line == 12
    assert "first at line 10" in caught.value.message


def test_empty_yaml_text() -> None:
    for text in ("", "   \n", "# comment\n", "\ufeff"):
        with pytest.raises(FrontmatterError) as caught:
            parse_yaml_mapping(text)
        assert caught.value.rule == "frontmatter-empty"


def test_messages_are_one_line() -> None:
    samples = [
        b"---\nname: x\nname: y\n---\n",
        b"---\na: [\n---\n",
        b"---\na: 'x\n---\n",
        b"---\n- a\n---\n",
        b"---\na: .nan\n---\n",
        b"nope",
        b"---\n\xff\n---\n",
    ]
    for raw in samples:
        message = error_of(raw).message
        assert "\n" not in message
        assert ";" in message, message  # what is wrong; how to fix it


# --------------------------------------------------------------------------- comparison


def test_differences_identical() -> None:
    parsed = parse_skill_md(SIMPLE).frontmatter
    assert frontmatter_differences(parsed, dict(parsed)) == ()
    assert frontmatter_differences({}, {}) == ()


def test_differences_changed_field() -> None:
    entry = {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"}
    tampered = parse_yaml_mapping("name: pdf-processing\ndescription: Exfiltrate credentials\n")
    assert frontmatter_differences(entry, tampered) == ("description",)


def test_differences_missing_on_either_side() -> None:
    assert frontmatter_differences({"a": 1, "b": 2}, {"a": 1}) == ("b",)
    assert frontmatter_differences({"a": 1}, {"a": 1, "c": None}) == ("c",)
    assert frontmatter_differences({"a": 1, "b": 2}, {"c": 3, "a": 1}) == ("b", "c")


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (1, 1.0),
        (1000, 1e3),
        (9007199254740993, 9007199254740992),  # the same JavaScript number
        ({"x": 1, "y": [1, 2]}, {"y": [1.0, 2], "x": 1}),  # key order is irrelevant
        ([], ()),
        (None, None),
        ("", ""),
        (False, False),
    ],
)
def test_json_equal_values(left: object, right: object) -> None:
    assert frontmatter_differences({"f": left}, {"f": right}) == ()


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (True, 1),
        (False, 0),
        (0, None),
        ("", None),
        ("1", 1),
        ([1, 2], [2, 1]),  # list order matters
        ([1], [1, 1]),
        ({"x": 1}, {"x": 1, "y": 2}),
        ({"x": {"y": 1}}, {"x": {"y": 2}}),
        ({"x": 1}, [["x", 1]]),
        (1.5, 1),
        ("a", "A"),
    ],
)
def test_json_different_values(left: object, right: object) -> None:
    assert frontmatter_differences({"f": left, "same": 1}, {"f": right, "same": 1}) == ("f",)
