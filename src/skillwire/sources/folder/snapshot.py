"""The folder source's snapshot in the digest cache: written after a scan, read back for a warm restart.

Each served skill is one `SkillRow` (on disk, columns of every skill and file: `folder_cache_layout`; the cache
header's version names the layout, so a cache of another layout is ignored, never trusted). A row is a hint: its
locations must lie inside a root as it resolves now, its frontmatter is parsed again from the SKILL.md bytes its
digest names, and reads re-hash what they send.

A restore reads no SKILL.md up front: each skill is checked when it is first built (listed, got, read), so a
100,000-skill restart publishes in a fraction of a second and the background scan that follows reads the rest.

    snapshot = snapshot_of(roots, states, index, refusals)
    catalog, checked = restore_catalog(snapshot, roots, generation, trusted_before_ns, on_mismatch)
"""

from __future__ import annotations

import bisect
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import repeat
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
from skillwire.core.uri import SKILL_FILE, directory_uri, skill_uris_of
from skillwire.sources.digest_cache import file_key
from skillwire.sources.folder.cache_layout import ColumnRows, RootRows, SkillRow, Snapshot
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


def _served_rows(snapshot: Snapshot, roots: Sequence[Path]) -> list[tuple[int, ColumnRows]] | None:
    """Each root's skill rows in a snapshot taken for `roots`, with the root's index (None if taken for others).

    Names were checked when the snapshot was decoded; every location recorded apart must lie inside its root as
    it resolves now: a cache file edited by someone else must not be able to publish a file from anywhere on
    the disk (a skill's usual folder is its root's real path and its folder name, which cannot climb out)."""
    if snapshot.roots != [os.path.abspath(r) for r in roots]:
        return None
    found: list[tuple[int, ColumnRows]] = []
    for i, (root, part) in enumerate(zip(roots, snapshot.per_root, strict=True)):
        if part is None:
            continue
        real_root = os.path.realpath(root)
        if part.real != real_root:
            return None  # the root now resolves elsewhere: nothing recorded applies
        rows = ColumnRows.of(part.real, part.rows)
        for k in rows.unusual():  # the other rows' folders are the usual ones, made from checked names
            moved = rows.moved(k)
            for where in (rows.real_dir(k), *moved.values()):
                if not _safe_location(where, real_root):
                    raise ValueError(f"location {where!r} is outside every root")
            for where in moved.values():  # links, few: each must already be a resolved path (none on the way)
                if os.path.realpath(where) != where:
                    raise ValueError(f"location {shown_name(where)!r} is not a resolved path")
        found.append((i, rows))
    return found


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


Checked = dict[tuple[int, str], tuple[int, tuple[dict[str, Any], int]]]
"""SKILL.md files restored skills were built from, by (root index, skill folder): the stamp seen, the frontmatter."""


def restore_catalog(
    snapshot: Snapshot,
    roots: Sequence[Path],
    generation: int,
    trusted_before_ns: int,
    on_mismatch: Callable[[str], None],
) -> tuple[Catalog, Checked] | None:
    """The catalog a snapshot holds for `roots` and the SKILL.md files its skills were built from so far (filled as
    they are built), or None if it was taken for other roots.

    Nothing is read here: each skill is built on first use from its row and its SKILL.md as read then
    (`check_skill_md`); one whose SKILL.md does not match is withdrawn (`Catalog.deferred`) and its folder as
    shown is passed to `on_mismatch`."""
    found = _served_rows(snapshot, roots)
    if found is None:
        return None
    restorer = _Restorer(roots, trusted_before_ns, on_mismatch, {})
    where: dict[str, tuple[ColumnRows, int]] = {}
    builders: list[tuple[str, Callable[[], Skill | None]]] = []
    files = 0
    for i, rows in found:  # in bulk: 100,000 rows take a tenth of a second
        uris = skill_uris_of(rows.base, rows.folders)
        indexes = range(len(rows))
        where.update(zip(uris, zip(repeat(rows), indexes, strict=False), strict=True))
        builders += zip(uris, map(partial, repeat(restorer.skill), repeat(i), repeat(rows), indexes), strict=True)
        # Distinct files: a nested skill's files are in its enclosing skill's row too (outermost rows count).
        skill_dirs, memo = set(rows.folders), dict[str, bool]()
        parents = (folder.rpartition("/")[0] for folder in rows.folders)
        nested = [k for k, parent in enumerate(parents) if parent and folder_in_skill(parent, skill_dirs, memo)]
        files += rows.file_count(0, len(rows)) - sum(rows.file_count(k) for k in nested)
    refusals = [printable(r) for r in snapshot.refusals]
    catalog = Catalog.deferred(builders, _RowLocator(where), refusals, generation, file_count=files)
    return catalog, restorer.checked


@dataclass(frozen=True, slots=True)
class _Restorer:
    """Builds a restored skill from its row when it is first used (`restore_catalog`)."""

    roots: Sequence[Path]
    trusted_before_ns: int
    on_mismatch: Callable[[str], None]
    checked: Checked

    def skill(self, i: int, rows: ColumnRows, k: int) -> Skill | None:
        """Row `k`'s skill (of root `i`), its frontmatter parsed from its SKILL.md as it is now; None if that file no
        longer has the size and digest recorded or breaks the rules (said to `on_mismatch`)."""
        row = rows[k]
        verified = check_skill_md(_skill_md_of(row))
        if verified is None:
            self.on_mismatch(os.path.join(str(self.roots[i]), row.folder) if row.folder else str(self.roots[i]))
            return None
        fm, line, key = verified
        if key[3] < self.trusted_before_ns and key[4] < self.trusted_before_ns:  # else too recent to trust its stamp
            self.checked[i, row.folder] = (hash(key), (fm, line))
        return _skill_from_row(row, fm)


@dataclass(frozen=True, slots=True)
class _RowLocator:
    """Where a restored skill's files live: its folder (checked inside a root) and the few links recorded apart."""

    where: dict[str, tuple[ColumnRows, int]]  # skill URI -> its row

    def __call__(self, skill: Skill, f: SkillFile) -> FolderFile:
        rows, k = self.where[skill.uri]
        return FolderFile(rows.moved(k).get(f.rel_path) or rows.real_dir(k) + "/" + f.rel_path)


def priors_of(
    snapshot: Snapshot,
    roots: Sequence[Path],
    trusted: Sequence[int | None],
    restored: Catalog | None,
    checked: Checked,
) -> list[Prior | None] | None:
    """Per root, the files and skills a snapshot recorded, as a scan of it would have left them
    (the skills taken from `restored`, the catalog `restore()` made of the same snapshot, if given)."""
    found = _served_rows(snapshot, roots)
    if found is None:
        return None
    rows = [(i, row) for i, part in found for row in part]
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
            # A restored skill already built (its SKILL.md checked) is shared; the others are not built for this.
            built = restored if (i, skill_dir) in checked else None
            skill = built.skill(directory_uri(row.skill_path) + "/" + SKILL_FILE) if built is not None else None
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
