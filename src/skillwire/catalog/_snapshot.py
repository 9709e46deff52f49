"""An immutable snapshot of everything a server publishes, with keyset pagination.

A catalog is built once (by a source such as `sources.filesystem`) and never
changed: a reload builds a new catalog and swaps the reference, so a request
sees one consistent snapshot. Lookups are exact matches on canonical URIs,
which is what keeps a request from naming anything the catalog did not publish.

What a directory is (Directory Resources: "every directory level is a directory
resource"): inside a skill, its root and every folder in it that is not ignored,
whether it holds files, only ignored files or nothing (`Skill.folders`; an empty
one reads as `resources: []`); above the skills, every prefix level of a skill
path (`skill://acme` when `skill://acme/billing/SKILL.md` is served), listing the
next level down. Prefix levels are found by bisecting the sorted skill URIs, so
they cost no memory and a page costs O(page size x log skills). The scheme root
(`skill://`) is no directory: `skills/list` enumerates the skills.

    catalog = Catalog(skills, refusals)
    page = catalog.skills_page(cursor=None, limit=50)
    catalog.children_page("skill://pdf-processing/templates", cursor=None, limit=50)
"""

from __future__ import annotations

import base64
import binascii
import json
from abc import ABC, abstractmethod
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar
from urllib.parse import unquote

from skillwire.errors import SkillwireError
from skillwire.manifest import Skill, SkillFile
from skillwire.mime import DIRECTORY_MIME_TYPE
from skillwire.uri import directory_uri, enclosing_skill_uris

T = TypeVar("T")


class InvalidCursor(SkillwireError):
    """A pagination cursor that this server did not hand out (or for another listing)."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why something under a root is not served: where, which rule, and a readable reason.

    `skill` is True when a whole skill was left out, False for a skipped path
    (for example a dangling link outside any skill).
    """

    path: str
    rule: str
    message: str
    line: int | None = None
    skill: bool = True

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.message} [{self.rule}]"


@dataclass(frozen=True, slots=True)
class DirectoryChild:
    """A direct child of a directory resource: a file or a subdirectory."""

    uri: str
    name: str
    mime_type: str
    is_directory: bool


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a listing and the opaque cursor for the next, if any."""

    items: tuple[T, ...]
    next_cursor: str | None


class FileContent(Protocol):
    """How to read the bytes of one served file, as its source indexed it (a path, a blob, bytes in memory)."""

    def read(self, limit: int) -> bytes | None:
        """At most `limit` + 1 bytes of the file; None when it can no longer be read as what was indexed (gone,
        no longer a regular file, moved out of its root). Bytes that changed are returned: the caller checks the
        digest. Blocks at most as long as reading `limit` bytes takes (never waits on a FIFO or a lock)."""
        ...


class StampedContent(ABC):
    """A `FileContent` that can tell, without reading, whether its file is still the one it last read.

    A stamp is an int that changes whenever the stored bytes may have (a file's device, inode, size, mtime and
    ctime, hashed). It is what lets the server keep the verified bytes of a hot file in memory instead of
    reading and hashing them again on every request (`server/read_cache.py`). A base class rather than a
    Protocol for the reason `GeneratedContent` gives: the server asks `isinstance` on every read.
    """

    __slots__ = ()

    @abstractmethod
    def read(self, limit: int) -> bytes | None:
        """As `FileContent.read`."""

    @abstractmethod
    def read_stamped(self, limit: int) -> tuple[bytes | None, int | None]:
        """`read(limit)`, and the stamp the file had before its bytes were read; None for the stamp when it cannot
        vouch for them (it changed too recently: timestamps are coarser than writes)."""

    @abstractmethod
    def stamp(self) -> int | None:
        """The file's stamp now, reading no content (None if it cannot be had); equal stamps mean equal bytes."""


class GeneratedContent(ABC):
    """A generated (dynamic) skill's file: its bytes are produced when it is read, and no digest binds them.

    The server calls `generate` instead of `read` (there are no indexed bytes to read). A base class rather than a
    Protocol: the server asks `isinstance` on every read, which costs a Protocol's attribute walk (tens of
    microseconds) but a class check almost nothing.
    """

    __slots__ = ()

    def read(self, limit: int) -> bytes | None:
        return None

    @abstractmethod
    async def generate(self, limit: int) -> bytes:
        """The file's bytes now, at most `limit` of them; `errors.GenerationError` when they cannot be produced
        (the generator failed or took too long) or are more than `limit`. Never blocks the event loop."""


