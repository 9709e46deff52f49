"""The Agent Skills rules for the optional frontmatter fields: `license`, `compatibility`, `metadata`, `allowed-tools`.

Skills extension: a skill served over MCP MUST conform to the Agent Skills specification, so a skill whose optional
fields break its rules is refused (FastMCP's client rejects a whole listing over one such entry, the TS SDK's
`SkillsClient` rejects the entry). Each rule is one `Rule` (id and fix) here, and its message is built here; the
server (`sources.filesystem`) and `skillwire validate` both read them from this module.

    problem = optional_field_problem({"metadata": {"tags": ["a", "b"]}})
    problem.rule.id      # 'metadata-format'
    problem.message      # "metadata 'tags' is a list; ..."
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from skillwire.core.names import json_type

__all__ = [
    "ALLOWED_TOOLS_FORMAT",
    "COMPATIBILITY_FORMAT",
    "LICENSE_FORMAT",
    "MAX_COMPATIBILITY_LENGTH",
    "METADATA_FORMAT",
    "RULES",
    "FieldProblem",
    "Rule",
    "optional_field_problem",
]

# Agent Skills, `compatibility` field: "Must be 1-500 characters if provided".
MAX_COMPATIBILITY_LENGTH = 500
_SHOWN_KEY = 40  # characters of a metadata key quoted in a message


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule the server refuses a skill for: its stable id and how to fix a skill that breaks it."""

    id: str
    fix: str


@dataclass(frozen=True, slots=True)
class FieldProblem:
    """One broken rule and what exactly is wrong."""

    rule: Rule
    message: str


# Agent Skills, `license` field: "License name or reference to a bundled license file"; "We recommend keeping it
# short (either the name of a license or the name of a bundled license file)". A name is a string.
LICENSE_FORMAT = Rule("license-format", "make 'license' a string: a license name (MIT) or a bundled file (LICENSE.txt)")

# Agent Skills, `compatibility` field: "Must be 1-500 characters if provided".
COMPATIBILITY_FORMAT = Rule(
    "compatibility-format", "make 'compatibility' a string of 1-500 characters, or delete the field"
)

# Agent Skills, `metadata` field: "A map from string keys to string values".
METADATA_FORMAT = Rule(
    "metadata-format",
    "write each metadata value as one string: quote numbers and booleans, join a list into one string "
    "('a, b'), and move nested data into a file of the skill",
)

# Agent Skills, `allowed-tools` field: "Accepts either: A space-delimited string; A YAML sequence of strings"
# (earlier text: "A space-delimited list of tools"). A list is accepted and warned about (`lint`): hosts written
# to the earlier text may expect a string. Anything else fits neither text.
ALLOWED_TOOLS_FORMAT = Rule(
    "allowed-tools-format", "write 'allowed-tools' as one space-delimited string: allowed-tools: Read Bash(git:*)"
)

RULES: tuple[Rule, ...] = (LICENSE_FORMAT, COMPATIBILITY_FORMAT, METADATA_FORMAT, ALLOWED_TOOLS_FORMAT)


def optional_field_problem(frontmatter: Mapping[str, object]) -> FieldProblem | None:
    """The first optional field of `frontmatter` (rendered as JSON) that breaks its Agent Skills rule, or None."""
    if "license" in frontmatter:
        value = frontmatter["license"]
        if not isinstance(value, str):
            return FieldProblem(LICENSE_FORMAT, f"license must be a string, not {json_type(value)}")
    if "compatibility" in frontmatter:
        value = frontmatter["compatibility"]
        if not isinstance(value, str):
            return FieldProblem(COMPATIBILITY_FORMAT, f"compatibility must be a string, not {json_type(value)}")
        if not value:
            return FieldProblem(COMPATIBILITY_FORMAT, "compatibility is empty; it must be 1-500 characters if given")
        if len(value) > MAX_COMPATIBILITY_LENGTH:
            return FieldProblem(
                COMPATIBILITY_FORMAT,
                f"compatibility is {len(value)} characters; the limit is {MAX_COMPATIBILITY_LENGTH}",
            )
    if "metadata" in frontmatter:
        problem = _metadata_problem(frontmatter["metadata"])
        if problem is not None:
            return FieldProblem(METADATA_FORMAT, problem)
    if "allowed-tools" in frontmatter:
        value = frontmatter["allowed-tools"]
        if isinstance(value, list):
            for item in value:
                if not isinstance(item, str):
                    return FieldProblem(
                        ALLOWED_TOOLS_FORMAT, f"allowed-tools lists {json_type(item)}; every tool must be a string"
                    )
        elif not isinstance(value, str):
            return FieldProblem(
                ALLOWED_TOOLS_FORMAT, f"allowed-tools must be a string (or a list of strings), not {json_type(value)}"
            )
    return None


def _metadata_problem(metadata: object) -> str | None:
    # Keys need no check: the JSON rendering (`skillwire.core.frontmatter`) turns every YAML key into a string, as
    # JavaScript does.
    if not isinstance(metadata, dict):
        return f"metadata must be a mapping of string keys to string values, not {json_type(metadata)}"
    for key, value in metadata.items():
        if not isinstance(value, str):
            shown = key if len(key) <= _SHOWN_KEY else key[:_SHOWN_KEY] + "..."
            return f"metadata {shown!r} is {json_type(value)}; metadata values must be strings"
    return None
