"""Skills from folders: walk roots, find every SKILL.md, hash every file, and build a Catalog.

A skill is a folder holding a `SKILL.md` file; skills may nest (the enclosing
skill's manifest lists the nested skill's files too) and may sit in hidden
folders. The skill path is the folder's path relative to the root; when a root
is itself a skill, its own folder name is the path. Symbolic links are followed
only when their target, fully resolved, stays inside the root; a link that
leaves the root or dangles is refused, and so is any skill that contains one
(a manifest must be complete, so a skill missing a file is not served). One
bad skill never stops the others: it is left out with a `Refusal`. A file or
folder whose name is not valid UTF-8 refuses the skill holding it, or the skill it
is (rule `file-name-encoding`, the name shown with its bad bytes as `\\xNN`), and no
file so named (or below such a folder) is ever opened; outside every skill such a
file is only reported as a skipped path. So does a name holding a control character
or a backslash (`file-name-control`, `file-name-backslash`), and a file whose URI is
longer than a read may be (`uri-too-long`): every file listed can be read. Files are only ever
opened through `safe_open.open_regular` (no wait on a FIFO, no link followed,
at most size + 1 bytes read).

The source remembers what it indexed. A later `scan()` re-reads only files whose
(device, inode, size, mtime, ctime) changed, and `update(paths)` re-walks only the
skills (or folders) holding the given changed paths, so an edit in a large catalog
costs about as much as the skill it touched.

    source = FolderSource(["skills/"])
    catalog = source.scan()
    catalog.refusals                           # what was left out, and why
    catalog = source.update(["skills/pdf/SKILL.md"], generation=1)
"""

from __future__ import annotations

import bisect
import errno
import gc
import hashlib
import logging
import os
import re
import stat
import sys
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskStatus

from skillwire.catalog import Catalog, Refusal
from skillwire.digest import sha256_digest
from skillwire.errors import SkillError
from skillwire.manifest import Skill, SkillFile
from skillwire.mime import DEFAULT_MIME_TYPE, mime_type_for
from skillwire.skill_rules import (
    FileFacts,
    build_skill,
    check_frontmatter,
    encodes,
    file_uris,
    looks_like_text,
    manifest_order,
    read_frontmatter,
    shown_name,
    span,
)
from skillwire.sources.digest_cache import RACY_NS, DigestCache, file_key
from skillwire.sources.digest_cache import ignored as cache_ignored
from skillwire.sources.ignore import IGNORE_FILE, IgnoreRules, builtin_ignored
from skillwire.sources.port import (
    DEFAULT_PACE,
    IncrementalSource,
    Rebuild,
    RestorableSource,
    WatchableSource,
    WatchPace,
)
from skillwire.sources.safe_open import UnsafeFile, open_regular, read_at_most, read_regular
from skillwire.uri import SKILL_FILE, UNADDRESSABLE, directory_uri

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
"""Called while files are hashed with (files done, files to do); the last call has done == total."""

_PROGRESS_EVERY = 512


@dataclass(slots=True)
class _FileRecord:
    """One file under a root, and what is known of its content once hashed."""

    rel: str  # root-relative, "/"-separated
    location: str | None  # resolved real path; None for the usual one, the real root + "/" + rel (saves a string)
    size: int = 0
    # hash((dev, ino, size, mtime_ns, ctime_ns)) at the read, None until hashed: one int, not a tuple of five,
    # since 50,000 files each keep one. Equal stamps mean an unchanged file (a collision is 1 in 2**64, and
    # reads re-hash the bytes they send anyway).
    stamp: int | None = None
    digest: str | None = None
    mime: str = DEFAULT_MIME_TYPE
    # A SKILL.md's parsed frontmatter and its first line, or why it did not parse.
    frontmatter: tuple[dict[str, Any], int] | SkillError | None = None
    # hash((st_dev, st_ino)) the walk saw, until hashed: a file opened by path that is this one is where the walk
    # found it (inside the root), so its path need not be resolved again.
    ident: int | None = None


@dataclass(slots=True)
class _Walk:
    """What one walk of one folder tree found."""

    root: str
    files: list[_FileRecord] = field(default_factory=list)
    bad_paths: list[Refusal] = field(default_factory=list)
    skill_dirs: list[str] = field(default_factory=list)
    skill_rules: dict[str, tuple[str, IgnoreRules]] = field(default_factory=dict)
    linked: bool = False  # a symbolic link was followed: a path's location is not root + rel


@dataclass(frozen=True, slots=True)
class _Built:
    """A served skill, where its files live, and what its folder looked like when indexed."""

    skill: Skill
    moved: dict[str, str] | None  # files (by path in the skill) whose location is not real_dir/path: links
    display: str
    real_dir: str
    rel_dir: str
    rules: IgnoreRules
    root: str
    signature: int  # hash of the folder as walked: files with their stamps, and bad paths

    def location(self, f: SkillFile) -> str:
        """Where the bytes of this skill's file `f` live."""
        if self.moved is not None and f.rel_path in self.moved:
            return self.moved[f.rel_path]
        return self.real_dir + "/" + f.rel_path


@dataclass(slots=True)
class _RootState:
    """Everything indexed under one root: the walk (sorted by path) and each skill folder's result."""

    root: Path
    real_root: str
    files: list[_FileRecord]
    rels: list[str]  # [f.rel for f in files], for bisecting
    bad_paths: list[Refusal]
    skill_dirs: list[str]  # sorted
    rules: dict[str, tuple[str, IgnoreRules]]
    results: dict[str, _Built | Refusal]
    linked: bool
    trusted_before_ns: int  # stamps older than this were hashed by a scan that started later


class _NeedFullScan(Exception):
    """An incremental update met something it cannot patch (links, a folder turned file): rescan the root."""


@dataclass(frozen=True, slots=True)
class FolderFile:
    """A served file on disk (a `FileContent`): its resolved real path, as indexed."""

    path: str

    def read(self, limit: int) -> bytes | None:
        """At most `limit` + 1 bytes of the regular file at `path`, opened as indexed; None if it is not that.

        `read_regular` never waits on a FIFO swapped in since indexing, follows no link that was not there,
        and checks the open file really is at `path` (a folder on the way swapped for a link is caught),
        so a read blocks no request and never reads past one byte more than the manifest lists.
        """
        try:
            return read_regular(self.path, limit=limit, real_path=self.path)
        except OSError:
            return None


