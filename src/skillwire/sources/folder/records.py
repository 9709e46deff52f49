"""What the folder source knows of its roots: file records, walks, built skills, per-root state.

Plain values shared by the walk, the hashing, the index, the incremental update and the snapshot modules, and
the small path helpers they all use (root-relative paths are "/"-separated, "" is the root).
"""

from __future__ import annotations

import heapq
import os
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from skillwire.core.catalog import Refusal, StampedContent
from skillwire.core.digest import Digest
from skillwire.core.errors import SkillError
from skillwire.core.manifest import Skill, SkillFile
from skillwire.core.mime import DEFAULT_MIME_TYPE
from skillwire.core.skill_rules import (
    shown_name,
)
from skillwire.core.uri import SKILL_FILE
from skillwire.sources.digest_cache import RACY_NS, file_key
from skillwire.sources.ignore import IgnoreRules
from skillwire.sources.safe_open import open_regular, read_at_most

Progress = Callable[[int, int], None]
"""Called while files are hashed with (files done, files to do); the last call has done == total."""


@dataclass(slots=True)
class FileRecord:
    """One file under a root, and what is known of its content once hashed.

    Its root-relative path (`rel`) is kept in two parts, `head` + `tail`: a walk gives the files of one folder
    one shared head (the folder's path) and each its name as tail (names repeat: "SKILL.md"), so 500,000 files
    hold no path string each. Constructed with one path and no head, the tail is the whole path.
    """

    tail: str  # the path after `head` ("/"-separated)
    location: str | None  # resolved real path; None for the usual one, the real root + "/" + rel (saves a string)
    size: int = 0
    # hash((dev, ino, size, mtime_ns, ctime_ns)) at the read, None until hashed: one int, not a tuple of five,
    # since 50,000 files each keep one. Equal stamps mean an unchanged file (a collision is 1 in 2**64, and
    # reads re-hash the bytes they send anyway).
    stamp: int | None = None
    digest: Digest | None = None  # the raw sha256 (`digest.compact_digest`), or a digest cache's text that is not one
    mime: str = DEFAULT_MIME_TYPE
    # A SKILL.md's parsed frontmatter and its first line, or why it did not parse.
    frontmatter: tuple[dict[str, Any], int] | SkillError | None = None
    # hash((st_dev, st_ino)) the walk saw, until hashed: a file opened by path that is this one is where the walk
    # found it (inside the root), so its path need not be resolved again.
    ident: int | None = None
    head: str = field(default="", kw_only=True)  # "" or a folder path ending in "/", shared by a folder's files

    @property
    def rel(self) -> str:
        """Root-relative, "/"-separated."""
        return self.head + self.tail


@dataclass(slots=True)
class Walk:
    """What one walk of one folder tree found."""

    root: str
    files: list[FileRecord] = field(default_factory=list)
    bad_paths: list[Refusal] = field(default_factory=list)
    skill_dirs: list[str] = field(default_factory=list)
    # Each skill folder's real folder (None: the usual one, the real root + "/" + its path) and ignore rules.
    skill_rules: dict[str, tuple[str | None, IgnoreRules]] = field(default_factory=dict)
    linked: bool = False  # a symbolic link was followed: a path's location is not root + rel
    folders: list[str] = field(default_factory=list)  # empty branches: folders below which nothing was recorded
    # Folders handed off to be walked elsewhere, and folders below which only those lie, children before parents.
    deferred: list[str] = field(default_factory=list)
    # The last scan's records by path (a rescan's): a file found at the same place is listed as that record, not a
    # new one, so a rescan of an unchanged tree makes no record (`index_skills` never changes one it did not make).
    reuse: Mapping[str, FileRecord] | None = None


@dataclass(frozen=True, slots=True)
class Built:
    """A served skill, where its files live, and what its folder looked like when indexed."""

    skill: Skill
    moved: dict[str, str] | None  # files (by path in the skill) whose location is not real_dir/path: links
    shown_root: str  # the root as it was named (shared by its skills): `display` is it joined with `rel_dir`
    apart: str | None  # the real folder when it is not `root` + "/" + `rel_dir` (reached through a link), else None
    rel_dir: str
    rules: IgnoreRules
    root: str
    signature: int  # hash of the folder as walked: files with their stamps, bad paths and empty folders

    @property
    def real_dir(self) -> str:
        """The skill's real folder (resolved path)."""
        if self.apart is not None:
            return self.apart
        return self.root + "/" + self.rel_dir if self.rel_dir else self.root

    @property
    def display(self) -> str:
        """The skill's folder as the root was named (what refusals and `where` show)."""
        return os.path.join(self.shown_root, self.rel_dir) if self.rel_dir else self.shown_root

    def location(self, f: SkillFile) -> str:
        """Where the bytes of this skill's file `f` live."""
        if self.moved is not None and f.rel_path in self.moved:
            return self.moved[f.rel_path]
        return self.real_dir + "/" + f.rel_path


