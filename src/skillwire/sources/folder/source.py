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

import gc
import logging
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import TaskStatus

from skillwire.core.catalog import Catalog, Refusal
from skillwire.core.errors import SkillError
from skillwire.core.manifest import Skill, SkillFile
from skillwire.core.skill_rules import (
    shown_name,
)
from skillwire.core.uri import enclosing_skill_uris
from skillwire.sources.digest_cache import RACY_NS, UNUSABLE, DigestCache
from skillwire.sources.digest_cache import ignored as cache_ignored
from skillwire.sources.folder.cache_layout import Snapshot
from skillwire.sources.folder.cache_layout import decode as decode_snapshot
from skillwire.sources.folder.cache_layout import encode as encode_snapshot
from skillwire.sources.folder.incremental import outermost_regions, region_of, relative, rewalk
from skillwire.sources.folder.index import index_skills
from skillwire.sources.folder.records import (
    Built,
    FolderFile,
    NeedFullScan,
    Prior,
    Progress,
    RootState,
    Walk,
    bad_paths_outside_skills,
    printable,
    rel_of,
    signature_of,
)
from skillwire.sources.folder.snapshot import Checked, priors_of, restore_catalog, snapshot_of
from skillwire.sources.folder.split import index_cold
from skillwire.sources.folder.walk import walk_dir
from skillwire.sources.ignore import IgnoreRules
from skillwire.sources.port import (
    DEFAULT_PACE,
    IncrementalSource,
    Rebuild,
    RestorableSource,
    WatchableSource,
    WatchPace,
)

__all__ = ["FolderFile", "FolderSource", "Progress"]

logger = logging.getLogger(__name__)

