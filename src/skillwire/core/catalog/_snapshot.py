"""The catalog itself: an immutable snapshot of the skills a server publishes, looked up by exact URI.

A reload builds a new catalog and swaps the reference, so a request sees one consistent snapshot; skills may be
built on first use (`Catalog.deferred`) so a large catalog starts fast.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from skillwire.core.catalog._directories import DirectoryChild, directory_tree, is_prefix_level, prefix_children
from skillwire.core.catalog._paging import Page, paginate
from skillwire.core.catalog._served import FileContent, Refusal, ServedFile
from skillwire.core.manifest import Skill, SkillFile
from skillwire.core.uri import enclosing_skill_uris


class BrowsableCatalog:
    """File pages and directory reads, derived from `skills`, `file` and `_tree_of`: what a `Catalog` and a
    caller's view of it (`scoped_catalog.ScopedCatalog`) answer alike."""

    _file_uris: list[str] | None

    @property
    def skills(self) -> tuple[Skill, ...]:
        raise NotImplementedError

    @property
    def skill_uris(self) -> Sequence[str]:
        raise NotImplementedError

    def file(self, uri: str) -> ServedFile | None:
        raise NotImplementedError

    def _tree_of(self, uri: str) -> dict[str, list[DirectoryChild]] | None:
        raise NotImplementedError

    def files_page(self, cursor: str | None, limit: int) -> Page[ServedFile]:
        """A page of every served file, in URI order."""
        keys, next_cursor = paginate(self._all_file_uris(), cursor, limit, scope="resources")
        served = (self.file(k) for k in keys)
        return Page(tuple(s for s in served if s is not None), next_cursor)

    def _all_file_uris(self) -> list[str]:
        uris = self._file_uris
        if uris is None:
            uris = self._file_uris = sorted({f.uri for s in self.skills for f in s.files})
        return uris

    def is_directory(self, uri: str) -> bool:
        """True for a skill's root or a folder in it, and for a prefix level above served skills."""
        tree = self._tree_of(uri)
        if tree is not None:
            return uri in tree
        return is_prefix_level(self.skill_uris, uri)

    def children_page(self, uri: str, cursor: str | None, limit: int) -> Page[DirectoryChild]:
        """A page of the direct children of the directory at `uri` (which must be a directory)."""
        tree = self._tree_of(uri)
        if tree is None and is_prefix_level(self.skill_uris, uri):
            return prefix_children(self.skill_uris, uri, cursor, limit)
        if tree is None or uri not in tree:
            raise KeyError(uri)
        kids = tree[uri]
        keys, next_cursor = paginate([k.uri for k in kids], cursor, limit, scope="dir:" + uri)
        by_uri = {k.uri: k for k in kids}
        return Page(tuple(by_uri[k] for k in keys), next_cursor)