class FolderSource(IncrementalSource, WatchableSource, RestorableSource):
    """A source of skills: one or more root folders on the local filesystem.

    `digest_cache`: a file remembering digests across restarts (see `sources.digest_cache`).
    `progress`: called while files are hashed (for a progress bar on a terminal).
    `project_ignores`: while looking for skills, pass over what a source tree holds but never means to publish:
    virtualenvs (a folder holding `pyvenv.cfg`), `node_modules`, and what `.gitignore` files ignore. Inside a
    skill only the server's own rules apply. `skillwire validate` turns it on; `serve` does not.
    """

    def __init__(
        self,
        roots: Iterable[str | os.PathLike[str]],
        *,
        digest_cache: str | os.PathLike[str] | None = None,
        progress: Progress | None = None,
        project_ignores: bool = False,
    ) -> None:
        self.roots: tuple[Path, ...] = tuple(Path(r) for r in roots)
        if not self.roots:
            raise ValueError("FolderSource needs at least one root folder")
        self.digest_cache_path: Path | None = Path(digest_cache) if digest_cache is not None else None
        self.progress = progress
        self.project_ignores = project_ignores
        self._cache: DigestCache | None = None
        self._states: list[_RootState | Refusal] = []
        self._index: dict[str, _Built] = {}
        self._logged: set[Refusal] = set()
        self._publish_refusals: list[Refusal] = []
        self._restored = False  # published from the digest cache's snapshot; nothing checked on disk yet
        # That snapshot, its catalog and the SKILL.md files read to make it, until the first scan.
        self._restored_from: tuple[Any, Catalog, _Checked] | None = None
        self._distrust: set[str] = set()  # during update(): locations to read again whatever their stamp
        self._cache_reported = False

    @property
    def label(self) -> str:
        return "folder " + ", ".join(shown_name(str(r)) for r in self.roots)

    @property
    def revision(self) -> str | None:
        return None

    def where(self, skill_uri: str) -> str | None:
        """The served skill's folder as the roots were named (for messages), or None if not served."""
        built = self._index.get(skill_uri)
        return built.display if built is not None else None

    def places_for(self, uri: str) -> list[str]:
        """The path of the file at `uri` in the last index (its skill folder is walked again for it)."""
        scheme, sep, path = uri.partition("://")
        while sep and path:
            built = self._index.get(f"{scheme}{sep}{path}/{SKILL_FILE}")
            found = built.skill.file(uri) if built is not None else None
            if built is not None and found is not None:
                return [built.location(found)]
            path = path.rpartition("/")[0]
        return []

    async def watch(
        self,
        rebuild: Rebuild,
        *,
        pace: WatchPace = DEFAULT_PACE,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Follow the roots with `watchfiles` and `rebuild` after each burst of changes (see `folder_watch`)."""
        from skillwire.sources.folder_watch import watch_folders  # watchfiles loads only when watching

        await watch_folders(self.roots, rebuild, pace=pace, task_status=task_status)

    def scan(self, generation: int = 0) -> Catalog:
        """Walk every root and build a catalog; files unchanged since the last scan are not read again.

        The last scan is this source's own, or else the digest cache's snapshot (if one was kept for these roots).
        """
        cache = self._cache
        if cache is None and self.digest_cache_path is not None:
            cache = self._cache = DigestCache.load(self.digest_cache_path)
        with _gc_paused():
            if self._states:
                priors = [_Prior.of(state) if isinstance(state, _RootState) else None for state in self._states]
            else:
                priors = self._priors_from(cache)
            self._states = [self._scan_root(root, prior) for root, prior in zip(self.roots, priors, strict=True)]
            catalog = self._publish(generation)
            self._restored, self._restored_from = False, None
            if cache is not None:
                trusted = [s.trusted_before_ns if isinstance(s, _RootState) else None for s in self._states]
                cache.save(self._snapshot(), trusted_before_ns=trusted)
        return catalog

    def _priors_from(self, cache: DigestCache | None) -> list[_Prior | None]:
        """What the digest cache's snapshot says each root held (None for a root it does not cover).

        After `restore()`, its decoded snapshot and catalog are used, so the skills it published are shared."""
        none: list[_Prior | None] = [None] * len(self.roots)
        snapshot, restored, checked = self._restored_from or (cache.snapshot() if cache is not None else None, None, {})
        if snapshot is None:
            return none
        try:
            trusted = cache.trusted_before_ns if cache is not None else []
            priors = _priors(snapshot, self.roots, trusted, restored, checked)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, SkillError) as exc:
            self._cache_ignored(f"unusable ({exc})")
            return none
        if priors is None:
            self._cache_ignored("it was written for other roots, or a root now resolves elsewhere")
            return none
        return priors

    def _cache_ignored(self, why: str) -> None:
        """Say once (at the default log level) that the digest cache is not used, and why."""
        if not self._cache_reported:
            self._cache_reported = True
            cache_ignored(self.digest_cache_path, why)

    @property
    def verified(self) -> bool:
        """False while the catalog was only restored from the digest cache and the disk is not yet checked."""
        return not self._restored

    def restore(self, generation: int = 0) -> Catalog | None:
        """The catalog the digest cache's snapshot holds for these roots, read from the cache alone.

        This is the near-instant restart: nothing on disk is walked, and only each skill's
        SKILL.md is read (the frontmatter published is parsed from bytes whose digest the
        cache lists, never taken from the cache's text; a skill whose SKILL.md does not
        match is left for the scan). The caller must `scan()` soon after (the server does
        so in the background). Until then `changed()` answers True for every skill, and
        reads still re-hash what they send. None when there is no cache, no snapshot, or
        one for other roots.
        """
        if self.digest_cache_path is None or self._states:
            return None
        cache = self._cache = self._cache or DigestCache.load(self.digest_cache_path)
        with _gc_paused():
            snapshot = cache.snapshot()
            if snapshot is None:
                return None
            try:
                restored = _restore(snapshot, self.roots, generation, time.time_ns() - RACY_NS)
            except (ValueError, TypeError, KeyError, IndexError, AttributeError, SkillError) as exc:
                self._cache_ignored(f"unusable ({exc})")
                return None
        if restored is None:
            self._cache_ignored("it was written for other roots, or a root now resolves elsewhere")
            return None
        catalog, dropped, checked = restored
        if dropped:
            cache_ignored(
                self.digest_cache_path,
                f"{len(dropped)} skill(s) in it do not match the disk (SKILL.md changed, moved or not as recorded), "
                f"so they are not restored but indexed afresh: {', '.join(shown_name(d) for d in dropped[:5])}"
                + (" ..." if len(dropped) > 5 else ""),
            )
        self._restored, self._restored_from = True, (snapshot, catalog, checked)
        logger.info("restored %d skills from %s; checking the disk next", len(catalog), self.digest_cache_path)
        return catalog

    def _snapshot(self) -> dict[str, Any]:
        """What `restore` and the next scan need, JSON-ready: per root, each served skill with its files
        (digest, size, type and stamp), and the refusals."""
        roots: list[dict[str, Any] | None] = []
        for state in self._states:
            if not isinstance(state, _RootState):
                roots.append(None)
                continue
            rows = []
            for skill_dir in state.skill_dirs:
                built = state.results[skill_dir]
                if not isinstance(built, _Built) or self._index.get(built.skill.uri) is not built:
                    continue
                lo, hi = span(state.rels, skill_dir)
                members = state.files[lo:hi]  # in path order; a skill lists SKILL.md first
                cut = len(skill_dir) + 1 if skill_dir else 0
                md = state.files[bisect.bisect_left(state.rels, skill_dir + "/" + SKILL_FILE if cut else SKILL_FILE)]
                line = md.frontmatter[1] if isinstance(md.frontmatter, tuple) else 1
                rows.append(
                    [
                        skill_dir,
                        list(built.skill.skill_path),
                        built.skill.frontmatter,
                        line,
                        built.real_dir,
                        not built.rules.specs,
                        [rec.rel[cut:] for rec in members],
                        [rec.digest for rec in members],
                        [rec.size for rec in members],
                        [rec.mime for rec in members],
                        [rec.stamp for rec in members],
                        built.moved or {},
                    ]
                )
            roots.append({"real": state.real_root, "skills": rows})
        return {
            "roots": [os.path.abspath(r) for r in self.roots],
            "stamps": _STAMP_SCHEME,
            "per_root": roots,
            "refusals": [[r.path, r.rule, r.message, r.line, r.skill] for r in self._publish_refusals],
        }

    def update(self, paths: Iterable[str | os.PathLike[str]], generation: int) -> Catalog:
        """Apply changes at `paths` (files or folders, changed, added or removed) and build a catalog.

        Only the skill folders holding a path (or, outside any skill, the folder holding it)
        are walked again; everything else is taken from the last scan. A root whose walk
        followed symbolic links, or that has not been scanned, is rescanned whole.
        """
        named = [os.fspath(p) for p in paths]
        # Each path named is read and hashed again even if its stamp looks unchanged: a read that found bytes
        # other than the published digest names the file here, and a stamp can lie (a forged digest cache).
        self._distrust = {os.path.abspath(p) for p in named}
        try:
            return self._update(named, generation)
        finally:
            self._distrust = set()

    def _update(self, paths: list[str], generation: int) -> Catalog:
        if not self._states:
            return self.scan(generation)
        regions: dict[int, set[str]] = {}
        full: set[int] = set()
        for path in paths:
            absolute = os.path.abspath(path)
            for i, state in enumerate(self._states):
                if not isinstance(state, _RootState):
                    rel = _relative(absolute, os.path.abspath(self.roots[i]))
                    if rel is not None:
                        full.add(i)
                    continue
                rel = _relative(absolute, os.path.abspath(state.root))
                if rel is None:
                    rel = _relative(absolute, state.real_root)
                if rel is None:
                    continue
                if self.project_ignores or state.linked or (state.skill_dirs and state.skill_dirs[0] == ""):
                    full.add(i)
                else:
                    regions.setdefault(i, set()).add(_region(state, rel))
        for i in sorted(full | set(regions)):
            state = self._states[i]
            if i in full or not isinstance(state, _RootState):
                prior = _Prior.of(state) if isinstance(state, _RootState) else None
                self._states[i] = self._scan_root(self.roots[i], prior)
                continue
            try:
                for region in _outermost(regions[i]):
                    _rewalk(state, region, self.progress, self._distrust)
            except _NeedFullScan as why:
                logger.debug("rescanning %s whole: %s", state.root, why)
                self._states[i] = self._scan_root(self.roots[i], _Prior.of(state))
        return self._publish(generation)

    def changed(self, skill_uri: str) -> bool:
        """True if the skill's folder no longer matches what was indexed (a file added, removed or touched).

        Walks only that skill's folder and compares names, sizes, times and inodes;
        it reads no file content. A skill this source did not index is unchanged.
        """
        if self._restored:
            return True
        built = self._index.get(skill_uri)
        if built is None:
            return False
        walk = _Walk(root=built.root)
        _walk_dir(walk, built.real_dir, built.rel_dir, built.rules, frozenset())
        walk.files.sort(key=_rel_of)
        return _signature(walk.files, walk.bad_paths, built.rel_dir) != built.signature

    # -- scanning --------------------------------------------------------------------------------------------------

    def _scan_root(self, root: Path, prior: _Prior | None) -> _RootState | Refusal:
        try:
            real_root = os.path.realpath(root, strict=True)
        except OSError as exc:
            return Refusal(str(root), "root-missing", f"root folder cannot be opened: {exc.strerror or exc}")
        if not os.path.isdir(real_root):
            return Refusal(str(root), "root-not-folder", "root is not a folder")
        started = time.time_ns()
        walk = _Walk(root=real_root)
        project = IgnoreRules.empty() if self.project_ignores else None
        _walk_dir(walk, real_root, "", IgnoreRules.empty(), frozenset(), stat_files=False, project=project)
        walk.files.sort(key=_rel_of)
        state = _RootState(
            root=root,
            real_root=real_root,
            files=walk.files,
            rels=[f.rel for f in walk.files],
            bad_paths=walk.bad_paths,
            skill_dirs=sorted(walk.skill_dirs),
            rules=walk.skill_rules,
            results={},
            linked=walk.linked,
            trusted_before_ns=started - RACY_NS,
        )
        _index_skills(
            state,
            state.skill_dirs,
            state.files,
            prior.records if prior is not None else {},
            built_before=prior.results if prior is not None else {},
            trusted_before_ns=prior.trusted_before_ns if prior is not None else 0,
            progress=self.progress,
            distrust=self._distrust,
            recheck_skill_md=prior is not None and prior.from_cache,
            checked=prior.checked if prior is not None else None,
        )
        return state

    def _publish(self, generation: int) -> Catalog:
        skills: list[Skill] = []
        refusals: list[Refusal] = []
        seen: dict[str, str] = {}
        index: dict[str, _Built] = {}
        for state in self._states:
            if isinstance(state, Refusal):
                refusals.append(state)
                continue
            refusals.extend(_bad_paths_outside_skills(state))
            for skill_dir in state.skill_dirs:
                result = state.results[skill_dir]
                if isinstance(result, Refusal):
                    refusals.append(result)
                    continue
                uri = result.skill.uri
                if uri in seen:
                    refusals.append(
                        Refusal(result.display, "duplicate-uri", f"{uri} is already served from {seen[uri]}")
                    )
                    continue
                seen[uri] = result.display
                skills.append(result.skill)
                index[uri] = result
        refusals = [_printable(r) for r in refusals]
        self._index = index
        self._publish_refusals = refusals
        new = [r for r in refusals if r not in self._logged]
        for refusal in new:
            logger.info("not served: %s", refusal)
        refused = sum(r.skill for r in new)
        if refused:
            logger.warning("%d skill(s) not served; see Catalog.refusals (or -v) for each reason", refused)
        self._logged = set(refusals)
        return Catalog(skills, _Locator(index), refusals, generation=generation)


def _printable(refusal: Refusal) -> Refusal:
    """`refusal` with names that are not UTF-8 escaped (see `shown_name`): what is published can be encoded."""
    if refusal.path.isascii() and refusal.message.isascii():
        return refusal
    path, message = shown_name(refusal.path), shown_name(refusal.message)
    if (path, message) == (refusal.path, refusal.message):
        return refusal
    return Refusal(path, refusal.rule, message, refusal.line, refusal.skill)


@dataclass(frozen=True, slots=True)
class _Locator:
    """Where a published file's bytes live, from the skills of one publication (not a 50,000-entry dict)."""

    index: dict[str, _Built]

    def __call__(self, skill: Skill, f: SkillFile) -> FolderFile:
        return FolderFile(self.index[skill.uri].location(f))


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building an index.

    Indexing allocates hundreds of thousands of long-lived objects and no cycles; every
    automatic collection would walk all of them again (about a fifth of a large scan).
    Whoever paused it turns it back on, so overlapping pauses end enabled.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True, slots=True)