@dataclass(frozen=True, slots=True)
class ServedFile:
    """A file the catalog serves: its manifest record, how to read its bytes, and the skills listing it.

    A dynamic skill's file has a `GeneratedContent` and a record without digest or size.
    """

    file: SkillFile
    content: FileContent
    skills: tuple[str, ...]
    is_skill_md: bool


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
        keys, next_cursor = _page(self._all_file_uris(), cursor, limit, scope="resources")
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
        return _is_prefix_level(self.skill_uris, uri)

    def children_page(self, uri: str, cursor: str | None, limit: int) -> Page[DirectoryChild]:
        """A page of the direct children of the directory at `uri` (which must be a directory)."""
        tree = self._tree_of(uri)
        if tree is None and _is_prefix_level(self.skill_uris, uri):
            return _prefix_children(self.skill_uris, uri, cursor, limit)
        if tree is None or uri not in tree:
            raise KeyError(uri)
        kids = tree[uri]
        keys, next_cursor = _page([k.uri for k in kids], cursor, limit, scope="dir:" + uri)
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
        self._skills: dict[str, Skill | _Deferred] = {s.uri: s for s in sorted(skills, key=_uri_of)}
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
        """The URI of every served skill's SKILL.md, in order (no skill is built to list them)."""
        return self._skill_uris

    @property
    def skills(self) -> tuple[Skill, ...]:
        """Every served skill, in URI order."""
        return tuple(self._get(uri) for uri in self._skill_uris)

    def skill(self, uri: str) -> Skill | None:
        """The skill whose SKILL.md is at `uri` (canonical), or None."""
        return self._get(uri) if uri in self._skills else None

    def skills_enclosing(self, uri: str, among: Container[str] | None = None) -> tuple[Skill, ...]:
        """The skills whose root is `uri` or an ancestor of it, innermost first (nested skills give several).

        `among`: only skills whose URI it holds are considered (and none other is built).
        """
        return tuple(self._get(u) for u in self.skill_uris_enclosing(uri, among))

    def skill_uris_enclosing(self, uri: str, among: Container[str] | None = None) -> tuple[str, ...]:
        """`skills_enclosing` by URI, without building any skill."""
        skills = self._skills
        return tuple(u for u in enclosing_skill_uris(uri) if u in skills and (among is None or u in among))

    def skills_page(self, cursor: str | None, limit: int) -> Page[Skill]:
        """A page of skills after `cursor`, in URI order."""
        keys, next_cursor = _page(self._skill_uris, cursor, limit, scope="skills")
        return Page(tuple(self._get(k) for k in keys), next_cursor)

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

    def duplicate_names(self) -> dict[str, tuple[str, ...]]:
        """Names carried by more than one served skill, each with its skills' URIs (no skill is built)."""
        return duplicate_names(self._skill_uris)

    @property
    def file_count(self) -> int:
        """How many distinct files are served (a nested skill's files count once)."""
        if self._file_uris is None and self._file_total is not None:
            return self._file_total
        return len(self._all_file_uris())

    # -- directories -----------------------------------------------------------------------------------------------

    def _tree_of(self, uri: str) -> dict[str, list[DirectoryChild]] | None:
        """The directories of the outermost skill enclosing `uri` (nested skills included), or None."""
        enclosing = self.skills_enclosing(uri)
        if not enclosing:
            return None
        outer = enclosing[-1]
        tree = self._trees.get(outer.uri)
        if tree is None:
            tree = self._trees[outer.uri] = _directories(self._skills_under(outer))
        return tree

    def _skills_under(self, outer: Skill) -> list[Skill]:
        """`outer` and every skill nested in it."""
        return [self._get(u) for u in self.skill_uris_under(outer.root_uri)]

    def skill_uris_under(self, root_uri: str) -> Sequence[str]:
        """The URIs of the skills at or below the directory `root_uri`, in order (none is built)."""
        prefix = root_uri + "/"
        lo = bisect_left(self._skill_uris, prefix)
        hi = bisect_left(self._skill_uris, prefix[:-1] + "0", lo)  # "0" sorts right after "/"
        return self._skill_uris[lo:hi]

    def _get(self, uri: str) -> Skill:
        """The skill at `uri` (which must be served), built now if it was deferred."""
        found = self._skills[uri]
        if isinstance(found, _Deferred):
            skill = found.build()
            if skill.uri != uri:
                raise ValueError(f"a deferred skill for {uri} built {skill.uri}")
            self._skills[uri] = found = skill  # a race builds it twice; both results are equal
        return found

    @classmethod
    def deferred(
        cls,
        builders: Iterable[tuple[str, Callable[[], Skill]]],
        locations: Mapping[str, FileContent] | Locator,
        refusals: Iterable[Refusal] = (),
        generation: int = 0,
        *,
        file_count: int | None = None,
    ) -> Catalog:
        """A catalog whose skills are built on first use: (skill URI, builder) pairs, for a fast start.

        The URIs must be canonical and unique; each builder must return the skill at its URI.
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
    build: Callable[[], Skill]


def _first(pair: tuple[str, Callable[[], Skill]]) -> str:
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


def directory_tree(skills: Iterable[Skill]) -> dict[str, list[DirectoryChild]]:
    """Each directory of `skills` (their roots and every folder in them) and its direct children, sorted."""
    return _directories(skills)


def paginate(keys: Sequence[str], cursor: str | None, limit: int, *, scope: str) -> tuple[Sequence[str], str | None]:
    """The page of sorted `keys` after `cursor` (keyset pagination) and the cursor for the next page, if any."""
    return _page(keys, cursor, limit, scope=scope)


def _directories(skills: Iterable[Skill]) -> dict[str, list[DirectoryChild]]:
    """Each directory of `skills` (their roots and every folder in them) and its direct children."""
    children: dict[str, dict[str, DirectoryChild]] = {}
    for skill in skills:
        root = skill.root_uri
        children.setdefault(root, {})
        known = {root}  # folders of this skill already recorded, with every folder above them
        for folder in skill.folders:
            _add_folders(children, root, directory_uri(skill.skill_path, folder), known)
        for f in skill.files:
            uri = f.uri
            parent, _, leaf = uri.rpartition("/")
            if parent not in known:
                _add_folders(children, root, parent, known)
            kids = children[parent]
            if uri not in kids:
                name = unquote(leaf) if "%" in leaf else leaf
                kids[uri] = DirectoryChild(uri, name, f.mime_type, False)
    return {d: sorted(kids.values(), key=lambda c: c.uri) for d, kids in children.items()}


def _add_folders(children: dict[str, dict[str, DirectoryChild]], root_uri: str, folder: str, known: set[str]) -> None:
    """Record `folder` (a URI under `root_uri`) and every folder between it and the root as directory children."""
    parent = root_uri
    for part in folder[len(root_uri) + 1 :].split("/"):
        uri = f"{parent}/{part}"
        if uri not in known:
            kids = children.setdefault(parent, {})
            if uri not in kids:
                name = unquote(part) if "%" in part else part
                kids[uri] = DirectoryChild(uri, name, DIRECTORY_MIME_TYPE, True)
            children.setdefault(uri, {})
            known.add(uri)
        parent = uri


def _is_prefix_level(skill_uris: Sequence[str], uri: str) -> bool:
    """True if `uri` (canonical, not inside a served skill) is a proper prefix of a served skill's path."""
    head = uri + "/"
    at = bisect_left(skill_uris, head)
    return "://" in uri and at < len(skill_uris) and skill_uris[at].startswith(head)