@dataclass(slots=True)
class RootState:
    """Everything indexed under one root: the walk (sorted by path) and each skill folder's result."""

    root: Path
    real_root: str
    files: list[FileRecord]  # sorted by path (`span_of` finds a folder's)
    folders: list[str]  # sorted: the empty branches (`Skill.folders`), root-relative
    bad_paths: list[Refusal]
    skill_dirs: list[str]  # sorted
    rules: dict[str, tuple[str | None, IgnoreRules]]  # as `Walk.skill_rules`
    results: dict[str, Built | Refusal]
    linked: bool
    trusted_before_ns: int  # stamps older than this were hashed by a scan that started later


class NeedFullScan(Exception):
    """An incremental update met something it cannot patch (links, a folder turned file): rescan the root."""


@dataclass(frozen=True, slots=True)
class Prior:
    """What the last scan of a root knew: files by path (with stamps and digests), skills by folder."""

    records: Mapping[str, FileRecord]
    results: dict[str, Built | Refusal]
    trusted_before_ns: int
    from_cache: bool = False  # a digest cache's word, not this process's own scan: SKILL.md is read again
    checked: set[str] = field(default_factory=set)  # ... except these, which `restore` read itself
    rules: dict[str, tuple[str | None, IgnoreRules]] = field(default_factory=dict)  # as `RootState.rules`

    @classmethod
    def of(cls, state: RootState) -> Prior:
        return cls(ByPath(state.files), state.results, state.trusted_before_ns, rules=state.rules)


_NEAR = 8  # how far around the last record found a lookup looks before bisecting everything


class ByPath(Mapping[str, FileRecord]):
    """Records sorted by path, looked up by path with a bisect: a rescan's view of the last scan's records without
    a dictionary of every path (a key string per file, all made at once).

    A rescan looks its paths up in order (the index, sorted) or folder by folder (the walk), so a lookup first
    tries the record after the last one found, then the few around it, and bisects the whole list only when the
    path lies elsewhere: each probe makes a path string, and a full bisect makes 16 at 50,000 files."""

    def __init__(self, files: Sequence[FileRecord]) -> None:
        self._files = files
        self._next = 0  # after the last record found: a hint only (a stale one costs a probe, never an answer)

    def __getitem__(self, rel: str) -> FileRecord:
        files, at = self._files, self._next
        if at < len(files) and files[at].rel == rel:
            self._next = at + 1
            return files[at]
        lo, hi = max(0, at - _NEAR), min(len(files), at + _NEAR)
        if not (lo < hi and files[lo].rel <= rel <= files[hi - 1].rel):
            lo, hi = 0, len(files)
        at = bisect_left(files, rel, lo, hi, key=rel_of)
        if at < len(files) and files[at].rel == rel:
            self._next = at + 1
            return files[at]
        raise KeyError(rel)

    def __iter__(self) -> Iterator[str]:
        return (f.rel for f in self._files)

    def __len__(self) -> int:
        return len(self._files)


