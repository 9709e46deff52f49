"""Naming rules for skills and skill paths.

Agent Skills: a name is 1-64 characters of lowercase ASCII letters, digits and
hyphens, neither starting nor ending with a hyphen, with no two hyphens in a row,
and equal to its directory's name. Skills extension (Resource Mapping): the last
<skill-path> segment is the name; the first segment occupies the URI authority
and SHOULD be a valid RFC 3986 reg-name.

    check_skill_name("pdf-processing")          # passes
    check_skill_name("PDF")                      # raises NameRuleError
    is_reg_name(".curated")                      # True
"""

from __future__ import annotations

import re

from skillwire.core.errors import NameRuleError

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024

# name = 1*64( a-z / 0-9 / "-" ), no leading, trailing or doubled hyphen.
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")

# RFC 3986: reg-name = *( unreserved / pct-encoded / sub-delims ); we accept the
# characters that need no encoding, so a folder name maps to an authority as-is.
_REG_NAME = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=]+")


def name_problem(name: object) -> str | None:
    """Why `name` is not a valid Agent Skills name, or None if it is."""
    if not isinstance(name, str):
        return f"name must be a string, not {json_type(name)}"
    if not name:
        return "name is empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"name is {len(name)} characters; the limit is {MAX_NAME_LENGTH}"
    if _NAME.fullmatch(name):
        return None
    if name != name.lower():
        return f"name {name!r} has uppercase letters; use lowercase a-z, 0-9 and hyphens"
    if name.startswith("-") or name.endswith("-"):
        return f"name {name!r} starts or ends with a hyphen"
    if "--" in name:
        return f"name {name!r} has consecutive hyphens"
    return f"name {name!r} may only contain a-z, 0-9 and single hyphens"


def check_skill_name(name: object, *, path: str | None = None, line: int | None = None) -> str:
    """Return `name` if it satisfies the Agent Skills naming rules, else raise NameRuleError."""
    problem = name_problem(name)
    if problem is not None:
        raise NameRuleError(problem, rule="name-format", path=path, line=line)
    assert isinstance(name, str)
    return name


def description_problem(description: object) -> str | None:
    """Why `description` is not a valid Agent Skills description, or None if it is."""
    if not isinstance(description, str):
        return f"description must be a string, not {json_type(description)}"
    if not description.strip():
        return "description is empty; say what the skill does and when to use it"
    if len(description) > MAX_DESCRIPTION_LENGTH:
        return f"description is {len(description)} characters; the limit is {MAX_DESCRIPTION_LENGTH}"
    return None


def is_reg_name(segment: str) -> bool:
    """True if `segment` can stand as a URI authority (RFC 3986 reg-name) without encoding."""
    return _REG_NAME.fullmatch(segment) is not None


def json_type(value: object) -> str:
    """How a JSON value's type reads in a message: 'a list', 'a number', 'null'."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