class Catalog(BrowsableCatalog):
    """The published state: skills, their files, their directories, and what was refused.

    Construction only sorts and indexes the skills, so a rebuild that changed one skill costs
    little more than that skill: files are found through the skills that enclose them, and the
    flat file listing and each skill tree's directories are derived on first use and kept.
    """

    def __init__(
        self,
        skills: Iterable[Skill],
        locations: Mapping[str, FileContent] | Locator,
        refusals: Iterable[Refusal] = (),
        generation: int = 0,
    ) -> None:
        """`locations`: how to read each file's bytes, by file URI, or a function of (skill, file) that says."""
        self.generation = generation
        self.refusals: tuple[Refusal, ...] = tuple(refusals)
        # A deferred skill's builder may find it gone (None: withdrawn, see `deferred`).
        self._skills: dict[str, Skill | _Deferred | None] = {s.uri: s for s in sorted(skills, key=_uri_of)}
        self._skill_uris: list[str] = list(self._skills)
        self._locate: Locator = _by_uri(locations) if isinstance(locations, Mapping) else locations
        # Derived on first use; a snapshot never changes, so a value computed twice is the same value.
        self._file_uris: list[str] | None = None
        self._file_total: int | None = None  # known without building skills (a deferred catalog's locations)
        self._trees: dict[str, dict[str, list[DirectoryChild]]] = {}

    # -- skills --------------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._skills)

    @property
    def skill_uris(self) -> Sequence[str]:
        """The URI of every served skill's SKILL.md, in order (no skill is built to list them; a deferred skill
        withdrawn when built stays listed here)."""
        return self._skill_uris

    @property
    def skills(self) -> tuple[Skill, ...]:
        """Every served skill, in URI order."""
        return _present(self._get(uri) for uri in self._skill_uris)

    def skill(self, uri: str) -> Skill | None:
        """The skill whose SKILL.md is at `uri` (canonical), or None."""
        return self._get(uri) if uri in self._skills else None

    def skills_enclosing(self, uri: str, among: Container[str] | None = None) -> tuple[Skill, ...]:
        """The skills whose root is `uri` or an ancestor of it, innermost first (nested skills give several).

        `among`: only skills whose URI it holds are considered (and none other is built).
        """
        return _present(self._get(u) for u in self.skill_uris_enclosing(uri, among))

    def skill_uris_enclosing(self, uri: str, among: Container[str] | None = None) -> tuple[str, ...]:
        """`skills_enclosing` by URI, without building any skill."""
        skills = self._skills
        return tuple(u for u in enclosing_skill_uris(uri) if u in skills and (among is None or u in among))

    def skills_page(self, cursor: str | None, limit: int) -> Page[Skill]:
        """A page of skills after `cursor`, in URI order."""
        keys, next_cursor = paginate(self._skill_uris, cursor, limit, scope="skills")
        return Page(_present(self._get(k) for k in keys), next_cursor)

    # -- files -----------------------------------------------------------------------------------------------------

    def file(self, uri: str, among: Container[str] | None = None) -> ServedFile | None:
        """The served file at `uri` (canonical), or None.

        `among`: only the skills whose URI it holds count as listing it (a caller's visible skills).
        """
        record: SkillFile | None = None
        owner: Skill | None = None
        owners: list[str] = []
        for skill in self.skills_enclosing(uri, among):
            found = skill.file(uri)
            if found is not None:
                record, owner = found, skill
                owners.append(skill.uri)
        if record is None or owner is None:
            return None
        owners.sort()
        is_skill_md = uri in self._skills if among is None else uri in self._skills and uri in among
        return ServedFile(record, self._locate(owner, record), tuple(owners), is_skill_md)

    def without(self, refused: Mapping[str, Refusal]) -> Catalog:
        """This catalog less the skills `refused` names (skill URI -> why), each reason added to the refusals.

        Files are read as before and skills not built yet stay unbuilt; the generation is kept (the same scan).
        """
        if not refused:
            return self
        kept = Catalog((), self._locate, (*self.refusals, *refused.values()), self.generation)
        kept._skills = {uri: s for uri, s in self._skills.items() if uri not in refused}
        kept._skill_uris = list(kept._skills)
        return kept

    def duplicate_names(self) -> dict[str, tuple[str, ...]]:
        """Names carried by more than one served skill, each with its skills' URIs (no skill is built)."""
        return duplicate_names(self._skill_uris)

    @property
    def file_count(self) -> int:
        """How many distinct files are served (a nested skill's files count once).

        Counted skill by skill, not from the sorted list of every file URI (`resources/list` makes that one):
        `skillwire serve` and `/metrics` ask, and at 100,000 skills that list is 500,000 strings kept.
        """
        if self._file_total is None:
            self._file_total = self._count_files() if self._file_uris is None else len(self._file_uris)
        return self._file_total

    def _count_files(self) -> int:
        """Distinct file URIs: each skill's files, less those a skill enclosing it lists too (nested skills)."""
        skills = self._skills
        total = 0
        for uri in self._skill_uris:
            skill = self._get(uri)
            if skill is None:  # withdrawn when built (a restored skill the disk no longer matches)
                continue
            enclosing = (self._get(u) for u in enclosing_skill_uris(skill.root_uri) if u != uri and u in skills)
            outer = [o for o in enclosing if o is not None]
            if not outer:
                total += len(skill.files)
            else:
                total += sum(1 for f in skill.files if not any(o.file(f.uri) is not None for o in outer))
        return total

    # -- directories -----------------------------------------------------------------------------------------------

    def _tree_of(self, uri: str) -> dict[str, list[DirectoryChild]] | None:
        """The directories of the outermost skill enclosing `uri` (nested skills included), or None."""
        enclosing = self.skills_enclosing(uri)
        if not enclosing:
            return None
        outer = enclosing[-1]
        tree = self._trees.get(outer.uri)
        if tree is None:
            tree = self._trees[outer.uri] = directory_tree(self._skills_under(outer))
        return tree

    def _skills_under(self, outer: Skill) -> list[Skill]:
        """`outer` and every skill nested in it."""
        return list(_present(self._get(u) for u in self.skill_uris_under(outer.root_uri)))

    def skill_uris_under(self, root_uri: str) -> Sequence[str]:
        """The URIs of the skills at or below the directory `root_uri`, in order (none is built)."""
        prefix = root_uri + "/"
        lo = bisect_left(self._skill_uris, prefix)
        hi = bisect_left(self._skill_uris, prefix[:-1] + "0", lo)  # "0" sorts right after "/"
        return self._skill_uris[lo:hi]

    def _get(self, uri: str) -> Skill | None:
        """The skill at `uri` (which must be listed), built now if it was deferred; None if it was withdrawn."""
        found = self._skills[uri]
        if isinstance(found, _Deferred):
            skill = found.build()
            if skill is not None and skill.uri != uri:
                raise ValueError(f"a deferred skill for {uri} built {skill.uri}")
            self._skills[uri] = found = skill  # a race builds it twice; both results are equal
        return found

    @classmethod
    def deferred(
        cls,
        builders: Iterable[tuple[str, Callable[[], Skill | None]]],
        locations: Mapping[str, FileContent] | Locator,
        refusals: Iterable[Refusal] = (),
        generation: int = 0,
        *,
        file_count: int | None = None,
    ) -> Catalog:
        """A catalog whose skills are built on first use: (skill URI, builder) pairs, for a fast start.

        The URIs must be canonical and unique; each builder must return the skill at its URI, or None if it finds
        that skill gone (a restored snapshot's skill whose SKILL.md no longer matches): it is then withdrawn, served
        by no method, though `skill_uris` and `len` still count it (they build nothing).
        `file_count`, if known, answers `file_count` without building every skill (with a
        mapping of `locations`, its size is used).
        """
        catalog = cls((), locations, refusals, generation)
        pending = sorted(builders, key=_first)
        catalog._skills = {uri: _Deferred(build) for uri, build in pending}
        catalog._skill_uris = list(catalog._skills)
        catalog._file_total = len(locations) if isinstance(locations, Mapping) else file_count
        if len(catalog._skill_uris) != len(pending):
            raise ValueError("deferred skills must have unique URIs")
        return catalog


