"""`skillwire.core.lint`: portability warnings for a SKILL.md (skillwire choices, not spec MUSTs).

Each rule gets a fixture SKILL.md that triggers it, with the line and column it must name and
the quoting it must suggest; a clean file gets no warning, and the quoted forms are clean.
"""

from __future__ import annotations

import pytest

from skillwire.core.lint import LintWarning, lint_skill_md


def _skill(*fields: str, body: str = "Body.\n") -> bytes:
    return ("---\nname: demo\ndescription: Demo skill\n" + "".join(f + "\n" for f in fields) + "---\n" + body).encode()


def _rules(raw: bytes) -> list[str]:
    return [w.rule for w in lint_skill_md(raw)]


def test_a_clean_skill_has_no_warnings() -> None:
    assert lint_skill_md(_skill("version: 1.2", "enabled: true", "count: 3")) == []


@pytest.mark.parametrize(
    ("field", "rule", "fix"),
    [
        ("enabled: yes", "yaml11-bool", "'yes'"),
        ("flag: off", "yaml11-bool", "'off'"),
        ("short: y", "yaml11-bool", "'y'"),
        ("mode: 0755", "yaml11-octal", "'0755'"),
        ("time: 1:30", "yaml11-sexagesimal", "'1:30'"),
        ("count: 1_000", "yaml11-number", "'1_000'"),
        ("mask: 0b101", "yaml11-number", "'0b101'"),
        ("perm: 0o17", "yaml12-number", "'0o17'"),
        ("size: 1e3", "yaml12-number", "'1e3'"),
        ("updated: 2024-01-31", "yaml11-date", "'2024-01-31'"),
        ("id: 12345678901234567890", "integer-precision", "'12345678901234567890'"),
    ],
)
def test_values_that_yaml_1_1_and_1_2_read_differently_are_named_with_their_quoting(
    field: str, rule: str, fix: str
) -> None:
    warnings = lint_skill_md(_skill(field), path="demo/SKILL.md")
    assert [w.rule for w in warnings] == [rule]
    (warning,) = warnings
    assert warning.path == "demo/SKILL.md"
    assert warning.line == 4
    assert warning.column == field.index(": ") + 3
    assert fix in warning.fix
    assert str(warning).startswith(f"demo/SKILL.md:4:{warning.column}: ")


@pytest.mark.parametrize("field", ["enabled: 'yes'", 'mode: "0755"', "updated: '2024-01-31'", "id: 9007199254740991"])
def test_quoted_or_safe_values_are_not_warned(field: str) -> None:
    assert _rules(_skill(field)) == []


def test_a_merge_key_is_warned() -> None:
    assert _rules(_skill("base: &b {a: 1}", "other:", "  <<: *b")) == ["yaml11-merge"]


def test_colon_space_in_a_flow_sequence_item_is_warned() -> None:
    (warning,) = lint_skill_md(_skill("tags: [a: b, c]"))
    assert warning.rule == "colon-in-value"
    assert warning.line == 4


def test_a_comment_that_cuts_a_plain_value_is_warned() -> None:
    raw = b"---\nname: demo\ndescription: For C# and F #1 projects\n---\n"
    (warning,) = lint_skill_md(raw)
    assert warning.rule == "comment-cuts-value"
    assert warning.line == 3
    assert "#1 projects" in warning.message


def test_crlf_and_bom_are_warned() -> None:
    raw = b"\xef\xbb\xbf" + _skill().replace(b"\n", b"\r\n")
    assert _rules(raw) == ["bom", "crlf"]


def test_a_description_near_the_limit_is_warned() -> None:
    raw = _skill().replace(b"Demo skill", b"x" * 950)
    (warning,) = lint_skill_md(raw)
    assert (warning.rule, warning.line) == ("description-near-limit", 3)


def test_a_description_over_the_limit_in_utf16_units_is_warned() -> None:
    raw = _skill().replace(b"Demo skill", ("\U0001f600" * 600).encode())
    assert _rules(raw) == ["description-utf16"]


def test_a_description_over_the_limit_is_left_to_the_refusal() -> None:
    assert _rules(_skill().replace(b"Demo skill", b"x" * 1100)) == []


@pytest.mark.parametrize("raw", [b"", b"no frontmatter", b"---\nname: [\n---\n", b"\xff\xfe", b"---\nname: x\n"])
def test_broken_files_give_no_error_only_what_can_be_said(raw: bytes) -> None:
    assert all(isinstance(w, LintWarning) for w in lint_skill_md(raw))


@pytest.mark.parametrize(
    "field", ["allowed-tools: [Read, Write, Edit, Bash]", "allowed-tools:\n  - Read\n  - Bash(git:*)"]
)
def test_allowed_tools_as_a_list_is_warned_with_the_string_form(field: str) -> None:
    """Agent Skills: a list is accepted only by the later text; hosts written to the space-delimited string may fail."""
    (warning,) = lint_skill_md(_skill(field))
    assert (warning.rule, warning.line) == ("allowed-tools-list", 4)
    assert warning.fix.startswith("write it as one string: allowed-tools: Read ")


@pytest.mark.parametrize("field", ["allowed-tools: Read Bash(git:*)", "allowed-tools: [Read, 5]", "allowed-tools: 5"])
def test_allowed_tools_as_a_string_or_refused_shape_is_not_warned(field: str) -> None:
    """A string is the spec's own form; shapes that fit neither text are refused (fields.py), not warned."""
    assert "allowed-tools-list" not in _rules(_skill(field))
