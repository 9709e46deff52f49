"""The Agent Skills rules for the optional frontmatter fields (spec MUST: a skill served over MCP conforms to them)."""

from __future__ import annotations

import pytest

from skillwire.core.fields import (
    ALLOWED_TOOLS_FORMAT,
    COMPATIBILITY_FORMAT,
    LICENSE_FORMAT,
    METADATA_FORMAT,
    optional_field_problem,
)

BASE = {"name": "a", "description": "d"}


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"license": "Proprietary. LICENSE.txt has complete terms"},
        {"compatibility": "Requires git, docker, jq, and access to the internet"},
        {"compatibility": "x" * 500},
        {"metadata": {"author": "example-org", "version": "1.0"}},
        {"metadata": {}},
        {"allowed-tools": "Bash(git:*) Bash(jq:*) Read"},
        {"allowed-tools": ["Read", "Write"]},
        {"other-field": [1, {"x": None}]},
    ],
)
def test_fields_the_agent_skills_spec_allows_pass(fields: dict[str, object]) -> None:
    """Spec examples and unknown fields are not refused."""
    assert optional_field_problem({**BASE, **fields}) is None


def test_metadata_list_value_is_refused() -> None:
    """K-Dense's rowan: a metadata value that is a list breaks "a map from string keys to string values"."""
    problem = optional_field_problem({**BASE, "metadata": {"skill-author": "R", "trigger-keywords": ["pKa", "SMILES"]}})
    assert problem is not None
    assert problem.rule is METADATA_FORMAT
    assert problem.message == "metadata 'trigger-keywords' is a list; metadata values must be strings"


def test_metadata_list_of_objects_is_refused() -> None:
    """K-Dense's markdown-mermaid-writing: a metadata value that is a list of mappings."""
    problem = optional_field_problem({**BASE, "metadata": {"skill-contributors": [{"name": "C", "org": "S"}]}})
    assert problem is not None
    assert problem.rule is METADATA_FORMAT


@pytest.mark.parametrize(
    ("metadata", "what"),
    [({"v": 2}, "a number"), ({"v": True}, "a boolean"), ({"v": None}, "null"), ({"v": {}}, "a mapping")],
)
def test_metadata_values_that_are_not_strings_are_refused(metadata: dict[str, object], what: str) -> None:
    """Numbers (`skills_count: 28`), booleans, nulls and mappings are not strings either: strict clients reject them."""
    problem = optional_field_problem({**BASE, "metadata": metadata})
    assert problem is not None
    assert problem.rule is METADATA_FORMAT
    assert f"is {what};" in problem.message


@pytest.mark.parametrize("metadata", [["a", "b"], "author: x", None, 3])
def test_metadata_that_is_not_a_mapping_is_refused(metadata: object) -> None:
    """`metadata` itself must be a map."""
    problem = optional_field_problem({**BASE, "metadata": metadata})
    assert problem is not None
    assert problem.rule is METADATA_FORMAT


def test_a_hostile_metadata_key_is_shortened_in_the_message() -> None:
    """A 10,000-character key does not make a 10,000-character refusal message."""
    problem = optional_field_problem({**BASE, "metadata": {"k" * 10_000: [1]}})
    assert problem is not None
    assert len(problem.message) < 200


@pytest.mark.parametrize(
    ("value", "fragment"), [("x" * 501, "501 characters"), ("", "empty"), (5, "a number"), (None, "null")]
)
def test_compatibility_over_500_characters_empty_or_not_a_string_is_refused(value: object, fragment: str) -> None:
    """Agent Skills: compatibility "Must be 1-500 characters if provided"."""
    problem = optional_field_problem({**BASE, "compatibility": value})
    assert problem is not None
    assert problem.rule is COMPATIBILITY_FORMAT
    assert fragment in problem.message


@pytest.mark.parametrize("value", [["MIT"], {"name": "MIT"}, 2.0, None])
def test_license_that_is_not_a_string_is_refused(value: object) -> None:
    """Agent Skills: license is a license name or a bundled file's name: a string."""
    problem = optional_field_problem({**BASE, "license": value})
    assert problem is not None
    assert problem.rule is LICENSE_FORMAT


@pytest.mark.parametrize("value", [{"Read": True}, 3, None, ["Read", 5], ["Read", None], ["Read", ["Bash"]]])
def test_allowed_tools_neither_string_nor_list_of_strings_is_refused(value: object) -> None:
    """Agent Skills: allowed-tools is a space-delimited string or a YAML sequence of strings."""
    problem = optional_field_problem({**BASE, "allowed-tools": value})
    assert problem is not None
    assert problem.rule is ALLOWED_TOOLS_FORMAT
