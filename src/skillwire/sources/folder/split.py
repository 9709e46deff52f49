"""A cold scan on every core: folders handed whole to worker processes that walk, read and hash them.

The walk goes down from the root in this process; below a folder that lists many folders (FANOUT or more, and
no SKILL.md) each of those folders is handed off. A worker walks it with the same `walk_dir`, hashes the files
of the skills it found there with the same `hash_file`, and sends back plain columns; this process builds those
skills (`build_skills`) as each answer comes, while the workers go on. What comes back is put where the serial
walk would have put it: bad paths at the place the folder was handed off (their order decides which refusal a
skill reports), whether a folder is an empty branch decided children first, ignore rules, link and loop checks
as the walk above it left them. A skill holding a handed-off folder has its other files hashed after, as the
serial path does (`index_skills`).

Workers start only for a tree that looks large (PARALLEL_FROM files, guessed from the first handed-off folder's
listing or from the folders walked so far): a small tree is walked here alone. A worker that dies or answers
nonsense costs time only: its folders are walked here.

    state = index_cold(root, real_root, project=None, progress=None, distrust=set(), trusted_before_ns=t)
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from skillwire.core.catalog import Refusal
from skillwire.core.errors import SkillError
from skillwire.core.skill_rules import encodes, nameable_folder
from skillwire.sources import worker_pool
from skillwire.sources.folder.hash import hash_file
from skillwire.sources.folder.index import build_skills, index_skills
from skillwire.sources.folder.records import (
    Built,
    FileRecord,
    Progress,
    RootState,
    Walk,
    in_some_skill,
    merged,
    rel_of,
)
from skillwire.sources.folder.walk import Descent, walk_dir
from skillwire.sources.ignore import IgnoreRules

logger = logging.getLogger(__name__)

FANOUT = 8  # a folder listing at least this many folders hands them off (fewer: the walk goes into each here)
TASKS_PER_FOLDER = 64  # the folders one folder hands off go out in about this many tasks (balance vs overhead)
PARALLEL_FROM = worker_pool.PARALLEL_FROM  # files a tree is estimated to hold before worker processes are started

_Task = tuple[str, list[Descent]]  # the real root and the folders to walk


@dataclass(slots=True)
class _Group:
    """Folders handed off together (siblings), and where each was handed off in the walk's bad paths."""

    parent: str
    folders: list[Descent] = field(default_factory=list)
    at: list[int] = field(default_factory=list)
    done: list[_Done] = field(default_factory=list)  # once walked: one for each folder


@dataclass(slots=True)
class _Done:
    """One handed-off folder, walked, hashed and its skills built, ready to join the root's state."""

    state: RootState  # its files (sorted, vanished ones left out), bad paths, folders, skills and their results
    unhashed: list[FileRecord]  # files in no skill found in the folder (one above it may hold them)
    vanished: int  # files removed since its walk listed them
    walked_any: bool  # its walk recorded something below it (else it is an empty branch, if nameable)
    errors: dict[str, OSError]  # files found unreadable, by path


