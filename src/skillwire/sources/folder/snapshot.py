"""The folder source's snapshot in the digest cache: written after a scan, read back for a warm restart.

Each served skill is one `SkillRow` (on disk, columns of every skill and file: `folder_cache_layout`; the cache
header's version names the layout, so a cache of another layout is ignored, never trusted). A row is a hint: its
locations must lie inside a root as it resolves now, its frontmatter is parsed again from the SKILL.md bytes its
digest names, and reads re-hash what they send.

    snapshot = snapshot_of(roots, states, index, refusals)
    catalog, dropped, checked = restore_catalog(snapshot, roots, generation, trusted_before_ns)
"""

from __future__ import annotations

import bisect
import json
import os
import sys
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from skillwire.core.catalog import Catalog, Refusal
from skillwire.core.digest import compact_digest, digest_text, sha256_digest
from skillwire.core.errors import SkillError
from skillwire.core.manifest import Skill, SkillFile
from skillwire.core.skill_rules import (
    check_frontmatter,
    file_uris,
    manifest_order,
    read_frontmatter,
    shown_name,
)
from skillwire.core.uri import SKILL_FILE, directory_uri
from skillwire.sources import worker_pool
from skillwire.sources.digest_cache import file_key
from skillwire.sources.folder.cache_layout import RootRows, SkillRow, Snapshot
from skillwire.sources.folder.records import (
    Built,
    FileRecord,
    FolderFile,
    Prior,
    RootState,
    folder_in_skill,
    is_inside,
    printable,
    rel_of,
    signature_of,
    span_of,
)
from skillwire.sources.ignore import IgnoreRules
from skillwire.sources.safe_open import open_regular, read_at_most


def snapshot_of(
    roots: Sequence[Path], states: Sequence[RootState | Refusal], index: dict[str, Built], refusals: Sequence[Refusal]
) -> Snapshot:
    """What `restore` and the next scan need: per root, each published skill as a `SkillRow`, and the refusals."""
    per_root: list[RootRows | None] = []
    for state in states:
        if not isinstance(state, RootState):
            per_root.append(None)
            continue
        rows = []
        for skill_dir in state.skill_dirs:
            built = state.results[skill_dir]
            if not isinstance(built, Built) or index.get(built.skill.uri) is not built:
                continue
            lo, hi = span_of(state.files, skill_dir)
            members = state.files[lo:hi]  # in path order; a skill lists SKILL.md first
            cut = len(skill_dir) + 1 if skill_dir else 0
            md = state.files[
                bisect.bisect_left(state.files, skill_dir + "/" + SKILL_FILE if cut else SKILL_FILE, key=rel_of)
            ]
            rows.append(
                SkillRow(
                    folder=skill_dir,
                    skill_path=built.skill.skill_path,
                    hint=json.dumps(built.skill.frontmatter, separators=(",", ":")),
                    line=md.frontmatter[1] if isinstance(md.frontmatter, tuple) else 1,
                    real_dir=built.real_dir,
                    no_rules=not built.rules.specs,
                    rels=[rec.rel[cut:] for rec in members],
                    digests=[digest_text(rec.digest) if rec.digest is not None else "" for rec in members],
                    sizes=[rec.size for rec in members],
                    mimes=[rec.mime for rec in members],
                    stamps=[rec.stamp or 0 for rec in members],
                    moved=built.moved or {},
                    folders=list(built.skill.folders),
                )
            )
        per_root.append(RootRows(state.real_root, rows))
    return Snapshot([os.path.abspath(r) for r in roots], STAMP_SCHEME, per_root, list(refusals))


# How stamps are made (hash of a tuple of ints): they are compared only if a snapshot was made the same way.
STAMP_SCHEME = f"{sys.implementation.name}-{sys.hash_info.algorithm}-{sys.version_info[0]}.{sys.version_info[1]}"


def _served_rows(snapshot: Snapshot, roots: Sequence[Path]) -> list[tuple[int, SkillRow]] | None:
    """Every skill row of a snapshot taken for `roots`, with its root's index (None if taken for other roots).

    Names were checked when the snapshot was decoded; every location recorded apart must lie inside its root as
    it resolves now: a cache file edited by someone else must not be able to publish a file from anywhere on
    the disk (a skill's usual folder is its root's real path and its folder name, which cannot climb out)."""
    if snapshot.roots != [os.path.abspath(r) for r in roots]:
        return None
    rows: list[tuple[int, SkillRow]] = []
    for i, (root, part) in enumerate(zip(roots, snapshot.per_root, strict=True)):
        if part is None:
            continue
        real_root = os.path.realpath(root)
        if part.real != real_root:
            return None  # the root now resolves elsewhere: nothing recorded applies
        usual = real_root + "/"
        for row in part.rows:
            if row.moved or not (row.real_dir == real_root if row.folder == "" else row.real_dir == usual + row.folder):
                for where in (row.real_dir, *row.moved.values()):
                    if not _safe_location(where, real_root):
                        raise ValueError(f"location {where!r} is outside every root")
                for where in row.moved.values():  # links, few: each must already be a resolved path (none on the way)
                    if os.path.realpath(where) != where:
                        raise ValueError(f"location {shown_name(where)!r} is not a resolved path")
            rows.append((i, row))
    return rows