def _prefix_children(skill_uris: Sequence[str], uri: str, cursor: str | None, limit: int) -> Page[DirectoryChild]:
    """A page of the next levels below the prefix level `uri`: each a directory (a skill root or a deeper prefix).

    They come in the order of the sorted skill URIs (by child URI + "/"), found by skipping from one child to
    the next with a bisect: nothing is built or kept, however many skills lie below. The cursor names the last
    child handed out (keyset), so it stays meaningful across rebuilds, like every other cursor here.
    """
    head = uri + "/"
    start = head if cursor is None else max(head, decode_cursor(cursor, "dir:" + uri) + "0")
    at = bisect_left(skill_uris, start)  # every URI under "<child>/" sorts below "<child>0": "0" follows "/"
    found: list[DirectoryChild] = []
    while at < len(skill_uris) and len(found) <= limit:
        below = skill_uris[at]
        if not below.startswith(head):
            break
        segment = below[len(head) :].partition("/")[0]
        child = head + segment
        found.append(DirectoryChild(child, unquote(segment) if "%" in segment else segment, DIRECTORY_MIME_TYPE, True))
        at = bisect_left(skill_uris, child + "0", at)
    if len(found) > limit:
        return Page(tuple(found[:limit]), encode_cursor("dir:" + uri, found[limit - 1].uri) if limit else None)
    return Page(tuple(found), None)


# Cursors are opaque to clients; inside they name the last key handed out (keyset
# pagination), so a cursor stays meaningful when the catalog is rebuilt.
_CURSOR_VERSION = 1


def encode_cursor(scope: str, last_key: str) -> str:
    raw = json.dumps({"v": _CURSOR_VERSION, "s": scope, "k": last_key}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, scope: str) -> str:
    """The last key named by `cursor`, or InvalidCursor if it is not one of ours for `scope`."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeEncodeError):
        raise InvalidCursor("Invalid cursor: not one this server handed out") from None
    if not isinstance(data, dict) or data.get("v") != _CURSOR_VERSION or not isinstance(data.get("k"), str):
        raise InvalidCursor("Invalid cursor: not one this server handed out")
    if data.get("s") != scope:
        raise InvalidCursor("Invalid cursor: it belongs to a different listing")
    key: str = data["k"]
    return key


def _page(keys: Sequence[str], cursor: str | None, limit: int, *, scope: str) -> tuple[Sequence[str], str | None]:
    start = 0 if cursor is None else bisect_right(keys, decode_cursor(cursor, scope))
    chunk = keys[start : start + limit]
    more = start + limit < len(keys)
    return chunk, (encode_cursor(scope, chunk[-1]) if more and chunk else None)