class _Prior:
    """What the last scan of a root knew: files by path (with stamps and digests), skills by folder."""

    records: dict[str, _FileRecord]
    results: dict[str, _Built | Refusal]
    trusted_before_ns: int
    from_cache: bool = False  # a digest cache's word, not this process's own scan: SKILL.md is read again
    checked: set[str] = field(default_factory=set)  # ... except these, which `restore` read itself

    @classmethod
    def of(cls, state: _RootState) -> _Prior:
        return cls({f.rel: f for f in state.files}, state.results, state.trusted_before_ns)


# How stamps are made (hash of a tuple of ints): they are compared only if a snapshot was made the same way.
_STAMP_SCHEME = f"{sys.implementation.name}-{sys.hash_info.algorithm}-{sys.version_info[0]}.{sys.version_info[1]}"


def _served_rows(snapshot: Any, roots: Sequence[Path]) -> list[tuple[int, list[Any]]] | None:
    """Every skill row of a snapshot taken for `roots`, with its root's index (None if taken for other roots).

    Every location must lie inside its root as it resolves now: a cache file edited by someone
    else must not be able to publish a file from anywhere on the disk."""
    if not isinstance(snapshot, dict):
        raise TypeError("the snapshot is not an object")
    if snapshot.get("roots") != [os.path.abspath(r) for r in roots]:
        return None
    rows: list[tuple[int, list[Any]]] = []
    names: list[str] = []
    for i, (root, part) in enumerate(zip(roots, snapshot["per_root"], strict=True)):
        if part is None:
            continue
        real_root = os.path.realpath(root)
        if part["real"] != real_root:
            return None  # the root now resolves elsewhere: nothing recorded applies
        for row in part["skills"]:
            skill_dir, _, frontmatter, line, real_dir, _, rels, digests, sizes, mimes, stamps, moved = row
            if not isinstance(frontmatter, dict) or not isinstance(moved, dict) or type(line) is not int:
                raise TypeError("malformed skill")
            # str.join and array("q") check every item's type in C (TypeError otherwise): this runs per file.
            joined = "\n".join(rels)
            "".join(digests)
            "".join(mimes)
            array("q", sizes)
            array("q", stamps)
            if not len(rels) == len(digests) == len(sizes) == len(mimes) == len(stamps):
                raise ValueError("columns of different lengths")
            names.append(joined)
            if not isinstance(skill_dir, str):
                raise TypeError("malformed skill folder")
            names.append(skill_dir)
            for where in (real_dir, *moved.values()):
                if not _safe_location(where, real_root):
                    raise ValueError(f"location {where!r} is outside every root")
            for where in moved.values():  # links, few: each must already be a resolved path (none on the way)
                if os.path.realpath(where) != where:
                    raise ValueError(f"location {shown_name(where)!r} is not a resolved path")
            rows.append((i, row))
        root_is_skill = any(row[0] == "" for j, row in rows if j == i)
        base = [os.path.basename(real_root)] if root_is_skill else []
        for j, row in rows:  # the skill path follows from the folder: a row cannot publish a folder under another name
            if j == i and row[1] != base + [p for p in row[0].split("/") if p]:
                raise ValueError(f"skill path {row[1]!r} does not match its folder")
    every = "\n".join(names)
    every.encode("utf-8")  # UnicodeEncodeError (a ValueError) for a name no URI can carry
    if UNADDRESSABLE.search(every.replace("\n", "/")):  # nor can one that no read may name (a cache from before)
        raise ValueError("a file name holds a control character or a backslash")
    if _ESCAPING_REL.search(every):  # one pass over every file name: this runs at startup
        raise ValueError("a file path climbs out of its skill folder (outside every root)")
    return rows


