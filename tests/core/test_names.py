"""Agent Skills naming rules and the reg-name rule for the first skill-path segment."""

from __future__ import annotations

import pytest

from skillwire.core.errors import NameRuleError
from skillwire.core.names import check_skill_name, description_problem, is_reg_name, name_problem


@pytest.mark.parametrize("name", ["a", "pdf-processing", "x1", "a" * 64, "v2-api-3"])
def test_valid_names(name: str) -> None:
    assert name_problem(name) is None
    assert check_skill_name(name) == name


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("", "empty"),
        ("a" * 65, "limit is 64"),
        ("PDF", "uppercase"),
        ("-pdf", "starts or ends with a hyphen"),
        ("pdf-", "starts or ends with a hyphen"),
        ("pdf--x", "consecutive hyphens"),
        ("pdf_x", "a-z, 0-9"),
        ("pdf x", "a-z, 0-9"),
        ("café", "a-z, 0-9"),
        (123, "must be a string"),
        (None, "must be a string, not null"),
    ],
)
def test_invalid_names_say_why(name: object, fragment: str) -> None:
    """Agent Skills MUST: 1-64 chars of a-z, 0-9 and single hyphens, no hyphen at either end."""
    problem = name_problem(name)
    assert problem is not None
    assert fragment in problem
    with pytest.raises(NameRuleError):
        check_skill_name(name)


def test_description_rules() -> None:
    """Agent Skills MUST: description non-empty, at most 1024 characters."""
    assert description_problem("Does things") is None
    assert description_problem("x" * 1024) is None
    assert "1025 characters" in (description_problem("x" * 1025) or "")
    assert "empty" in (description_problem("   ") or "")
    assert "must be a string" in (description_problem(["a"]) or "")


@pytest.mark.parametrize(("segment", "ok"), [("acme", True), (".curated", True), ("a b", False), ("a:b", False)])
def test_reg_name(segment: str, ok: bool) -> None:
    """Spec SHOULD: the first <skill-path> segment is a valid RFC 3986 reg-name."""
    assert is_reg_name(segment) is ok