def hint_of(row: SkillRow) -> dict[str, Any]:
    """The frontmatter a row recorded (only ever compared with what SKILL.md parses to); TypeError if not an object."""
    found = json.loads(row.hint)
    if not isinstance(found, dict):
        raise TypeError("malformed frontmatter")
    return found


def _skill_from_row(row: SkillRow, frontmatter: dict[str, Any]) -> Skill:
    uris = file_uris(directory_uri(row.skill_path) + "/", row.rels)
    digests = map(compact_digest, row.digests)
    files = sorted(map(SkillFile, row.rels, uris, digests, row.sizes, row.mimes), key=manifest_order)
    return Skill(row.skill_path, frontmatter, tuple(files), tuple(row.folders))


_SkillMd = tuple[str, int, str, tuple[str, ...]]  # where a row's SKILL.md is, its size, digest, and the skill path
_Parsed = tuple[dict[str, Any], int, tuple[int, int, int, int, int]]  # its frontmatter, first line, file key


def _skill_md_of(row: SkillRow) -> _SkillMd | None:
    """What to read and check of `row`'s SKILL.md; None if the row lists none, or lists it behind a link from a
    folder that does not resolve to itself."""
    try:
        k = row.rels.index(SKILL_FILE)
    except ValueError:
        return None
    location = row.moved.get(SKILL_FILE) or row.real_dir + "/" + SKILL_FILE
    if SKILL_FILE in row.moved and os.path.realpath(row.real_dir) != row.real_dir:
        return None
    return location, row.sizes[k], row.digests[k], tuple(row.skill_path)


def check_skill_md(wanted: _SkillMd | None) -> _Parsed | None:
    """The frontmatter of the SKILL.md `wanted` names, if its bytes have the size and digest listed and pass
    the frontmatter rules, with the key of the file read; None otherwise.

    The cache's frontmatter text is never published: a forged row could pair any frontmatter with a true
    digest. Reading SKILL.md also proves the skill's folder is where the row says: `read_regular` checks the
    open file's resolved path equals the recorded one, so a folder that is a link to elsewhere fails here.
    """
    if wanted is None:
        return None
    location, size, digest, skill_path = wanted
    try:
        fd, st = open_regular(location, real_path=location)
        try:
            data = read_at_most(fd, min(size, st.st_size) + 1)
        finally:
            os.close(fd)
    except OSError:
        return None
    if len(data) != size or sha256_digest(data) != digest:
        return None
    try:
        fm, line = read_frontmatter(data)
        check_frontmatter(fm, line, skill_path)
    except SkillError:
        return None
    return fm, line, file_key(st)


def check_skill_mds(wanted: list[_SkillMd | None]) -> list[_Parsed | None]:
    """`check_skill_md` of each (a worker process's task)."""
    return [check_skill_md(w) for w in wanted]


_VERIFY_CHUNK = 256  # SKILL.md files per task handed to a worker


def _verify_all(rows: Sequence[SkillRow], take: Callable[[int, list[_Parsed | None]], None]) -> None:
    """Check each row's SKILL.md on disk (`check_skill_md`), on every core when there are many: `take(start, found)`
    gets, in this process, the results for rows `start`, `start + 1`, ... as each chunk is done (in any order), so
    what is made of them overlaps the checks still running in workers."""
    wanted = [_skill_md_of(row) for row in rows]
    chunks = deque(range(0, len(rows), _VERIFY_CHUNK))

    def here(start: int) -> None:
        take(start, check_skill_mds(wanted[start : start + _VERIFY_CHUNK]))

    def task(start: int) -> worker_pool.Task:
        return check_skill_mds, wanted[start : start + _VERIFY_CHUNK]

    worker_pool.run_chunks(chunks, worker_pool.workers_for(len(rows)), here=here, task=task, apply=take)


Checked = dict[tuple[int, str], tuple[int, tuple[dict[str, Any], int]]]
"""SKILL.md files `restore` read, by (root index, skill folder): the stamp it saw and the frontmatter it parsed."""