def _skill_from_row(row: list[Any]) -> Skill:
    _, skill_path, frontmatter, _, _, _, rels, digests, sizes, mimes, _, _ = row
    uris = file_uris(directory_uri(skill_path) + "/", rels)
    files = sorted(map(SkillFile, rels, uris, digests, sizes, mimes), key=manifest_order)
    return Skill(tuple(skill_path), frontmatter, tuple(files))


def _verified(row: list[Any], trusted_before_ns: int) -> tuple[list[Any], int | None] | None:
    """`row` with the frontmatter parsed from its SKILL.md on disk, if those bytes are the ones the row lists
    (size and digest) and pass the frontmatter rules, and the stamp of the SKILL.md read (None if it changed
    after `trusted_before_ns`: too recent to be known by its stamp); None otherwise.

    The cache's frontmatter text is never published: a forged row could pair any frontmatter with a true
    digest. Reading SKILL.md also proves the skill's folder is where the row says: `read_regular` checks the
    open file's resolved path equals the recorded one, so a folder that is a link to elsewhere fails here.
    """
    skill_path, real_dir, rels, digests, sizes, moved = row[1], row[4], row[6], row[7], row[8], row[11]
    try:
        k = rels.index(SKILL_FILE)
    except ValueError:
        return None
    location = moved.get(SKILL_FILE) or real_dir + "/" + SKILL_FILE
    if SKILL_FILE in moved and os.path.realpath(real_dir) != real_dir:
        return None
    try:
        fd, st = open_regular(location, real_path=location)
        try:
            data = read_at_most(fd, min(sizes[k], st.st_size) + 1)
        finally:
            os.close(fd)
    except OSError:
        return None
    if len(data) != sizes[k] or sha256_digest(data) != digests[k]:
        return None
    try:
        fm, line = read_frontmatter(data)
        check_frontmatter(fm, line, tuple(skill_path))
    except SkillError:
        return None
    key = file_key(st)
    stamp = hash(key) if key[3] < trusted_before_ns and key[4] < trusted_before_ns else None
    return [*row[:2], fm, line, *row[4:]], stamp


_Checked = dict[tuple[int, str], tuple[int, tuple[dict[str, Any], int]]]
"""SKILL.md files `restore` read, by (root index, skill folder): the stamp it saw and the frontmatter it parsed."""


def _restore(
    snapshot: Any, roots: Sequence[Path], generation: int, trusted_before_ns: int
) -> tuple[Catalog, list[str], _Checked] | None:
    """The catalog a snapshot holds for `roots`, each skill built on first use, the skill folders left out
    because their SKILL.md did not match, and what was read of the others (None if taken for other roots)."""
    found = _served_rows(snapshot, roots)
    if found is None:
        return None
    rows: list[tuple[int, list[Any]]] = []
    dropped: list[str] = []
    checked: _Checked = {}
    for i, row in found:
        verified = _verified(row, trusted_before_ns)
        if verified is None:
            dropped.append(os.path.join(str(roots[i]), row[0]) if row[0] else str(roots[i]))
            continue
        rows.append((i, verified[0]))
        if verified[1] is not None:
            checked[i, row[0]] = (verified[1], (verified[0][2], verified[0][3]))
    where: dict[str, tuple[str, dict[str, str]]] = {}
    builders: list[tuple[str, Callable[[], Skill]]] = []
    dirs_by_root: dict[int, set[str]] = {}
    for i, row in rows:
        uri = directory_uri(row[1]) + "/" + SKILL_FILE
        where[uri] = (row[4], row[11])
        builders.append((uri, partial(_skill_from_row, row)))
        dirs_by_root.setdefault(i, set()).add(row[0])
    # Distinct files: a nested skill's files are in its enclosing skill's row too, so count outermost rows only.
    memo: dict[str, bool] = {}
    files = sum(
        len(row[6])
        for i, row in rows
        if not (row[0] and _folder_in_skill(row[0].rpartition("/")[0], dirs_by_root[i], memo))
    )
    refusals = [_refusal_from(item) for item in snapshot["refusals"]]
    return Catalog.deferred(builders, _RowLocator(where), refusals, generation, file_count=files), dropped, checked


