"""Verification on read: size, digest and frontmatter checks a host applies before using content.

Integrity and Verification: "When a host retrieves a file listed in a skill's
resources, it MUST verify the content against that entry's digest and size ...
hosts MUST NOT use the unverified content." A size mismatch is a failure
"whether or not the host goes on to compute the digest". Frontmatter
Verification: after fetching SKILL.md "hosts MUST parse its YAML frontmatter and
compare it field-by-field against the entry's frontmatter".

    verify_bytes(entry.skill_md, data)        # raises SizeMismatch / DigestMismatch
    verify_frontmatter(entry, data)           # raises FrontmatterMismatch
"""

from __future__ import annotations

from skillwire.core.digest import sha256_digest
from skillwire.core.errors import DigestMismatch, FrontmatterError, FrontmatterMismatch, SizeMismatch
from skillwire.core.frontmatter import ParsedSkillFile, frontmatter_differences, parse_skill_md
from skillwire.core.hosting.entry import EntryResource, SkillEntry


def verify_bytes(resource: EntryResource, data: bytes) -> None:
    """Raise unless `data` has exactly the entry's size and digest. Size is checked first, without hashing."""
    if len(data) != resource.size:
        raise SizeMismatch(resource.uri, expected=resource.size, actual=len(data))
    actual = sha256_digest(data)
    if actual != resource.digest:
        raise DigestMismatch(resource.uri, expected=resource.digest, actual=actual)


def verify_frontmatter(entry: SkillEntry, skill_md: bytes) -> ParsedSkillFile:
    """Parse SKILL.md and compare its frontmatter field by field with the entry's; return the parsed file."""
    try:
        parsed = parse_skill_md(skill_md, path=entry.uri)
    except FrontmatterError as err:
        raise FrontmatterMismatch(entry.uri, fields=(f"(unparseable: {err.message})",)) from err
    fields = frontmatter_differences(entry.frontmatter, parsed.frontmatter)
    if fields:
        raise FrontmatterMismatch(entry.uri, fields=fields)
    return parsed
