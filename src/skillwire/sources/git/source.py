"""Skills from a git repository, served at a commit straight from its object database (no checkout).

`GitSource(repo, ref)` serves the tree of one commit: REF a branch, a tag, HEAD (the default), or anything else git
names a commit by. A reference (branch, tag, HEAD) is followed: `watch` looks at it every `pace.step_ms` (at least
MIN_POLL_MS) and asks for a rebuild when it moves, and each scan indexes the commit it points to then, published
whole. A commit id is pinned: its catalog never changes. Bare repositories work; nothing is checked out, so
`core.autocrlf`, filters and file modes play no part: digests are of the stored blob bytes, and reads send those
bytes.

The tree is walked as a folder is (`git.tree`: links, submodules, ignore files) and each skill is built by the
shared builder (`sources.building`, the one rule set). A blob is hashed once (`BlobDigests`, keyed by blob id,
optionally kept in a file), and a skill whose files (paths and blob ids) did not change since the last scan is not
built again: re-indexing after a one-file commit hashes one blob and parses one SKILL.md at most.

    source = GitSource("team-skills.git", "main")
    catalog = source.scan()
    source.revision                    # the commit id the catalog was built from
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread
import pygit2
from anyio.abc import TaskStatus

from skillwire.core.catalog import Catalog, Refusal
from skillwire.core.errors import SourceError
from skillwire.core.manifest import MAX_TOTAL_BYTES, Skill
from skillwire.core.skill_rules import FileFacts, mime_type_given
from skillwire.core.uri import SKILL_FILE
from skillwire.sources.building import CatalogBuilder, SkillTree, build_skill_tree, skill_trees
from skillwire.sources.git.blob_digests import BlobDigests
from skillwire.sources.git.tree import Memo, TreeTooLarge, TreeWalk, walk_tree
from skillwire.sources.port import DEFAULT_PACE, Rebuild, WatchableSource, WatchPace

logger = logging.getLogger(__name__)

MIN_POLL_MS = 200  # a followed reference is looked at no more often than this


class _PerThread(threading.local):
    """A Repository per thread: libgit2 objects are not to be used by two threads at once."""

    repo: pygit2.Repository | None = None


class GitSource(WatchableSource):
    """One git repository's skills at a commit, or following a reference.

    `digest_cache`: a file remembering blob digests across restarts (see `blob_digests`).
    """

    def __init__(
        self,
        repo_path: str | os.PathLike[str],
        ref: str = "HEAD",
        *,
        digest_cache: str | os.PathLike[str] | None = None,
    ) -> None:
        self.repo_path = Path(repo_path)
        self.ref = ref
        self._local = _PerThread()
        repo = self._repo()
        self.digests = BlobDigests(Path(digest_cache) if digest_cache is not None else None)
        self._reference, self._pinned = _what_ref_names(repo, ref, self.label)
        self.tip()  # SourceError now, not at the first scan, for a branch with no commit yet
        self._commit: pygit2.Oid | None = None
        self._built: dict[str, _Built] = {}  # by skill folder
        self._walked: Memo = {}  # the folders the last scan walked
        self._name = _repo_name(repo)

    @property
    def label(self) -> str:
        return f"git {self.where}"

    @property
    def where(self) -> str:
        """How refusal paths begin: `PATH@REF`, then `:` and the path in the tree, as `git show` names a file."""
        return f"{self.repo_path}@{self.ref}"

    @property
    def revision(self) -> str | None:
        """The commit id the current catalog was built from (None before the first scan)."""
        return str(self._commit) if self._commit is not None else None

    @property
    def following(self) -> bool:
        """True when REF is a reference (its new commits are served), False for a pinned commit."""
        return self._reference is not None

    def _repo(self) -> pygit2.Repository:
        """This thread's handle on the repository (PATH itself: a folder inside a work tree is not its repository)."""
        repo = self._local.repo
        if repo is None:
            try:
                repo = pygit2.Repository(os.fspath(self.repo_path), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
            except pygit2.GitError as exc:
                raise SourceError(f"{self.label}: not a git repository ({exc})") from None
            self._local.repo = repo
        return repo

    def pinned_at(self, commit: str) -> GitSource:
        """The same repository pinned at `commit` (a full commit id), sharing this source's blob digests and built
        skills: preparing the next commit hashes only the blobs and builds only the skills it changed.
        SourceError if the repository holds no such commit."""
        if len(commit) not in (40, 64) or any(c not in "0123456789abcdef" for c in commit):
            raise SourceError(f"{self.label}: {commit[:80]!r} is not a full commit id")
        other = GitSource(self.repo_path, commit)
        if str(other.tip()) != commit:  # a branch or tag that happens to be called like a commit id
            raise SourceError(f"{self.label}: {commit} names a reference, not that commit")
        other.digests = self.digests
        other._built = dict(self._built)
        other._walked = dict(self._walked)
        return other

    def tip(self) -> pygit2.Oid:
        """The commit REF names now (a pinned commit never moves)."""
        if self._pinned is not None:
            return self._pinned
        assert self._reference is not None
        repo = self._repo()
        try:
            commit = repo.lookup_reference(self._reference).peel(pygit2.Commit)
        except (KeyError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
            raise SourceError(f"{self.label}: {self._reference} names no commit now ({exc})") from None
        return commit.id

    def scan(self, generation: int = 0) -> Catalog:
        """Index the commit REF names now; skills unchanged since the last scan are taken as they were."""
        repo = self._repo()
        oid = self.tip()
        commit = repo[oid]
        assert isinstance(commit, pygit2.Commit)
        try:
            walk = walk_tree(repo, commit.tree, self._walked)
        except TreeTooLarge as exc:
            self._commit = oid
            return Catalog([], {}, [Refusal(self.label, "tree-too-large", str(exc), skill=False)], generation)
        catalog = self._build(repo, walk, generation)
        self._commit, self._walked = oid, walk.memo
        self.digests.save()
        return catalog

    def _build(self, repo: pygit2.Repository, walk: TreeWalk, generation: int) -> Catalog:
        """The catalog of a walk, by the shared builder: each skill built by the core rules, or taken from the last
        scan when its files (paths and blob ids), the problems found in it, its skill path and what is known of its
        blobs are the same."""
        rels = [rel for rel, _ in walk.files]
        oids = [oid for _, oid in walk.files]
        trees, outside = skill_trees(rels, root_name=self._name, folders=walk.folders, problems=walk.bad_paths)
        builder = CatalogBuilder()
        built: dict[str, _Built] = {}
        for tree in trees:
            files = (tuple(rels[tree.lo : tree.hi]), tuple(oids[tree.lo : tree.hi]))
            key = (tree.skill_path, *files, tree.folders, tree.problems, self.digests.corrected)
            done = self._built.get(tree.folder)
            if done is None or done.key != key:
                done = self._build_skill(repo, tree, key, rels, oids)
            built[tree.folder] = done
            if isinstance(done.result, Skill):
                builder.add(done.result, done.blobs, where=self._at(tree.folder))
            else:
                builder.refuse(done.result)
        self._built = built
        builder.refuse(*(Refusal(self._at(p.path), p.rule, p.message, skill=False) for p in outside))
        return builder.build(generation)

    def _at(self, path: str) -> str:
        """How a refusal names a path in the tree: `PATH@REF:path`, as `git show` names a file."""
        return f"{self.where}:{path}"

    def _build_skill(
        self, repo: pygit2.Repository, tree: SkillTree, key: _SkillKey, rels: list[str], oids: list[pygit2.Oid]
    ) -> _Built:
        """Build the skill of `tree` from its files, hashing the blobs not hashed before."""
        cut = len(tree.folder) + 1 if tree.folder else 0
        names = [rel[cut:] for rel in rels[tree.lo : tree.hi]]
        blobs = oids[tree.lo : tree.hi]
        facts = [_facts(name, self.digests.of(repo, oid)) for name, oid in zip(names, blobs, strict=True)]
        skill_md = _blob_bytes(repo, blobs[names.index(SKILL_FILE)])
        result = build_skill_tree(tree, facts, skill_md, at=self._at)
        if isinstance(result, Refusal):
            return _Built(key, result, {})
        by_name = dict(zip(names, blobs, strict=True))
        return _Built(key, result, {f.uri: GitBlob(self, by_name[f.rel_path]) for f in result.files})

    def read_blob(self, oid: pygit2.Oid, limit: int) -> bytes | None:
        """At most `limit` + 1 bytes of blob `oid` (None if it is gone from the repository, or too large to serve).

        A blob is read whole (libgit2 inflates it at once), at most MAX_TOTAL_BYTES; its digest is checked against
        the digest cache on the way (`BlobDigests.checked`)."""
        repo = self._repo()
        try:
            _, size = repo.odb.read_header(oid)
            if size > MAX_TOTAL_BYTES:
                return None  # no skill serves it
            _, data = repo.odb.read(oid)
        except (KeyError, pygit2.GitError, ValueError):
            return None
        self.digests.checked(oid, data)
        return data[: limit + 1]

    async def watch(
        self,
        rebuild: Rebuild,
        *,
        pace: WatchPace = DEFAULT_PACE,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Ask for a rebuild each time the followed reference moves (a pinned commit never does).

        The reference is looked at every `pace.step_ms`, at most five times a second: a lookup reads one small
        file (or packed-refs when it changed), so a new commit shows well within 2 s."""
        poll_s = max(pace.step_ms, MIN_POLL_MS) / 1000
        if self._reference is None:
            task_status.started()
            await anyio.sleep_forever()
        seen, reported, started = self._commit, False, False
        while True:
            try:
                tip: pygit2.Oid | None = await anyio.to_thread.run_sync(self.tip)
                reported = False
            except SourceError as exc:
                tip = None
                if not reported:
                    logger.warning("%s; serving commit %s until it names one again", exc, self.revision)
                    reported = True
            if tip is not None and tip != seen:  # asked once per move: a failed rebuild is not retried in a loop
                seen = tip
                logger.info("%s moved to %s; rebuilding", self._reference, tip)
                await rebuild(None)
            if not started:  # the first look is the catch-up with what moved before watching began
                task_status.started()
                started = True
            await anyio.sleep(poll_s)


_SkillKey = tuple[tuple[str, ...], tuple[str, ...], tuple[pygit2.Oid, ...], tuple[str, ...], tuple[Refusal, ...], int]
"""What a skill is built from: its skill path, its files' paths and blob ids, its empty folders, the problems found
in it, and the digest cache's count of corrections (a blob digest found wrong rebuilds every skill)."""


@dataclass(frozen=True, slots=True)
class _Built:
    """A skill folder's result in the last scan, what it was built from, and the blob of each served file."""

    key: _SkillKey
    result: Skill | Refusal
    blobs: dict[str, GitBlob]  # by file URI


@dataclass(frozen=True, slots=True)
class GitBlob:
    """A served file's bytes: one blob of the source's repository (immutable, so never changed since indexed)."""

    source: GitSource
    oid: pygit2.Oid

    def read(self, limit: int) -> bytes | None:
        return self.source.read_blob(self.oid, limit)


def _what_ref_names(repo: pygit2.Repository, ref: str, label: str) -> tuple[str | None, pygit2.Oid | None]:
    """(the reference to follow, None) when `ref` names a branch, tag or HEAD; (None, the commit) otherwise."""
    if not ref or ref.startswith("-") or any(c in ref for c in "\0\n\r"):
        raise SourceError(f"{label}: {ref!r} is not a git reference or commit")
    try:
        reference = repo.lookup_reference_dwim(ref)
    except (KeyError, pygit2.GitError, pygit2.InvalidSpecError, ValueError):
        reference = None
    if reference is not None:
        return reference.name, None
    try:
        commit = repo.revparse_single(ref).peel(pygit2.Commit)
    except (KeyError, pygit2.GitError, pygit2.InvalidSpecError, ValueError) as exc:
        reason = "" if isinstance(exc, KeyError) else f" ({exc})"
        raise SourceError(f"{label}: names no commit: no branch, tag or commit id is called that{reason}") from None
    return None, commit.id


def _repo_name(repo: pygit2.Repository) -> str:
    """The name a repository's root skill takes: its folder's name (`x` for a bare `x.git`)."""
    where = Path(repo.workdir or repo.path.rstrip("/"))
    name = where.name
    return name[: -len(".git")] if repo.is_bare and name.endswith(".git") and len(name) > 4 else name


def _facts(rel: str, blob: tuple[str, int, bool]) -> FileFacts:
    digest, size, text = blob
    return FileFacts(rel, size, digest, mime_type_given(rel, lambda: text))


def _blob_bytes(repo: pygit2.Repository, oid: pygit2.Oid) -> bytes:
    """A SKILL.md's bytes (a huge one is cut short: its skill is refused for its size before they are parsed)."""
    _, size = repo.odb.read_header(oid)
    if size > MAX_TOTAL_BYTES:
        return b""
    return repo.odb.read(oid)[1]


__all__: Sequence[str] = ["GitBlob", "GitSource"]