def _refusal_from(item: Any) -> Refusal:
    """A refusal as the cache stored it, its types checked (TypeError otherwise) and its names printable."""
    path, rule, message, line, skill = item
    if not (isinstance(path, str) and isinstance(rule, str) and isinstance(message, str)):
        raise TypeError("malformed refusal")
    if not (line is None or type(line) is int) or type(skill) is not bool:
        raise TypeError("malformed refusal")
    return _printable(Refusal(path, rule, message, line, skill))


@dataclass(frozen=True, slots=True)
class _RowLocator:
    """Where a restored skill's files live: its folder (checked inside a root) and the few links recorded apart."""

    where: dict[str, tuple[str, dict[str, str]]]  # skill URI -> (real folder, {path in skill: location})

    def __call__(self, skill: Skill, f: SkillFile) -> FolderFile:
        real_dir, moved = self.where[skill.uri]
        return FolderFile(moved.get(f.rel_path) or real_dir + "/" + f.rel_path)


def _priors(
    snapshot: Any,
    roots: Sequence[Path],
    trusted: Sequence[int | None],
    restored: Catalog | None,
    checked: _Checked,
) -> list[_Prior | None] | None:
    """Per root, the files and skills a snapshot recorded, as a scan of it would have left them
    (the skills taken from `restored`, the catalog `restore()` made of the same snapshot, if given)."""
    rows = _served_rows(snapshot, roots)
    if rows is None:
        return None
    same_stamps = snapshot.get("stamps") == _STAMP_SCHEME
    priors: list[_Prior | None] = [
        _Prior({}, {}, when, from_cache=True) if part is not None and when is not None and same_stamps else None
        for part, when in zip(snapshot["per_root"], [*trusted, *[None] * len(roots)], strict=False)
    ]
    real_roots = [os.path.realpath(r) for r in roots]
    for i, row in rows:
        prior = priors[i]
        if prior is None:
            continue
        skill_dir, _, frontmatter, line, real_dir, no_rules, rels, digests, sizes, mimes, stamps, moved = row
        prefix = skill_dir + "/" if skill_dir else ""
        members = []
        for rel, digest, size, mime, stamp in zip(rels, digests, sizes, mimes, stamps, strict=True):
            where = moved.get(rel) or real_dir + "/" + rel
            usual = real_roots[i] + "/" + prefix + rel
            rec = _FileRecord(prefix + rel, None if where == usual else where, size, stamp, digest, mime)
            if rel == SKILL_FILE:
                seen = checked.get((i, skill_dir))
                if seen is not None:  # read by `restore` in this process: known by the stamp it saw then
                    rec.stamp, rec.frontmatter = seen
                    prior.checked.add(rec.rel)
                else:
                    # Only compared: a scan from the cache reads and parses every SKILL.md again (small files)
                    # and keeps the skill only if this equals what the bytes say (see `_index_skills`).
                    rec.frontmatter = (frontmatter, line)
            prior.records[rec.rel] = rec
            members.append(rec)
        members.sort(key=_rel_of)
        display = os.path.join(str(roots[i]), skill_dir) if skill_dir else str(roots[i])
        rules = IgnoreRules.empty() if no_rules is True else None
        if rules is not None:
            skill = restored.skill(directory_uri(row[1]) + "/" + SKILL_FILE) if restored is not None else None
            prior.results[skill_dir] = _Built(
                skill or _skill_from_row(row),
                moved or None,
                display,
                real_dir,
                skill_dir,
                rules,
                real_roots[i],
                _signature(members, (), skill_dir),
            )
    return priors


# A root-relative path that climbs out ("..") or is absolute, one per line.
_ESCAPING_REL = re.compile(r"(?m)(?:^|/)\.\.(?:/|$)|^/")


def _safe_location(path: object, real_root: str) -> bool:
    return isinstance(path, str) and "\n" not in path and "/../" not in path + "/" and _inside(path, real_root)


def _relative(path: str, root: str) -> str | None:
    """`path` relative to `root`, "/"-separated ("" for the root itself), or None if it is outside."""
    if path == root:
        return ""
    prefix = root.rstrip(os.sep) + os.sep
    if not path.startswith(prefix):
        return None
    rel = path[len(prefix) :]
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


def _region(state: _RootState, rel: str) -> str:
    """The folder to walk again for a change at `rel`: the outermost skill holding it, else its folder."""
    known = state.rules  # keyed by skill folder
    outermost = None
    folder = rel
    while folder:
        if folder in known:
            outermost = folder
        folder = folder.rpartition("/")[0]
    if outermost is not None:
        return outermost
    return rel.rpartition("/")[0]


def _outermost(regions: Iterable[str]) -> list[str]:
    """The regions not inside another one (a region "" is the whole root)."""
    kept: list[str] = []
    for region in sorted(regions):
        if not kept or not _under(region, kept[-1]):
            kept.append(region)
        if region == "":
            return [""]
    return kept


def _rewalk(state: _RootState, region: str, progress: Progress | None, distrust: set[str]) -> None:
    """Walk `region` (a root-relative folder) again and patch `state` with what it finds."""
    rules, ancestors, ignored = _context(state.real_root, region)
    real_dir = os.path.join(state.real_root, *region.split("/")) if region else state.real_root
    walk = _Walk(root=state.real_root)
    if not ignored:
        try:
            st = os.lstat(real_dir)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise _NeedFullScan(f"{region}: {exc.strerror or exc}") from None
        if st is not None:
            if not stat.S_ISDIR(st.st_mode):
                raise _NeedFullScan(f"{region} is no longer a folder")
            _walk_dir(walk, real_dir, region, rules, ancestors, stat_files=False)
    if walk.linked:
        raise _NeedFullScan(f"{region} holds symbolic links")
    walk.files.sort(key=_rel_of)
    lo, hi = span(state.rels, region)
    old = {f.rel: f for f in state.files[lo:hi]}
    built_before: dict[str, _Built | Refusal] = {}
    state.files[lo:hi] = walk.files
    state.rels[lo:hi] = [f.rel for f in walk.files]
    state.bad_paths = [b for b in state.bad_paths if not _under(b.path, region)] + walk.bad_paths
    for skill_dir in [d for d in state.skill_dirs if _under(d, region)]:
        built_before[skill_dir] = state.results.pop(skill_dir)
        del state.rules[skill_dir]
    state.skill_dirs = sorted([d for d in state.skill_dirs if not _under(d, region)] + walk.skill_dirs)
    state.rules.update(walk.skill_rules)
    _index_skills(
        state,
        sorted(walk.skill_dirs),
        walk.files,
        old,
        built_before=built_before,
        trusted_before_ns=state.trusted_before_ns,
        progress=progress,
        distrust=distrust,
    )


