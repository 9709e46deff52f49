"""Skill entries and their manifests: the unit a host verifies and an approval binds to.

Skill Entries / Resources / Limits: an entry is {uri, frontmatter, resources};
`resources` lists every file of the skill exactly once (SKILL.md included, nested
skills' files included) with the digest and size of its raw bytes, or is the
string "dynamic". A skill over 512 entries or 16 MiB SHOULD NOT be served.

    files = (SkillFile("SKILL.md", "skill://a/SKILL.md", digest, 151, "text/markdown"),)
    skill = Skill(("a",), frontmatter, files)
    skill.to_entry()   # {"uri": ..., "frontmatter": ..., "resources": [...]}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from skillwire.core.errors import LimitExceeded
from skillwire.core.uri import SKILL_FILE, directory_uri, skill_uri

MAX_RESOURCES = 512
_SCANNED_UP_TO = 8
MAX_TOTAL_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill: where it is in the skill, its URI, and what its raw bytes hash to."""

    rel_path: str
    uri: str
    digest: str
    size: int
    mime_type: str

    def to_wire(self) -> dict[str, Any]:
        """The SkillResource JSON object."""
        return {"uri": self.uri, "digest": self.digest, "size": self.size}


@dataclass(frozen=True, slots=True)
class Skill:
    """A served skill: its path in the namespace, verbatim frontmatter, and complete manifest.

    `files` holds SKILL.md first, then every other file in path order. `folders`: the empty branches of its
    tree, sorted (paths in the skill of the deepest folders holding no served file, each implying the
    folders above it): directories too (an empty one reads as `resources: []`), though no manifest lists them.
    `dynamic`: the files are produced when they are read (Resources: "the server MUST set resources to the
    string 'dynamic'"); their records then carry no digest ("") and size 0, and the entry lists none of them.
    `meta`: the entry's `_meta` (None: none), annotations under a reverse-domain prefix of their own (Security
    Considerations: "Intermediaries MAY attach provenance or verification annotations via _meta"); a gateway's
    skills carry their upstream there. It is never part of the manifest.
    """

    skill_path: tuple[str, ...]
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]
    folders: tuple[str, ...] = ()
    dynamic: bool = False
    meta: Mapping[str, Any] | None = None
    uri: str = field(init=False)
    root_uri: str = field(init=False)
    # Files by URI, for a skill with more than _SCANNED_UP_TO files (None otherwise: a scan of a few is as fast,
    # and 100,000 small skills would hold a dict each).
    _by_uri: dict[str, SkillFile] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "uri", skill_uri(self.skill_path))
        object.__setattr__(self, "root_uri", directory_uri(self.skill_path))
        if not self.files or self.files[0].rel_path != SKILL_FILE:
            raise ValueError(f"{self.uri}: the manifest must start with {SKILL_FILE}")
        by_uri = {f.uri: f for f in self.files} if len(self.files) > _SCANNED_UP_TO else None
        object.__setattr__(self, "_by_uri", by_uri)

    def file(self, uri: str) -> SkillFile | None:
        """This skill's file at `uri`, or None."""
        if self._by_uri is not None:
            return self._by_uri.get(uri)
        for f in self.files:
            if f.uri == uri:
                return f
        return None

    @property
    def name(self) -> str:
        """The skill's name: the last segment of its path (equal to frontmatter.name)."""
        return self.skill_path[-1]

    @property
    def total_size(self) -> int:
        return sum(f.size for f in self.files)

    def to_entry(self) -> dict[str, Any]:
        """The Skill entry JSON object, identical for skills/list and skills/get."""
        entry: dict[str, Any] = {
            "uri": self.uri,
            "frontmatter": self.frontmatter,
            "resources": "dynamic" if self.dynamic else [f.to_wire() for f in self.files],
        }
        if self.meta is not None:
            entry["_meta"] = dict(self.meta)
        return entry


def check_limits(sizes: Iterable[int], *, path: str) -> None:
    """Raise LimitExceeded if a skill with these file sizes is over 512 files or 16 MiB."""
    count = 0
    total = 0
    for size in sizes:
        count += 1
        total += size
    if count > MAX_RESOURCES:
        raise LimitExceeded(
            f"skill has {count} files; the limit is {MAX_RESOURCES} (split it or ignore files with .skillwireignore)",
            rule="limit-files",
            path=path,
        )
    if total > MAX_TOTAL_BYTES:
        raise LimitExceeded(
            f"skill files total {total:,} bytes; the limit is {MAX_TOTAL_BYTES:,} (16 MiB)",
            rule="limit-size",
            path=path,
        )