class _Splitter:
    """The `Handoff` of a cold scan: takes the folders of a folder listing FANOUT or more, in sibling groups."""

    def __init__(self) -> None:
        self.groups: list[_Group] = []

    def __call__(self, walk: Walk, descent: Descent, *, fanout: int) -> bool:
        if fanout < FANOUT:
            return False
        parent = descent[1].rpartition("/")[0]
        group = self.groups[-1] if self.groups else None
        if group is None or group.parent != parent or len(group.folders) >= -(-fanout // TASKS_PER_FOLDER):
            group = _Group(parent)
            self.groups.append(group)
        group.folders.append(descent)
        group.at.append(len(walk.bad_paths))
        return True


def index_cold(
    root: Path,
    real_root: str,
    *,
    project: IgnoreRules | None,
    progress: Progress | None,
    distrust: set[str],
    trusted_before_ns: int,
) -> RootState:
    """Walk, hash and build every skill under `real_root` with nothing to go by (no earlier scan, no cache)."""
    walk = Walk(root=real_root)
    splitter = _Splitter()
    walk_dir(walk, real_root, "", IgnoreRules.empty(), frozenset(), stat_files=False, project=project, handoff=splitter)
    root_is_skill = "" in walk.skill_rules
    groups = deque(splitter.groups)
    found = [len(walk.files), 0, 0]  # files found, groups done, files hashed

    decode = partial(
        _decode, root=root, real_root=real_root, trusted_before_ns=trusted_before_ns, root_is_skill=root_is_skill
    )

    def keep(group: _Group, decoded: list[_Done]) -> None:
        group.done = decoded
        found[0] += sum(len(d.state.files) + d.vanished for d in decoded)
        found[1] += 1
        found[2] += sum(_hashed(d) for d in decoded)
        if progress is not None:  # the total is not known before the walk ends: estimated from the groups done
            progress(found[2], max(found[2], found[2] * len(splitter.groups) // found[1]))

    def here(group: _Group) -> None:
        keep(group, decode(group=group, answers=walk_folders((real_root, group.folders))))

    def apply(group: _Group, answers: Any) -> None:
        try:
            decoded = decode(group=group, answers=answers)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            logger.warning("a worker process answered what cannot be used (%s); its folders are walked here", exc)
            here(group)
            return
        keep(group, decoded)

    if _first_guess(splitter.groups) < PARALLEL_FROM:
        while groups and (found[1] == 0 or found[0] * len(splitter.groups) // found[1] < PARALLEL_FROM):
            here(groups.popleft())  # until the groups done say the tree is large enough for worker processes
    if groups:
        cores = worker_pool.cores()
        task = partial(_task, real_root=real_root)
        worker_pool.run_chunks(groups, cores if cores > 1 else 0, here=here, task=task, apply=apply, share=False)
    return _join(
        root=root,
        walk=walk,
        groups=splitter.groups,
        progress=progress,
        distrust=distrust,
        trusted_before_ns=trusted_before_ns,
    )


def _first_guess(groups: Sequence[_Group]) -> int:
    """How many files the handed-off folders may hold, before any is walked: as many as the first one lists, each.

    A large tree shows it at once (a folder of 2,000 skill folders, or 100,000 skill folders of a few files), so
    the workers start while this process walks the first folders; a small one is walked here alone."""
    if not groups:
        return 0
    try:
        with os.scandir(groups[0].folders[0][0]) as it:
            listed = sum(1 for _ in it)
    except OSError:
        return 0
    return listed * sum(len(group.folders) for group in groups)


def _task(group: _Group, *, real_root: str) -> worker_pool.Task:
    return walk_folders, (real_root, group.folders)


def walk_folders(task: _Task) -> list[tuple[Any, ...]]:
    """In a worker (or here): walk each folder as the serial walk would, hash the files of the skills found in it;
    per folder, plain columns that cross processes (see `_decode`)."""
    real_root, folders = task
    root_prefix = real_root + "/"
    out: list[tuple[Any, ...]] = []
    for location, rel, rules, ancestors, project in folders:
        walk = Walk(root=real_root)
        walk_dir(walk, location, rel, rules, ancestors, stat_files=False, project=project)
        skill_dirs = set(walk.skill_rules)
        memo: dict[str, bool] = {}
        errors: list[tuple[int, OSError]] = []
        unhashed: list[int] = []
        fm_errors: list[tuple[int, tuple[type[SkillError], str, str, str | None, int | None]]] = []
        for i, rec in enumerate(walk.files):
            if not (in_some_skill(rec.rel, skill_dirs, memo, root_is_skill=False)) or not (
                rec.rel.isascii() or encodes(rec.rel)
            ):
                unhashed.append(i)
                continue
            error = hash_file(rec, rec.location or root_prefix + rec.rel, None, 0, real_root)
            if error is not None:
                errors.append((i, error))
            elif isinstance(fm := rec.frontmatter, SkillError):
                fm_errors.append((i, (type(fm), fm.message, fm.rule, fm.path, fm.line)))
                rec.frontmatter = None
        files = walk.files
        out.append(
            (
                [f.head for f in files],  # one object per folder: pickled once, shared where it is unpickled
                [f.tail for f in files],
                [f.location for f in files],
                [f.size for f in files],
                [f.stamp for f in files],
                [f.digest for f in files],
                [f.mime for f in files],
                [f.frontmatter for f in files],
                [f.ident for f in files],
                errors,
                unhashed,
                fm_errors,
                walk.bad_paths,
                walk.folders,
                [(d, real_dir, None if r is rules else r) for d, (real_dir, r) in walk.skill_rules.items()],
                walk.linked,
            )
        )
    return out


def _decode(
    *, root: Path, real_root: str, group: _Group, answers: Any, trusted_before_ns: int, root_is_skill: bool
) -> list[_Done]:
    """What the walks of `group`'s folders found, as records, with the skills found in them built."""
    done: list[_Done] = []
    for (_, _, rules, _, _), answer in zip(group.folders, answers, strict=True):
        heads, tails, locations, sizes, stamps, digests, mimes, fms, idents, errors, unhashed, fm_errors = answer[:12]
        bad_paths, folders, skills, linked = answer[12:]
        if not all(isinstance(b, Refusal) for b in bad_paths) or not all(isinstance(f, str) for f in folders):
            raise TypeError("bad paths or folders of the wrong type")
        columns = zip(tails, locations, sizes, stamps, digests, mimes, fms, idents, heads, strict=True)
        records = [FileRecord(*fields, head=head) for *fields, head in columns]
        unhashed_records = [records[i] for i in unhashed]
        for i, (kind, message, rule, path, line) in fm_errors:
            if not (isinstance(kind, type) and issubclass(kind, SkillError)):
                raise TypeError(f"not a SkillError: {kind!r}")
            records[i].frontmatter = kind(message, rule=rule, path=path, line=line)
        failed: dict[str, OSError] = {}
        vanished: list[FileRecord] = []
        for i, error in errors:
            if not isinstance(error, OSError):
                raise TypeError(f"not an OSError: {error!r}")
            if isinstance(error, FileNotFoundError):
                vanished.append(records[i])  # removed since the walk listed it: it is not there (as `index_skills`)
            else:
                failed[records[i].rel] = error
        walked_any = bool(records or folders or bad_paths)
        if vanished:
            gone = {id(r) for r in vanished}
            records = [r for r in records if id(r) not in gone]
        records.sort(key=rel_of)
        state = RootState(
            root=root,
            real_root=real_root,
            files=records,
            folders=sorted(folders),
            bad_paths=bad_paths,
            skill_dirs=sorted(d for d, _, _ in skills),
            rules={d: (real_dir, rules if r is None else r) for d, real_dir, r in skills},
            results={},
            linked=bool(linked),
            trusted_before_ns=trusted_before_ns,
        )
        build_skills(
            state,
            state.skill_dirs,
            failed,
            set(),
            built_before={},
            vanished=bool(vanished),
            root_is_skill=root_is_skill,
        )
        done.append(_Done(state, unhashed_records, len(vanished), walked_any, failed))
    return done


def _join(
    *,
    root: Path,
    walk: Walk,
    groups: Sequence[_Group],
    progress: Progress | None,
    distrust: set[str],
    trusted_before_ns: int,
) -> RootState:
    """The root's state as the serial walk and index would leave it, from this walk and the folders handed off;
    then the files not hashed yet (found here, or in a skill holding a handed-off folder) are, and their skills
    built (`index_skills`)."""
    ats = [at for group in groups for at in group.at]
    done = [d for group in groups for d in group.done]
    bad: list[Refusal] = []
    cut = 0
    for at, d in zip(ats, done, strict=True):
        bad.extend(walk.bad_paths[cut:at])
        bad.extend(d.state.bad_paths)
        cut = at
    bad.extend(walk.bad_paths[cut:])
    rest = [*walk.files, *(f for d in done for f in d.unhashed)]
    hashed = sum(map(_hashed, done))
    files = merged([sorted(walk.files, key=rel_of), *(d.state.files for d in done)])
    handed = dict(
        zip((folder[1] for group in groups for folder in group.folders), (d.walked_any for d in done), strict=True)
    )
    folders = [*walk.folders, *(f for d in done for f in d.state.folders), *_empty_branches(walk.deferred, handed)]
    rules = dict(walk.skill_rules)
    results: dict[str, Built | Refusal] = {}
    errors: dict[str, OSError] = {}
    skill_dirs = list(walk.skill_dirs)
    for d in done:
        rules.update(d.state.rules)
        results.update(d.state.results)
        skill_dirs.extend(d.state.skill_dirs)
        errors.update(d.errors)
    state = RootState(
        root=root,
        real_root=walk.root,
        files=files,
        folders=sorted(folders),
        bad_paths=bad,
        skill_dirs=sorted(skill_dirs),
        rules=rules,
        results=results,
        linked=walk.linked or any(d.state.linked for d in done),
        trusted_before_ns=trusted_before_ns,
    )
    rest.sort(key=rel_of)
    if progress is not None and not rest:
        progress(hashed, hashed)

    def advanced(count: int, total: int) -> None:
        assert progress is not None
        progress(hashed + count, hashed + total)

    index_skills(
        state,
        sorted(walk.skill_dirs),
        rest,
        {},
        built_before={},
        trusted_before_ns=0,
        progress=advanced if progress is not None else None,
        distrust=distrust,
        known_errors=errors,
    )
    return state


def _hashed(done: _Done) -> int:
    """How many files a worker read for a handed-off folder (vanished ones included: they were tried)."""
    return len(done.state.files) - len(done.unhashed) + done.vanished


def _empty_branches(deferred: Sequence[str], handed: dict[str, bool]) -> list[str]:
    """The folders of `deferred` (children before parents) that are empty branches: nothing recorded below them,
    counting what the walks of the handed-off folders (`handed`: did it record anything) found."""
    occupied: set[str] = set()
    out: list[str] = []
    for rel in deferred:
        walked_any = handed.get(rel, False) or rel in occupied
        if not walked_any and nameable_folder(rel):
            out.append(rel)
            walked_any = True
        if walked_any:
            occupied.add(rel.rpartition("/")[0])
    return out
