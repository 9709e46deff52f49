"""Tests of the pure host core (`skillwire.host`), plus builders for the wire entries they feed it.

raw = raw_entry("acme/billing/refunds", {"SKILL.md": skill_md("refunds"), "examples/email.md": b"Hi\\n"})
entry = make_entry("pdf-processing")      # parsed; SKILL.md only
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from skillwire.core.hosting.entry import SkillEntry, parse_entry


def digest_of(data: bytes) -> str:
    """The `sha256:{hex}` digest of raw bytes, computed here rather than by the code under test."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def skill_md(name: str, description: str = "A skill for tests", *, extra: str = "", body: str = "# Body\n") -> bytes:
    """A SKILL.md whose frontmatter holds `name`, `description` and any `extra` YAML lines."""
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}".encode()


def raw_entry(
    path: str,
    files: Mapping[str, bytes] | None = None,
    *,
    frontmatter: Mapping[str, Any] | None = None,
    scheme: str = "skill",
) -> dict[str, Any]:
    """A wire entry for the skill at `scheme://path`, its manifest computed from `files` (default: SKILL.md only)."""
    root = f"{scheme}://{path}"
    fm = dict(frontmatter) if frontmatter is not None else {"name": path.rsplit("/", 1)[-1], "description": "A skill"}
    listed = files if files is not None else {"SKILL.md": skill_md(fm["name"], fm["description"])}
    return {
        "uri": f"{root}/SKILL.md",
        "frontmatter": fm,
        "resources": [
            {"uri": f"{root}/{rel}", "digest": digest_of(data), "size": len(data)} for rel, data in listed.items()
        ],
    }


def make_entry(
    path: str,
    files: Mapping[str, bytes] | None = None,
    *,
    frontmatter: Mapping[str, Any] | None = None,
    scheme: str = "skill",
) -> SkillEntry:
    """`raw_entry`, parsed."""
    return parse_entry(raw_entry(path, files, frontmatter=frontmatter, scheme=scheme))