@dataclass(frozen=True, slots=True)
class FolderFile(StampedContent):
    """A served file on disk (a `FileContent` with stamps): its resolved real path, as indexed."""

    path: str

    def read(self, limit: int) -> bytes | None:
        """At most `limit` + 1 bytes of the regular file at `path`, opened as indexed; None if it is not that.

        `open_regular` never waits on a FIFO swapped in since indexing, follows no link that was not there,
        and checks the open file really is at `path` (a folder on the way swapped for a link is caught),
        so a read blocks no request and never reads past one byte more than the manifest lists.
        """
        return self.read_stamped(limit)[0]

    def read_stamped(self, limit: int) -> tuple[bytes | None, int | None]:
        """`read`, and the open file's stamp from its fstat before the read (a write after it changes the ctime);
        no stamp for a file changed within `RACY_NS` of now."""
        try:
            fd, st = open_regular(self.path, real_path=self.path)
        except OSError:
            return None, None
        try:
            data = read_at_most(fd, min(limit, st.st_size) + 1)
        except OSError:
            return None, None
        finally:
            os.close(fd)
        recent = time.time_ns() - RACY_NS
        return data, (hash(file_key(st)) if st.st_mtime_ns < recent and st.st_ctime_ns < recent else None)

    def stamp(self) -> int | None:
        """The stamp of what is at `path` now (not following a link there): another file, or this one changed,
        has another stamp; a folder on the way turned into a link leads to another file."""
        try:
            return hash(file_key(os.lstat(self.path)))
        except OSError:
            return None


def printable(refusal: Refusal) -> Refusal:
    """`refusal` with names that are not UTF-8 escaped (see `shown_name`): what is published can be encoded."""
    if refusal.path.isascii() and refusal.message.isascii():
        return refusal
    path, message = shown_name(refusal.path), shown_name(refusal.message)
    if (path, message) == (refusal.path, refusal.message):
        return refusal
    return Refusal(path, refusal.rule, message, refusal.line, refusal.skill)


def rel_of(f: FileRecord) -> str:
    return f.rel


def merged(runs: Sequence[list[FileRecord]]) -> list[FileRecord]:
    """The records of `runs` (each sorted by path) in path order. A sort by key would make every path string at
    once (50 MB at 500,000 files); the handed-off folders of a cold scan are disjoint subtrees, so their runs
    are only put in order (a merge, making one path at a time, if some do interleave)."""
    ordered = sorted((run for run in runs if run), key=lambda run: run[0].rel)
    if all(a[-1].rel < b[0].rel for a, b in pairwise(ordered)):
        return [f for run in ordered for f in run]
    return list(heapq.merge(*ordered, key=rel_of))


def span_of(files: Sequence[FileRecord], folder: str) -> tuple[int, int]:
    """The slice of `files` (sorted by path) that lies under `folder` ("" is everything): a skill's files."""
    if not folder:
        return 0, len(files)
    lo = bisect_left(files, folder + "/", key=rel_of)
    return lo, bisect_left(files, folder + "0", lo, key=rel_of)  # "0" sorts right after "/"


def in_some_skill(rel: str, skill_dirs: set[str], memo: dict[str, bool], *, root_is_skill: bool) -> bool:
    """True if some folder above `rel` is a skill (`memo` caches the answer per folder)."""
    if root_is_skill:
        return True
    return folder_in_skill(rel.rpartition("/")[0], skill_dirs, memo)


def folder_in_skill(folder: str, skill_dirs: set[str], memo: dict[str, bool]) -> bool:
    if not folder:
        return False
    found = memo.get(folder)
    if found is None:
        found = folder in skill_dirs or folder_in_skill(folder.rpartition("/")[0], skill_dirs, memo)
        memo[folder] = found
    return found


def signature_of(
    members: Sequence[FileRecord], bad_paths: Iterable[Refusal], skill_dir: str, folders: Sequence[str]
) -> int:
    """What a walk saw of one skill folder, without reading content (its files with their stamps, bad paths
    and empty folders, root-relative and sorted), hashed: equal for an unchanged folder."""
    files = tuple((f.rel, f.stamp) for f in members)
    bad = tuple(sorted((b.path, b.rule) for b in bad_paths if is_under(b.path, skill_dir)))
    return hash((files, bad, tuple(folders)))


def bad_paths_outside_skills(state: RootState) -> list[Refusal]:
    """Problems found while walking that lie in no skill: reported, but they refuse nothing."""
    if not state.bad_paths:
        return []
    skill_dirs = set(state.skill_dirs)
    memo: dict[str, bool] = {}
    root_is_skill = "" in skill_dirs
    return [
        Refusal(bad.path, bad.rule, bad.message, skill=False)
        for bad in state.bad_paths
        if not (bad.path in skill_dirs or in_some_skill(bad.path, skill_dirs, memo, root_is_skill=root_is_skill))
    ]


SLASH_SKILL_FILE = "/" + SKILL_FILE


def is_inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def is_under(rel: str, folder: str) -> bool:
    return folder in ("", rel) or rel.startswith(folder + "/")


def join_rel(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name