def _context(real_root: str, region: str) -> tuple[IgnoreRules, frozenset[tuple[int, int]], bool]:
    """What a walk from the root would carry into `region`: ignore rules, the folders above, and whether
    `region` itself is ignored. Raises _NeedFullScan if a folder on the way is a link (or not a folder)."""
    rules = IgnoreRules.empty()
    ancestors: set[tuple[int, int]] = set()
    folder, real = "", real_root
    parts = region.split("/") if region else []
    for depth in range(len(parts) + 1):
        try:
            st = os.lstat(real)
        except FileNotFoundError:
            return rules, frozenset(ancestors), True  # gone: nothing under it is served
        except OSError as exc:
            raise _NeedFullScan(f"{folder or '.'}: {exc.strerror or exc}") from None
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise _NeedFullScan(f"{folder or '.'} is a link or not a folder")
        if depth == len(parts):
            break
        ancestors.add((st.st_dev, st.st_ino))
        try:
            if os.path.lexists(real + "/" + IGNORE_FILE):  # anything by that name: _ignore_lines refuses a non-file
                rules = rules.with_file(folder, _ignore_lines(real))
        except (OSError, UnicodeDecodeError) as exc:
            raise _NeedFullScan(f"ignore file unreadable: {_why(exc)}") from None  # the full walk reports it
        name = parts[depth]
        folder = _join(folder, name)
        real = os.path.join(real, name)
        if builtin_ignored(name, is_dir=True) or rules.ignored(folder, is_dir=True):
            return rules, frozenset(ancestors), True
    return rules, frozenset(ancestors), False


def _index_skills(
    state: _RootState,
    skill_dirs: Sequence[str],
    walked: Sequence[_FileRecord],
    old: dict[str, _FileRecord],
    *,
    built_before: dict[str, _Built | Refusal],
    trusted_before_ns: int,
    progress: Progress | None,
    distrust: set[str],
    recheck_skill_md: bool = False,
    checked: set[str] | None = None,
) -> None:
    """Hash the files of `skill_dirs` found by a walk (`walked`, sorted), then build each skill into `state`.

    Files at a location in `distrust` are read again whatever their stamp, and their skills rebuilt.
    With `recheck_skill_md` (`old` came from a digest cache), every SKILL.md is read and parsed again and
    its skill rebuilt unless the bytes give exactly the frontmatter recorded: a cache can pair true stamps
    with any text, so frontmatter is only ever published from the bytes on disk. SKILL.md files in
    `checked` were read by `restore` in this process: their stamps are its own, so they need no second read."""
    in_skill = set(state.rules)
    root_is_skill = "" in in_skill
    memo: dict[str, bool] = {}
    todo = [f for f in walked if _in_some_skill(f.rel, in_skill, memo, root_is_skill=root_is_skill)]
    errors: dict[str, OSError] = {}
    reread: set[str] = set()
    vanished: set[int] = set()
    root_prefix = state.real_root + "/"
    total = len(todo)
    for done, rec in enumerate(todo, 1):
        if not (rec.rel.isascii() or encodes(rec.rel)):
            continue  # under a folder whose name is not UTF-8: its skill is refused for that, unread
        path = rec.location or root_prefix + rec.rel
        prev = old.get(rec.rel)
        usable = prev if prev is not None and prev.stamp is not None else None
        if distrust and path in distrust:
            usable = None
            reread.add(rec.rel)
        if (
            recheck_skill_md
            and usable is not None
            and (rec.rel == SKILL_FILE or rec.rel.endswith(_SLASH_SKILL_FILE))
            and not (checked and rec.rel in checked)
        ):
            error = _hash_file(rec, path, None, trusted_before_ns, state.real_root)
            if error is None and not _same_parse(rec, usable):
                reread.add(rec.rel)
        else:
            error = _hash_file(rec, path, usable, trusted_before_ns, state.real_root)
        if isinstance(error, FileNotFoundError):
            vanished.add(id(rec))  # removed (or renamed away) since the walk listed it: it is not there
        elif error is not None:
            errors[rec.rel] = error
        if progress is not None and (done % _PROGRESS_EVERY == 0 or done == total):
            progress(done, total)
    if vanished:
        kept = [f for f in state.files if id(f) not in vanished]
        state.files[:] = kept
        state.rels[:] = [f.rel for f in kept]
    base: tuple[str, ...] = (os.path.basename(state.real_root),) if "" in state.rules else ()
    display_root = str(state.root)
    gone: list[str] = []
    for skill_dir in skill_dirs:
        display = os.path.join(display_root, skill_dir) if skill_dir else display_root
        skill_path = base + tuple(p for p in skill_dir.split("/") if p)
        prefix = skill_dir + "/" if skill_dir else ""
        lo, hi = span(state.rels, skill_dir)
        members = state.files[lo:hi]
        if vanished and not any(rec.rel == prefix + SKILL_FILE for rec in members):
            gone.append(skill_dir)  # its SKILL.md went away since the walk: no longer a skill
            continue
        bad = [b for b in state.bad_paths if _under(b.path, skill_dir)]
        real_dir, rules = state.rules[skill_dir]
        signature = _signature(members, bad, skill_dir)
        before = built_before.get(skill_dir)
        if (
            isinstance(before, _Built)
            and before.signature == signature
            and (before.real_dir, before.rules, before.display) == (real_dir, rules, display)
            and not any(rec.rel in errors or rec.rel in reread for rec in members)
        ):
            state.results[skill_dir] = before  # unchanged: the published objects are shared, not rebuilt
            continue
        try:
            skill, moved = _build_skill(
                members, bad, prefix, skill_path, errors, real_dir=real_dir, root_prefix=root_prefix
            )
        except SkillError as err:
            rel = err.path or SKILL_FILE
            state.results[skill_dir] = Refusal(os.path.join(display, rel), err.rule, err.message, err.line)
            continue
        state.results[skill_dir] = _Built(skill, moved, display, real_dir, skill_dir, rules, state.real_root, signature)
    if gone:
        for skill_dir in gone:
            state.results.pop(skill_dir, None)
            del state.rules[skill_dir]
        state.skill_dirs = [d for d in state.skill_dirs if d not in set(gone)]