def restore_catalog(
    snapshot: Snapshot, roots: Sequence[Path], generation: int, trusted_before_ns: int
) -> tuple[Catalog, list[str], Checked] | None:
    """The catalog a snapshot holds for `roots`, each skill built on first use, the skill folders left out
    because their SKILL.md did not match, and what was read of the others (None if taken for other roots)."""
    found = _served_rows(snapshot, roots)
    if found is None:
        return None
    rows: list[tuple[int, SkillRow]] = []
    dropped: list[str] = []
    checked: Checked = {}
    where: dict[str, tuple[str, dict[str, str]]] = {}
    builders: list[tuple[str, Callable[[], Skill]]] = []
    dirs_by_root: dict[int, set[str]] = {}

    def take(start: int, found_here: list[_Parsed | None]) -> None:
        for (i, row), verified in zip(found[start : start + len(found_here)], found_here, strict=True):
            if verified is None:
                dropped.append(os.path.join(str(roots[i]), row.folder) if row.folder else str(roots[i]))
                continue
            fm, line, key = verified
            if key[3] < trusted_before_ns and key[4] < trusted_before_ns:  # else too recent to be known by its stamp
                checked[i, row.folder] = (hash(key), (fm, line))
            rows.append((i, row))
            uri = directory_uri(row.skill_path) + "/" + SKILL_FILE
            where[uri] = (row.real_dir, row.moved)
            builders.append((uri, partial(_skill_from_row, row, fm)))
            dirs_by_root.setdefault(i, set()).add(row.folder)

    _verify_all([row for _, row in found], take)
    dropped.sort()
    # Distinct files: a nested skill's files are in its enclosing skill's row too, so count outermost rows only.
    memo: dict[str, bool] = {}
    files = sum(
        len(row.rels)
        for i, row in rows
        if not (row.folder and folder_in_skill(row.folder.rpartition("/")[0], dirs_by_root[i], memo))
    )
    refusals = [printable(r) for r in snapshot.refusals]
    return Catalog.deferred(builders, _RowLocator(where), refusals, generation, file_count=files), dropped, checked


@dataclass(frozen=True, slots=True)
class _RowLocator:
    """Where a restored skill's files live: its folder (checked inside a root) and the few links recorded apart."""

    where: dict[str, tuple[str, dict[str, str]]]  # skill URI -> (real folder, {path in skill: location})

    def __call__(self, skill: Skill, f: SkillFile) -> FolderFile:
        real_dir, moved = self.where[skill.uri]
        return FolderFile(moved.get(f.rel_path) or real_dir + "/" + f.rel_path)


def priors_of(
    snapshot: Snapshot,
    roots: Sequence[Path],
    trusted: Sequence[int | None],
    restored: Catalog | None,
    checked: Checked,
) -> list[Prior | None] | None:
    """Per root, the files and skills a snapshot recorded, as a scan of it would have left them
    (the skills taken from `restored`, the catalog `restore()` made of the same snapshot, if given)."""
    rows = _served_rows(snapshot, roots)
    if rows is None:
        return None
    same_stamps = snapshot.stamps == STAMP_SCHEME
    records: list[dict[str, FileRecord]] = [{} for _ in snapshot.per_root]  # each root's, by path
    priors: list[Prior | None] = [
        Prior(found, {}, when, from_cache=True) if part is not None and when is not None and same_stamps else None
        for found, part, when in zip(records, snapshot.per_root, [*trusted, *[None] * len(roots)], strict=False)
    ]
    real_roots = [os.path.realpath(r) for r in roots]
    shown_roots = [str(r) for r in roots]
    for i, row in rows:
        prior = priors[i]
        if prior is None:
            continue
        skill_dir, _, _, line, real_dir, no_rules, rels, digests, sizes, mimes, stamps, moved, folders = row
        prefix = skill_dir + "/" if skill_dir else ""
        members = []
        for rel, digest, size, mime, stamp in zip(rels, digests, sizes, mimes, stamps, strict=True):
            where = moved.get(rel) or real_dir + "/" + rel
            usual = real_roots[i] + "/" + prefix + rel
            rec = FileRecord(
                rel, None if where == usual else where, size, stamp, compact_digest(digest), mime, head=prefix
            )
            if rel == SKILL_FILE:
                seen = checked.get((i, skill_dir))
                if seen is not None:  # read by `restore` in this process: known by the stamp it saw then
                    rec.stamp, rec.frontmatter = seen
                    prior.checked.add(rec.rel)
                else:
                    # Only compared: a scan from the cache reads and parses every SKILL.md again (small files)
                    # and keeps the skill only if this equals what the bytes say (see `index_skills`).
                    rec.frontmatter = (hint_of(row), line)
            records[i][rec.rel] = rec
            members.append(rec)
        members.sort(key=rel_of)
        rules = IgnoreRules.empty() if no_rules is True else None
        if rules is not None:
            skill = restored.skill(directory_uri(row.skill_path) + "/" + SKILL_FILE) if restored is not None else None
            prior.results[skill_dir] = Built(
                skill or _skill_from_row(row, hint_of(row)),
                moved or None,
                shown_roots[i],
                None if real_dir == (real_roots[i] + "/" + skill_dir if skill_dir else real_roots[i]) else real_dir,
                skill_dir,
                rules,
                real_roots[i],
                signature_of(members, (), skill_dir, [prefix + f for f in folders]),
            )
    return priors


def _safe_location(path: object, real_root: str) -> bool:
    return isinstance(path, str) and "\n" not in path and "/../" not in path + "/" and is_inside(path, real_root)