_MISMATCHES_SAID = 5  # restored skills that do not match the disk said one by one (then one line for the rest)


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
        self._states: list[RootState | Refusal] = []
        self._index: dict[str, Built] = {}
        self._logged: set[Refusal] = set()
        self._publish_refusals: list[Refusal] = []
        self._restored = False  # published from the digest cache's snapshot; nothing checked on disk yet
        # That snapshot, its catalog and the SKILL.md files read to make it, until the first scan.
        self._restored_from: tuple[Snapshot, Catalog, Checked] | None = None
        self._distrust: set[str] = set()  # during update(): locations to read again whatever their stamp
        self._cache_reported = False
        self._mismatches = 0  # restored skills found not to match the disk when built (`_mismatch`)

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
        for skill_uri in enclosing_skill_uris(uri):
            built = self._index.get(skill_uri)
            found = built.skill.file(uri) if built is not None else None
            if built is not None and found is not None:
                return [built.location(found)]
        return []

    async def watch(
        self,
        rebuild: Rebuild,
        *,
        pace: WatchPace = DEFAULT_PACE,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Follow the roots with `watchfiles` and `rebuild` after each burst of changes (see `folder_watch`)."""
        from skillwire.sources.folder.watch import watch_folders  # watchfiles loads only when watching

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
                priors = [Prior.of(state) if isinstance(state, RootState) else None for state in self._states]
            else:
                priors = self._priors_from(cache)
            self._states = [self._scan_root(root, prior) for root, prior in zip(self.roots, priors, strict=True)]
            catalog = self._publish(generation)
            self._restored, self._restored_from = False, None
            if cache is not None:
                trusted = [s.trusted_before_ns if isinstance(s, RootState) else None for s in self._states]
                self._save(cache, snapshot_of(self.roots, self._states, self._index, self._publish_refusals), trusted)
        return catalog

    def _priors_from(self, cache: DigestCache | None) -> list[Prior | None]:
        """What the digest cache's snapshot says each root held (None for a root it does not cover).

        After `restore()`, its decoded snapshot and catalog are used, so the skills it published are shared."""
        none: list[Prior | None] = [None] * len(self.roots)
        restored: Catalog | None = None
        checked: Checked = {}
        if self._restored_from is not None:
            snapshot, restored, checked = self._restored_from
        elif (found := self._snapshot_in(cache)) is not None:
            snapshot = found
        else:
            return none
        try:
            trusted = cache.trusted_before_ns if cache is not None else []
            priors = priors_of(snapshot, self.roots, trusted, restored, checked)
        except (*UNUSABLE, SkillError) as exc:
            self._cache_ignored(f"unusable ({exc})")
            return none
        if priors is None:
            self._cache_ignored("it was written for other roots, or a root now resolves elsewhere")
            return none
        return priors

    def _snapshot_in(self, cache: DigestCache | None) -> Snapshot | None:
        """The snapshot the digest cache holds, decoded and its names checked (None, said once, if it does not)."""
        body = cache.body() if cache is not None else None
        if body is None:
            return None
        try:
            return decode_snapshot(body)
        except UNUSABLE as exc:
            self._cache_ignored(f"corrupt ({type(exc).__name__}: {exc})")
            return None

    def _save(self, cache: DigestCache, snapshot: Snapshot, trusted: list[int | None]) -> None:
        try:
            body = encode_snapshot(snapshot)
        except ValueError as exc:  # a name no URI carries: never served, so never in a row (said, not raised)
            logger.warning("digest cache %s not written: %s", cache.path, exc)
            return
        cache.save_body(body, trusted_before_ns=trusted)

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

        This is the near-instant restart: nothing on disk is walked or read here. Each skill's
        SKILL.md is read when the skill is first built (listed, got, read): the frontmatter
        published is parsed from bytes whose digest the cache lists, never taken from the
        cache's text, and a skill whose SKILL.md does not match is withdrawn until the scan.
        The caller must `scan()` soon after (the server does so in the background). Until
        then `changed()` answers True for every skill, and reads still re-hash what they
        send. None when there is no cache, no snapshot, or one for other roots.
        """
        if self.digest_cache_path is None or self._states:
            return None
        cache = self._cache = self._cache or DigestCache.load(self.digest_cache_path)
        with _gc_paused():
            snapshot = self._snapshot_in(cache)
            if snapshot is None:
                return None
            trusted_before_ns = time.time_ns() - RACY_NS
            try:
                restored = restore_catalog(snapshot, self.roots, generation, trusted_before_ns, self._mismatch)
            except (*UNUSABLE, SkillError) as exc:
                self._cache_ignored(f"unusable ({exc})")
                return None
        if restored is None:
            self._cache_ignored("it was written for other roots, or a root now resolves elsewhere")
            return None
        catalog, checked = restored
        self._restored, self._restored_from = True, (snapshot, catalog, checked)
        logger.info("restored %d skills from %s; checking the disk next", len(catalog), self.digest_cache_path)
        return catalog

    def _mismatch(self, shown: str) -> None:
        """Say (a few times, then once that there are more) that a restored skill does not match the disk."""
        self._mismatches += 1
        if self._mismatches <= _MISMATCHES_SAID:
            cache_ignored(
                self.digest_cache_path,
                f"skill {shown_name(shown)} in it does not match the disk (SKILL.md changed, moved or not as "
                "recorded): not served until the disk is checked",
            )
        elif self._mismatches == _MISMATCHES_SAID + 1:
            cache_ignored(self.digest_cache_path, "more skills in it do not match the disk (not said one by one)")

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
                if not isinstance(state, RootState):
                    rel = relative(absolute, os.path.abspath(self.roots[i]))
                    if rel is not None:
                        full.add(i)
                    continue
                rel = relative(absolute, os.path.abspath(state.root))
                if rel is None:
                    rel = relative(absolute, state.real_root)
                if rel is None:
                    continue
                if self.project_ignores or state.linked or (state.skill_dirs and state.skill_dirs[0] == ""):
                    full.add(i)
                else:
                    regions.setdefault(i, set()).add(region_of(state, rel))
        for i in sorted(full | set(regions)):
            state = self._states[i]
            if i in full or not isinstance(state, RootState):
                prior = Prior.of(state) if isinstance(state, RootState) else None
                self._states[i] = self._scan_root(self.roots[i], prior)
                continue
            try:
                for region in outermost_regions(regions[i]):
                    rewalk(state, region, self.progress, self._distrust)
            except NeedFullScan as why:
                logger.debug("rescanning %s whole: %s", state.root, why)
                self._states[i] = self._scan_root(self.roots[i], Prior.of(state))
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
        walk = Walk(root=built.root)
        walk_dir(walk, built.real_dir, built.rel_dir, built.rules, frozenset())
        walk.files.sort(key=rel_of)
        return signature_of(walk.files, walk.bad_paths, built.rel_dir, sorted(walk.folders)) != built.signature

    # -- scanning --------------------------------------------------------------------------------------------------

    def _scan_root(self, root: Path, prior: Prior | None) -> RootState | Refusal:
        try:
            real_root = os.path.realpath(root, strict=True)
        except OSError as exc:
            return Refusal(str(root), "root-missing", f"root folder cannot be opened: {exc.strerror or exc}")
        if not os.path.isdir(real_root):
            return Refusal(str(root), "root-not-folder", "root is not a folder")
        started = time.time_ns()
        project = IgnoreRules.empty() if self.project_ignores else None
        if prior is None:  # nothing to go by: walk, read and hash on every core
            return index_cold(
                root,
                real_root,
                project=project,
                progress=self.progress,
                distrust=self._distrust,
                trusted_before_ns=started - RACY_NS,
            )
        walk = Walk(root=real_root, reuse=None if prior.from_cache else prior.records)
        walk_dir(walk, real_root, "", IgnoreRules.empty(), frozenset(), stat_files=False, project=project)
        walk.files.sort(key=rel_of)
        state = RootState(
            root=root,
            real_root=real_root,
            files=walk.files,
            folders=sorted(walk.folders),
            bad_paths=walk.bad_paths,
            skill_dirs=sorted(walk.skill_dirs),
            rules=walk.skill_rules,
            results={},
            linked=walk.linked,
            trusted_before_ns=started - RACY_NS,
        )
        index_skills(
            state,
            state.skill_dirs,
            state.files,
            prior.records,
            built_before=prior.results,
            rules_before=prior.rules,
            trusted_before_ns=prior.trusted_before_ns,
            progress=self.progress,
            distrust=self._distrust,
            recheck_skill_md=prior.from_cache,
            checked=prior.checked,
        )
        return state

    def _publish(self, generation: int) -> Catalog:
        skills: list[Skill] = []
        refusals: list[Refusal] = []
        seen: dict[str, str] = {}
        index: dict[str, Built] = {}
        for state in self._states:
            if isinstance(state, Refusal):
                refusals.append(state)
                continue
            refusals.extend(bad_paths_outside_skills(state))
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
        refusals = [printable(r) for r in refusals]
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


@dataclass(frozen=True, slots=True)
class _Locator:
    """Where a published file's bytes live, from the skills of one publication (not a 50,000-entry dict)."""

    index: dict[str, Built]

    def __call__(self, skill: Skill, f: SkillFile) -> FolderFile:
        return FolderFile(self.index[skill.uri].location(f))


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building an index.

    Indexing allocates hundreds of thousands of long-lived objects and no cycles; every
    automatic collection would walk all of them again (about a fifth of a large scan).
    Whoever paused it turns it back on, so overlapping pauses end enabled. What survives is
    then frozen (`gc.freeze`): a later full collection, which requests trigger, would walk
    the whole index for nothing (1.3 s at 100,000 skills, stalling a server); it is still freed
    by reference counting when the next index replaces it.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.enable()