def _walk_dir(
    walk: _Walk,
    real_dir: str,
    rel_dir: str,
    rules: IgnoreRules,
    ancestors: frozenset[tuple[int, int]],
    *,
    stat_files: bool = True,
    project: IgnoreRules | None = None,
) -> None:
    """Record what is under `real_dir`. With `stat_files` False, regular files (known from the
    directory entry's type) are left un-stat'ed (key None): the scan stats each where it reads it.
    `project`: the `.gitignore` rules in force while no skill has been entered (`project_ignores`), else None."""
    try:
        with os.scandir(real_dir) as it:
            entries = list(it)  # in directory order: the scan sorts what it keeps
    except FileNotFoundError:
        return  # removed since its parent was listed: it holds nothing now
    except OSError as exc:
        walk.bad_paths.append(Refusal(rel_dir or ".", "unreadable", f"folder cannot be read: {exc.strerror or exc}"))
        return
    if any(e.name == IGNORE_FILE for e in entries):
        try:
            rules = rules.with_file(rel_dir, _ignore_lines(real_dir))
        except (OSError, UnicodeDecodeError) as exc:
            rule = "not-a-file" if isinstance(exc, UnsafeFile) else "unreadable"
            walk.bad_paths.append(Refusal(_join(rel_dir, IGNORE_FILE), rule, f"ignore file unreadable: {_why(exc)}"))
    if project is not None:
        project = _project_rules(project, entries, real_dir, rel_dir)
    here = os.stat(real_dir)
    ancestors = ancestors | {(here.st_dev, here.st_ino)}
    prefix = rel_dir + "/" if rel_dir else ""
    root_prefix = walk.root + "/"
    at_usual_path = real_dir == (root_prefix + rel_dir if rel_dir else walk.root)  # so is every plain file here
    files = walk.files
    for entry in entries:
        name = entry.name
        rel = prefix + name
        if not (name.isascii() or encodes(name)) and not entry.is_dir(follow_symlinks=False):
            # Never opened nor stat'ed: no URI can name it, and the file watcher stops on any event naming such
            # a path, so even reading it would restart the watcher. (A folder so named is walked: the skill
            # holding it, or the skill it is, is refused for it; its files are never read.)
            if builtin_ignored(name, is_dir=False) or rules.ignored(rel, is_dir=False):
                continue  # ignored like any other file: it costs nothing
            shown = shown_name(name)
            walk.bad_paths.append(
                Refusal(rel, "file-name-encoding", f"name '{shown}' is not valid UTF-8; rename it to valid UTF-8")
            )
            continue
        try:
            is_link = entry.is_symlink()
            if not stat_files and not is_link and entry.is_file(follow_symlinks=False):
                if not builtin_ignored(name, is_dir=False) and not (rules.specs and rules.ignored(rel, is_dir=False)):
                    record = _FileRecord(rel, None if at_usual_path else entry.path)
                    record.ident = hash((here.st_dev, entry.inode()))  # no system call: the directory entry's inode
                    files.append(record)
                    if name == SKILL_FILE:
                        walk.skill_dirs.append(rel_dir)
                        walk.skill_rules[rel_dir] = (real_dir, rules)
                continue
            st = os.stat(entry.path) if is_link else entry.stat(follow_symlinks=False)
        except OSError as exc:
            # A broken link (dangling, or looping on itself) is no folder: ignored as a file, like any other name.
            if builtin_ignored(name, is_dir=False) or rules.ignored(rel, is_dir=False):
                continue
            if isinstance(exc, FileNotFoundError):
                walk.bad_paths.append(Refusal(rel, "link-dangles", "symbolic link points to nothing"))
            else:
                walk.bad_paths.append(Refusal(rel, "unreadable", f"cannot be read: {exc.strerror or exc}"))
            continue
        is_dir = stat.S_ISDIR(st.st_mode)
        if builtin_ignored(name, is_dir=is_dir) or rules.ignored(rel, is_dir=is_dir):
            continue
        location = entry.path
        if is_link:
            # Containment is decided on the fully resolved target, never on the link text:
            # a link that resolves outside the root would let a URI reach any file.
            location = os.path.realpath(entry.path)
            if not _inside(location, walk.root):
                walk.bad_paths.append(Refusal(rel, "link-escapes", "symbolic link leads outside the served root"))
                continue
            walk.linked = True
        if is_dir:
            if (st.st_dev, st.st_ino) in ancestors:
                walk.bad_paths.append(Refusal(rel, "link-loop", "symbolic link loops back to a folder above it"))
                continue
            if project is not None and _not_a_skill_tree(project, name, rel, location):
                continue
            _walk_dir(walk, location, rel, rules, ancestors, stat_files=stat_files, project=project)
        elif stat.S_ISREG(st.st_mode):
            usual = location == root_prefix + rel
            record = _FileRecord(rel, None if usual else location, st.st_size, hash(file_key(st)))
            record.ident = hash((st.st_dev, st.st_ino))
            walk.files.append(record)
            if name == SKILL_FILE:
                walk.skill_dirs.append(rel_dir)
                walk.skill_rules[rel_dir] = (real_dir, rules)
        else:
            walk.bad_paths.append(Refusal(rel, "not-a-file", "not a regular file (device, socket or pipe)"))


_SLASH_SKILL_FILE = "/" + SKILL_FILE


def _same_parse(fresh: _FileRecord, recorded: _FileRecord) -> bool:
    """True if a SKILL.md just read has the digest and exactly the frontmatter that `recorded` holds."""
    if fresh.digest != recorded.digest:
        return False
    a, b = fresh.frontmatter, recorded.frontmatter
    if not (isinstance(a, tuple) and isinstance(b, tuple)) or a[1] != b[1]:
        return False
    return a[0] == b[0] and _same_json(a[0], b[0])


def _same_json(a: object, b: object) -> bool:
    """Equal as JSON values, types and key order included (in Python 1 == 1.0 == True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(_same_json(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(map(_same_json, a, b))
    return a == b


def _project_rules(
    project: IgnoreRules, entries: Sequence[os.DirEntry[str]], real_dir: str, rel_dir: str
) -> IgnoreRules | None:
    """`project` plus this folder's `.gitignore`, or None once a skill is entered (its own rules alone apply).

    A `.gitignore` that cannot be read is passed over: it only narrows where skills are looked for."""
    names = {e.name for e in entries}
    if SKILL_FILE in names:
        return None
    if GITIGNORE in names:
        try:
            return project.with_file(rel_dir, _ignore_lines(real_dir, GITIGNORE))
        except (OSError, UnicodeDecodeError):
            pass
    return project


def _not_a_skill_tree(project: IgnoreRules, name: str, rel: str, location: str) -> bool:
    """True for a folder no one publishes skills from: a virtualenv, `node_modules`, or one `.gitignore` drops."""
    return (
        name in PROJECT_DIRS
        or os.path.lexists(location + "/" + VENV_MARKER)
        or (bool(project.specs) and project.ignored(rel, is_dir=True))
    )


def _ignore_lines(real_dir: str, name: str = IGNORE_FILE) -> list[str]:
    """The lines of the ignore file `name` in the real folder `real_dir`: a regular file of at most
    MAX_IGNORE_FILE_BYTES in UTF-8, opened without waiting (a FIFO named like it must not hang a scan)."""
    path = real_dir + "/" + name
    data = read_regular(path, limit=MAX_IGNORE_FILE_BYTES, real_path=path)
    if len(data) > MAX_IGNORE_FILE_BYTES:
        raise OSError(errno.EFBIG, f"larger than {MAX_IGNORE_FILE_BYTES} bytes")
    return data.decode("utf-8").splitlines()


def _why(exc: BaseException) -> str:
    """An OSError's reason without the path (the refusal names it), else the exception's text."""
    return str(exc.strerror or exc) if isinstance(exc, OSError) else str(exc)


def _signature(members: Sequence[_FileRecord], bad_paths: Iterable[Refusal], skill_dir: str) -> int:
    """What a walk saw of one skill folder, without reading content (its files with their stamps, and bad
    paths), hashed: equal for an unchanged folder."""
    files = tuple((f.rel, f.stamp) for f in members)
    bad = tuple(sorted((b.path, b.rule) for b in bad_paths if _under(b.path, skill_dir)))
    return hash((files, bad))


def _bad_paths_outside_skills(state: _RootState) -> list[Refusal]:
    """Problems found while walking that lie in no skill: reported, but they refuse nothing."""
    if not state.bad_paths:
        return []
    skill_dirs = set(state.skill_dirs)
    memo: dict[str, bool] = {}
    root_is_skill = "" in skill_dirs
    return [
        Refusal(bad.path, bad.rule, bad.message, skill=False)
        for bad in state.bad_paths
        if not (bad.path in skill_dirs or _in_some_skill(bad.path, skill_dirs, memo, root_is_skill=root_is_skill))
    ]


_CHUNK = 1 << 20
_SNIFF = 8192
_READ_ATTEMPTS = 3  # a file that changes size while being read is read again, this many times at most
GITIGNORE = ".gitignore"
PROJECT_DIRS = frozenset({"node_modules"})  # with project_ignores: never walked while looking for skills
VENV_MARKER = "pyvenv.cfg"  # a folder holding it is a Python virtualenv (PEP 405)
MAX_IGNORE_FILE_BYTES = 1 << 20  # a .skillwireignore larger than this is refused, not read


class _ChangedWhileRead(OSError):
    """A file's size changed between its fstat and the end of its read, on every attempt."""