Locator = Callable[[Skill, SkillFile], FileContent]
"""How to read the bytes of a skill's file (made when a request asks, not kept for every file)."""


def _by_uri(locations: Mapping[str, FileContent]) -> Locator:
    def locate(skill: Skill, f: SkillFile) -> FileContent:
        return locations[f.uri]

    return locate


@dataclass(frozen=True, slots=True)
class _Deferred:
    build: Callable[[], Skill | None]


def _present(skills: Iterable[Skill | None]) -> tuple[Skill, ...]:
    """`skills` without the withdrawn ones."""
    return tuple(s for s in skills if s is not None)


def _first(pair: tuple[str, Callable[[], Skill | None]]) -> str:
    return pair[0]


def _uri_of(skill: Skill) -> str:
    return skill.uri


def duplicate_names(skill_uris: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Names that two or more skills of one listing share, with their SKILL.md URIs, sorted by name.

    The spec allows it (skills are told apart by path), but a host that keys skills by name sees only one of
    them: a skillwire choice to warn (issue 11). A skill's name is its last path segment (`name-mismatch`).
    """
    by_name: dict[str, list[str]] = {}
    for uri in skill_uris:
        name = unquote(uri.rsplit("/", 2)[-2])
        by_name.setdefault(name, []).append(uri)
    return {name: tuple(uris) for name, uris in sorted(by_name.items()) if len(uris) > 1}
