"""Several sources served as one: each member under an optional prefix, no skill path offered twice.

A member's skills appear under its prefix (`team` turns `skill://pdf/SKILL.md` into `skill://team/pdf/SKILL.md`).
A skill path offered by two members is served by neither: each copy is refused (rule `duplicate-uri`) naming both
origins, at start and at every rebuild, so which one a client gets never depends on order. A skill of one member
inside another member's skill folder is refused the same way (rule `overlapping-sources`): a manifest lists only
its own source's files. The composite has every optional ability of the port and passes each call to the members
that have it; places (`IncrementalSource`) are prefixed with the member's index, so each goes back to its own.

    source = CompositeSource([Member(FolderSource(["skills/"])), Member(MemorySource(files), prefix=("generated",))])
    catalog = source.scan()
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import anyio
from anyio.abc import TaskStatus

from skillwire.core.catalog import Catalog, FileContent, Refusal
from skillwire.core.manifest import Skill, SkillFile
from skillwire.core.names import is_reg_name
from skillwire.core.skill_rules import file_uris, manifest_order
from skillwire.core.uri import PREFIX, directory_uri, enclosing_skill_uris
from skillwire.sources.port import (
    DEFAULT_PACE,
    IncrementalSource,
    Rebuild,
    RestorableSource,
    SkillSource,
    Staleness,
    StaleReportingSource,
    WatchableSource,
    WatchPace,
)

__all__ = ["CompositeSource", "Member", "prefix_problem"]


def prefix_problem(prefix: Sequence[str]) -> str | None:
    """Why `prefix` cannot be put in front of skill paths, or None: each segment a URI reg-name, not `.`/`..`."""
    for segment in prefix:
        if segment in (".", "..") or not is_reg_name(segment):
            return (
                f"prefix segment {segment!r} must be letters, digits and '-._~!$&'()*+,;=' (a URI authority), "
                "not '.' or '..'"
            )
    return None


@dataclass(frozen=True, slots=True)
class Member:
    """A source in a composite, and the skill path its skills are served under (empty: as they are)."""

    source: SkillSource
    prefix: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        problem = prefix_problem(self.prefix)
        if problem is not None:
            raise ValueError(problem)


@dataclass(slots=True)
class _Published:
    """What one member last gave, and its skills as published (prefixed, reused while unchanged)."""

    catalog: Catalog
    skills: dict[str, tuple[Skill, Skill]] = field(default_factory=dict)  # published URI -> (member's, published)


class CompositeSource(IncrementalSource, WatchableSource, RestorableSource, StaleReportingSource):
    """Skills from several sources at once (see the module docstring)."""

    def __init__(self, members: Iterable[Member]) -> None:
        self.members: tuple[Member, ...] = tuple(members)
        if not self.members:
            raise ValueError("a composite source needs at least one member")
        self._last: list[_Published | None] = [None] * len(self.members)
        self._origin: dict[str, int] = {}  # published skill URI -> member index, as last published

    @property
    def label(self) -> str:
        return " + ".join(_shown_member(m) for m in self.members)

    @property
    def revision(self) -> str | None:
        found = [f"{m.source.label}@{m.source.revision}" for m in self.members if m.source.revision is not None]
        return "; ".join(found) if found else None

    # -- building ------------------------------------------------------------------------------------------------

    def scan(self, generation: int = 0) -> Catalog:
        """Scan every member and publish their skills together."""
        return self._publish([m.source.scan(generation) for m in self.members], generation)

    def restore(self, generation: int = 0) -> Catalog | None:
        """Each member's kept snapshot (a member without one is scanned); None when no member kept one."""
        restored = [
            m.source.restore(generation) if isinstance(m.source, RestorableSource) else None for m in self.members
        ]
        if all(r is None for r in restored):
            return None
        catalogs = [
            r if r is not None else m.source.scan(generation) for m, r in zip(self.members, restored, strict=True)
        ]
        return self._publish(catalogs, generation)

    @property
    def verified(self) -> bool:
        return all(m.source.verified for m in self.members if isinstance(m.source, RestorableSource))

    def staleness(self) -> tuple[Staleness, ...]:
        """Every member's stale parts, each named with its member's prefix."""
        found: list[Staleness] = []
        for m in self.members:
            if isinstance(m.source, StaleReportingSource):
                head = "/".join(m.prefix)
                found += [replace(s, part=f"{head}={s.part}") if head else s for s in m.source.staleness()]
        return tuple(found)

    def update(self, places: Iterable[str], generation: int) -> Catalog:
        """Pass each place to the member it came from (an incremental member re-indexes what it touches, another
        one rescans); the other members' last catalogs are kept."""
        by_member: dict[int, list[str]] = {}
        for place in places:
            index, sep, own = place.partition(":")
            if sep and index.isdigit() and int(index) < len(self.members):
                by_member.setdefault(int(index), []).append(own)
        catalogs: list[Catalog] = []
        for i, member in enumerate(self.members):
            last = self._last[i]
            source = member.source
            if last is not None and i not in by_member:
                catalogs.append(last.catalog)
            elif last is not None and isinstance(source, IncrementalSource):
                catalogs.append(source.update(by_member[i], generation))
            else:
                catalogs.append(source.scan(generation))
        return self._publish(catalogs, generation)

    def changed(self, skill_uri: str) -> bool:
        found = self._member_of(skill_uri)
        if found is None:
            return False
        i, own = found
        source = self.members[i].source
        return isinstance(source, IncrementalSource) and source.changed(own)

    def places_for(self, uri: str) -> list[str]:
        found = self._member_of(uri)
        if found is None:
            return []
        i, own = found
        source = self.members[i].source
        if not isinstance(source, IncrementalSource):
            return [f"{i}:"]  # the member as a whole: it is rescanned
        return [f"{i}:{place}" for place in source.places_for(own)]

    async def watch(
        self,
        rebuild: Rebuild,
        *,
        pace: WatchPace = DEFAULT_PACE,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Watch every member that can be watched, each change passed on with its member's places. A member that
        cannot watch but was only restored (a kept snapshot not checked yet) is rescanned once, in the background,
        as a watching member checks its own snapshot on starting."""

        def for_member(i: int) -> Rebuild:
            async def member_rebuild(places: Sequence[str] | None) -> None:
                await rebuild(None if places is None else [f"{i}:{p}" for p in places] or [f"{i}:"])

            return member_rebuild

        async with anyio.create_task_group() as tg:
            for i, member in enumerate(self.members):
                if isinstance(member.source, WatchableSource):
                    await tg.start(_watch_one, member.source, for_member(i), pace)
            task_status.started()
            unchecked = [
                f"{i}:"
                for i, m in enumerate(self.members)
                if isinstance(m.source, RestorableSource)
                and not isinstance(m.source, WatchableSource)
                and not m.source.verified
            ]
            if unchecked:
                await rebuild(unchecked)

    # -- publishing ----------------------------------------------------------------------------------------------

    def _member_of(self, uri: str) -> tuple[int, str] | None:
        """The member serving the skill or file at published `uri`, and the URI that member knows it by."""
        for skill_uri in enclosing_skill_uris(uri):
            i = self._origin.get(skill_uri)
            if i is not None:
                prefix = self.members[i].prefix
                if not prefix:
                    return i, uri
                head = directory_uri(prefix)
                return (i, PREFIX + uri[len(head) + 1 :]) if uri.startswith(head + "/") else None
        return None

    def _publish(self, catalogs: list[Catalog], generation: int) -> Catalog:
        """Every member's skills under its prefix, minus those offered twice or nested across members."""
        offers: dict[str, list[int]] = {}
        published: list[_Published] = []
        for i, (member, catalog) in enumerate(zip(self.members, catalogs, strict=True)):
            last = self._last[i]
            kept = last.skills if last is not None else {}
            now = _Published(catalog)
            for skill in catalog.skills:
                prefixed = _prefixed(skill, member.prefix, kept)
                now.skills[prefixed.uri] = (skill, prefixed)
                offers.setdefault(prefixed.uri, []).append(i)
            published.append(now)
        self._last = list(published)
        refusals: list[Refusal] = [r for catalog in catalogs for r in catalog.refusals]
        roots = {_root_of(uri): i for uri, found in offers.items() if len(found) == 1 for i in found}
        skills: list[Skill] = []
        origin: dict[str, int] = {}
        for uri, found in sorted(offers.items()):
            if len(found) > 1:
                names = " and ".join(_shown_member(self.members[i]) for i in found)
                refusals.extend(
                    Refusal(
                        f"{self.members[i].source.label}: {uri}",
                        "duplicate-uri",
                        f"{uri} is offered by {names}; neither is served (give one of them a prefix)",
                    )
                    for i in found
                )
                continue
            i = found[0]
            other = _enclosing_other(_root_of(uri), roots, i)
            if other is not None:
                refusals.append(
                    Refusal(
                        f"{self.members[i].source.label}: {uri}",
                        "overlapping-sources",
                        f"{uri} lies inside a skill folder of {_shown_member(self.members[other])}; a manifest "
                        "lists one source's files only (give one of them a prefix)",
                    )
                )
                continue
            skills.append(published[i].skills[uri][1])
            origin[uri] = i
        self._origin = origin
        return Catalog(skills, _Locator(tuple(published), origin), refusals, generation=generation)


def _root_of(skill_uri: str) -> str:
    return skill_uri.rpartition("/")[0]


def _enclosing_other(root: str, roots: dict[str, int], own: int) -> int | None:
    """The member (not `own`) with a skill whose folder encloses the folder `root`, or None."""
    folder = root.rpartition("/")[0]
    while len(folder) > len(PREFIX):  # "skill://team", not "skill:/"
        i = roots.get(folder)
        if i is not None and i != own:
            return i
        folder = folder.rpartition("/")[0]
    return None


def _prefixed(skill: Skill, prefix: tuple[str, ...], kept: dict[str, tuple[Skill, Skill]]) -> Skill:
    """`skill` under `prefix`: the same object without one, the one made last time if `skill` is unchanged."""
    if not prefix:
        return skill
    path = prefix + skill.skill_path
    known = kept.get(directory_uri(path) + "/SKILL.md")
    if known is not None and known[0] is skill:
        return known[1]
    rels = [f.rel_path for f in skill.files]
    uris = file_uris(directory_uri(path) + "/", rels)
    files = sorted(
        (SkillFile(f.rel_path, uri, f.digest, f.size, f.mime_type) for f, uri in zip(skill.files, uris, strict=True)),
        key=manifest_order,
    )
    return Skill(path, skill.frontmatter, tuple(files), skill.folders, dynamic=skill.dynamic, meta=skill.meta)


@dataclass(frozen=True, slots=True)
class _Locator:
    """How to read a published file: through the catalog of the member that serves its skill."""

    published: tuple[_Published, ...]
    origin: dict[str, int]

    def __call__(self, skill: Skill, f: SkillFile) -> FileContent:
        member = self.published[self.origin[skill.uri]]
        own = member.skills[skill.uri][0]
        served = member.catalog.file(own.root_uri + f.uri[len(skill.root_uri) :])
        if served is None:  # cannot happen: the member published this file in this skill
            raise KeyError(f.uri)
        return served.content


def _shown_member(member: Member) -> str:
    return f"{'/'.join(member.prefix)}={member.source.label}" if member.prefix else member.source.label


async def _watch_one(
    source: WatchableSource, rebuild: Rebuild, pace: WatchPace, *, task_status: TaskStatus[None]
) -> None:
    await source.watch(rebuild, pace=pace, task_status=task_status)