def _hash_file(
    rec: _FileRecord, path: str, prev: _FileRecord | None, trusted_before_ns: int, real_root: str
) -> OSError | None:
    """Fill in `rec`'s size, stamp, digest, MIME type (and, for a SKILL.md, frontmatter); an OSError if unreadable.

    The digest is taken from `prev` (the same path in the last scan, or in the digest cache) when the
    file's stamp still matches and is older than `trusted_before_ns`, else the file is read and hashed.
    The stat comes before the read: a write after it changes the ctime, so a digest is never filed
    under a stamp the file no longer has. The file is opened with `open_regular` (no wait on a FIFO
    swapped in since the walk, no link followed, its real path checked inside `real_root`: it may have
    been renamed since the walk, never moved out) and at most its size + 1 bytes
    are read: a file that grows or shrinks meanwhile is read again, then counted unreadable.
    """
    rel = rec.rel
    is_skill_md = rel == SKILL_FILE or rel.endswith("/" + SKILL_FILE)
    mime = mime_type_for(rel)
    try:
        if prev is not None:
            key = file_key(os.stat(path))
            if hash(key) == prev.stamp and key[4] < trusted_before_ns and key[3] < trusted_before_ns:
                rec.size, rec.stamp = prev.size, prev.stamp
                rec.digest, rec.mime, rec.frontmatter = prev.digest, prev.mime, prev.frontmatter
                return None
        fd, st = open_regular(path, within=real_root, ident=rec.ident)
        rec.ident = None
        try:
            for _ in range(_READ_ATTEMPTS):
                size = st.st_size
                if size < _CHUNK:
                    data = os.read(fd, size + 1)  # one call: a regular file reads short only at its end
                    read = len(data)
                    if mime == DEFAULT_MIME_TYPE and looks_like_text(data[:_SNIFF]):
                        mime = "text/plain"
                    digest = sha256_digest(data)
                    kept = data if is_skill_md else None
                else:
                    h = hashlib.sha256()
                    chunks: list[bytes] = []
                    read = 0
                    while read <= size and (chunk := os.read(fd, min(_CHUNK, size + 1 - read))):
                        if read == 0 and mime == DEFAULT_MIME_TYPE and looks_like_text(chunk[:_SNIFF]):
                            mime = "text/plain"
                        read += len(chunk)
                        h.update(chunk)
                        if is_skill_md:
                            chunks.append(chunk)
                    digest = "sha256:" + h.hexdigest()
                    kept = b"".join(chunks) if is_skill_md else None
                if read == size:
                    break
                os.lseek(fd, 0, os.SEEK_SET)  # written to while read: read it whole again
                st = os.fstat(fd)
                mime = mime_type_for(rel)
            else:
                raise _ChangedWhileRead(errno.EAGAIN, "the file kept changing size while it was read")
        finally:
            os.close(fd)
    except OSError as exc:
        rec.stamp = None
        return exc
    rec.size, rec.stamp, rec.digest, rec.mime = size, hash(file_key(st)), digest, mime
    if kept is not None:
        try:
            rec.frontmatter = read_frontmatter(kept)
        except SkillError as err:
            rec.frontmatter = err
    return None


def _build_skill(
    members: Sequence[_FileRecord],
    bad_paths: Sequence[Refusal],
    prefix: str,
    skill_path: tuple[str, ...],
    errors: dict[str, OSError],
    *,
    real_dir: str,
    root_prefix: str,
) -> tuple[Skill, dict[str, str] | None]:
    """One skill folder's entry by the core rules (and the files not at `real_dir`/path, if any); SkillError
    naming the broken rule. A bad path found by the walk and an unreadable file are this source's problems."""
    cut = len(prefix)
    problems = [SkillError(bad.message, rule=bad.rule, path=bad.path[cut:]) for bad in bad_paths]
    if errors:
        problems.extend(
            SkillError(f"cannot be read: {error.strerror or error}", rule="unreadable", path=rec.rel[cut:])
            for rec in members
            if (error := errors.get(rec.rel)) is not None
        )
    facts = [FileFacts(rec.rel[cut:], rec.size, rec.digest or "", rec.mime) for rec in members]
    skill_md = next(rec for rec in members if rec.rel == prefix + SKILL_FILE).frontmatter
    if skill_md is None:  # never read (under a name no URI can carry): the name rules refuse the skill first
        skill_md = SkillError("cannot be read", rule="unreadable", path=SKILL_FILE)
    skill = build_skill(skill_path, facts, skill_md, problems=problems)
    moved: dict[str, str] = {}
    usual_dir = real_dir == root_prefix + prefix[:-1] if prefix else real_dir + "/" == root_prefix
    if not usual_dir or any(rec.location is not None for rec in members):
        for rec in members:
            rel = rec.rel[cut:]
            location = rec.location or root_prefix + rec.rel
            if location != real_dir + "/" + rel:
                moved[rel] = location
    return skill, moved or None


def _rel_of(f: _FileRecord) -> str:
    return f.rel


def _in_some_skill(rel: str, skill_dirs: set[str], memo: dict[str, bool], *, root_is_skill: bool) -> bool:
    """True if some folder above `rel` is a skill (`memo` caches the answer per folder)."""
    if root_is_skill:
        return True
    return _folder_in_skill(rel.rpartition("/")[0], skill_dirs, memo)


def _folder_in_skill(folder: str, skill_dirs: set[str], memo: dict[str, bool]) -> bool:
    if not folder:
        return False
    found = memo.get(folder)
    if found is None:
        found = folder in skill_dirs or _folder_in_skill(folder.rpartition("/")[0], skill_dirs, memo)
        memo[folder] = found
    return found


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _under(rel: str, folder: str) -> bool:
    return folder in ("", rel) or rel.startswith(folder + "/")


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name
