"""The host's skill registry: skills from many origins, identified by (origin label, uri).

Names / Skill URIs: "The identity of an MCP-served skill is ... the pair of the
host's identity for the originating server and the skill's uri"; hosts "MUST
resolve the name within a per-origin namespace, identifying servers by a
host-assigned label"; two entries with one name in one listing MUST be
disambiguated "rather than silently discarding or preferring one"; and an
MCP-served skill "MUST NOT silently shadow ... a same-named skill from any other
origin, whether another server or the host's own filesystem skills".

Every skill gets a handle `label:name`, or `label:seg/.../name` (the shortest
distinguishing path suffix) when its origin has two skills of that name. A bare
name resolves only when exactly one origin-wide skill carries it; otherwise the
caller is told every candidate.

    registry.set_origin("docs", entries)
    registry.resolve("docs:refunds")
    registry.collisions()        # names carried by more than one skill, with their handles
    registry.search("refund a charge")   # skills of every origin, most relevant first

The search index follows every change to the registry, one skill at a time, and holds listing data only
(name, description, other frontmatter text, the skill's path): nothing is fetched to search.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from skillwire.core.errors import AmbiguousSkillName, UnknownSkill
from skillwire.core.hosting.entry import SkillEntry
from skillwire.core.search import Document, SearchIndex, skill_document
from skillwire.core.uri import normal_uri, same_uri

LOCAL_ORIGIN = "local"

_LABEL = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")


def check_label(label: str) -> str:
    """A host-assigned server label: 1-63 of a-z, 0-9, '.', '_', '-', not `local` (the host's own skills)."""
    if not _LABEL.fullmatch(label):
        raise ValueError(f"server label {label!r} must be 1-63 characters of a-z, 0-9, '.', '_' and '-'")
    if label == LOCAL_ORIGIN:
        raise ValueError(f"server label {LOCAL_ORIGIN!r} is reserved for the host's own filesystem skills")
    return label


@dataclass(frozen=True, slots=True)
class SkillKey:
    """A skill's identity across servers: the host's label for its origin, and its uri there."""

    origin: str
    uri: str

    def __str__(self) -> str:
        return f"{self.origin}:{self.uri}"


@dataclass(frozen=True, slots=True)
class RegisteredSkill:
    """One skill in the registry. `entry` is None for the host's own filesystem skills."""

    key: SkillKey
    handle: str
    name: str
    description: str
    entry: SkillEntry | None

    @property
    def origin(self) -> str:
        return self.key.origin

    @property
    def is_mcp(self) -> bool:
        return self.entry is not None


@dataclass(frozen=True, slots=True)
class LocalSkill:
    """A skill the host loads from its own filesystem (trusted differently; never shadowed)."""

    name: str
    description: str
    location: str


class Registry:
    """Skills by (origin, uri), with per-origin handles. Replacing an origin's entries rebuilds its handles."""

    def __init__(self) -> None:
        self._by_origin: dict[str, dict[str, RegisteredSkill]] = {}
        self._index = SearchIndex()

    def set_origin(self, label: str, entries: Iterable[SkillEntry]) -> None:
        """Record (or replace) every entry one server published."""
        check_label(label)
        entries = list(entries)
        handles = _handles(label, [(e.uri, e.name, _path_segments(e)) for e in entries])
        self._replace(
            label,
            {e.uri: RegisteredSkill(SkillKey(label, e.uri), handles[e.uri], e.name, e.description, e) for e in entries},
        )

    def update_entry(self, label: str, entry: SkillEntry) -> RegisteredSkill:
        """Record a fresher entry for one skill (from skills/get), adding it if it was not listed.

        Any other spelling of its uri is replaced too. Only the handles of the skills sharing its name (old or new)
        can change, so only they are rebuilt, and only this skill is re-indexed: one update does not cost a listing.
        """
        check_label(label)
        skills = self._by_origin.setdefault(label, {})
        wanted = normal_uri(entry.uri)
        stale = [skills.pop(uri) for uri in [u for u in skills if u == entry.uri or normal_uri(u) == wanted]]
        for old in stale:
            if old.key.uri != entry.uri:
                self._index.remove(old.key)
        names = {entry.name, *(old.name for old in stale)}
        group = [s for s in skills.values() if s.name in names and s.entry is not None]
        handles = _handles(
            label,
            [
                (entry.uri, entry.name, _path_segments(entry)),
                *((s.key.uri, s.name, _path_segments(s.entry)) for s in group if s.entry is not None),
            ],
        )
        for skill in group:
            if skill.handle != handles[skill.key.uri]:
                skills[skill.key.uri] = replace(skill, handle=handles[skill.key.uri])
        fresh = RegisteredSkill(SkillKey(label, entry.uri), handles[entry.uri], entry.name, entry.description, entry)
        skills[entry.uri] = fresh
        previous = next((old for old in stale if old.key.uri == entry.uri), None)
        if previous is None or _listing_text_differs(previous, fresh):
            self._index.put(_document(fresh))
        return fresh

    def set_local(self, skills: Iterable[LocalSkill]) -> None:
        """Record the host's own filesystem skills (origin `local`)."""
        skills = list(skills)
        handles = _handles(LOCAL_ORIGIN, [(s.location, s.name, [s.name]) for s in skills])
        self._replace(
            LOCAL_ORIGIN,
            {
                s.location: RegisteredSkill(
                    SkillKey(LOCAL_ORIGIN, s.location), handles[s.location], s.name, s.description, None
                )
                for s in skills
            },
        )

    def remove_origin(self, label: str) -> None:
        self._replace(label, {})
        self._by_origin.pop(label, None)

    def search(self, query: str, limit: int = 10) -> tuple[RegisteredSkill, ...]:
        """The `limit` skills of every origin most relevant to `query`, best first (`skillwire.core.search`)."""
        found = (self.get(hit.key) for hit in self._index.search(query, limit) if isinstance(hit.key, SkillKey))
        return tuple(skill for skill in found if skill is not None)

    def _replace(self, label: str, skills: dict[str, RegisteredSkill]) -> None:
        """Make `skills` the origin's, re-indexing only the skills whose listing text changed."""
        before = self._by_origin.get(label, {})
        for uri, old in before.items():
            if uri not in skills:
                self._index.remove(old.key)
        changed = [
            _document(skill)
            for uri, skill in skills.items()
            if (previous := before.get(uri)) is None or _listing_text_differs(previous, skill)
        ]
        self._index.update(changed)
        self._by_origin[label] = skills

    @property
    def origins(self) -> tuple[str, ...]:
        return tuple(self._by_origin)

    def skills(self, origin: str | None = None) -> tuple[RegisteredSkill, ...]:
        """Every registered skill (of one origin, if given), ordered by handle."""
        pool = [self._by_origin.get(origin, {})] if origin is not None else list(self._by_origin.values())
        return tuple(sorted((s for d in pool for s in d.values()), key=lambda s: s.handle))

    def get(self, key: SkillKey) -> RegisteredSkill | None:
        return self._by_origin.get(key.origin, {}).get(key.uri)

    def resolve(self, ref: str) -> RegisteredSkill:
        """The skill for a handle (`label:name`), a key (`label:scheme://...`), or a bare name unique host-wide."""
        label, sep, rest = ref.partition(":")
        if sep and label in self._by_origin and not rest.startswith("//"):
            for skill in self._by_origin[label].values():
                if skill.handle == ref or ("://" in rest and same_uri(skill.key.uri, rest)):
                    return skill
            named = sorted(s.handle for s in self._by_origin[label].values() if s.name == rest)
            if named:
                raise AmbiguousSkillName(ref, named)
            raise UnknownSkill(f"no skill {rest!r} from {label!r}")
        matches = [s for d in self._by_origin.values() for s in d.values() if s.name == ref]
        if not matches:
            raise UnknownSkill(f"no skill is called {ref!r}; list the catalog for the available handles")
        if len(matches) > 1:
            raise AmbiguousSkillName(ref, sorted(s.handle for s in matches))
        return matches[0]

    def collisions(self) -> dict[str, tuple[str, ...]]:
        """Names carried by more than one skill (within or across origins), with every handle: to show the user."""
        by_name: dict[str, list[str]] = {}
        for skill in self.skills():
            by_name.setdefault(skill.name, []).append(skill.handle)
        return {name: tuple(handles) for name, handles in sorted(by_name.items()) if len(handles) > 1}


def _path_segments(entry: SkillEntry) -> list[str]:
    """The segments of a skill's path after its scheme (`skill://a/b/SKILL.md` -> ['a', 'b']): what handles use."""
    return entry.root_uri.split("://", 1)[-1].split("/")


def _listing_text_differs(before: RegisteredSkill, after: RegisteredSkill) -> bool:
    """Whether the text search indexes of one skill (`_document`) changed: compared on its inputs, built for neither."""
    fm_before = before.entry.frontmatter if before.entry is not None else None
    fm_after = after.entry.frontmatter if after.entry is not None else None
    return (before.key, before.name, before.description, fm_before) != (
        after.key,
        after.name,
        after.description,
        fm_after,
    )


def _document(skill: RegisteredSkill) -> Document:
    """What search indexes of a skill: its name, description, other frontmatter text and the words of its path."""
    frontmatter = skill.entry.frontmatter if skill.entry is not None else {}
    return skill_document(skill.key, skill.key.uri, skill.name, skill.description, frontmatter)


def _handles(label: str, items: Sequence[tuple[str, str, Sequence[str]]]) -> dict[str, str]:
    """Handles for (id, name, path segments) within one origin: `label:name`, or the shortest unique path suffix."""
    by_name: dict[str, list[tuple[str, Sequence[str]]]] = {}
    for ident, name, segments in items:
        by_name.setdefault(name, []).append((ident, segments))
    out: dict[str, str] = {}
    for name, group in by_name.items():
        if len(group) == 1:
            out[group[0][0]] = f"{label}:{name}"
            continue
        longest = max(len(segs) for _, segs in group)
        for depth in range(2, longest + 1):
            suffixes = ["/".join(segs[-depth:]) for _, segs in group]
            if len(set(suffixes)) == len(suffixes):
                for (ident, _), suffix in zip(group, suffixes, strict=True):
                    out[ident] = f"{label}:{suffix}"
                break
        else:  # same path under different schemes: only the full uri tells them apart
            for ident, _ in group:
                out[ident] = f"{label}:{ident}"
    return out
