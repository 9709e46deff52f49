"""Indexing one root's skill folders: hash what a walk found, then build each skill by the core rules.

A skill whose folder looks as it did (same files, stamps, bad paths and empty folders) keeps its published objects; any
other is built again with `skill_rules.build_skill`, the folder's own problems (links, unreadable files) passed
in as problems.

    index_skills(state, state.skill_dirs, state.files, {}, built_before={}, trusted_before_ns=0, ...)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from sys import intern

from skillwire.core.catalog import Refusal
from skillwire.core.errors import SkillError
from skillwire.core.manifest import Skill
from skillwire.core.skill_rules import (
    FileFacts,
    build_skill,
    encodes,
    span,
)
from skillwire.core.uri import SKILL_FILE
from skillwire.sources.digest_cache import file_key
from skillwire.sources.folder.hash import hash_file, same_parse
from skillwire.sources.folder.pool import Job, hash_files
from skillwire.sources.folder.records import (
    SLASH_SKILL_FILE,
    Built,
    FileRecord,
    Progress,
    RootState,
    in_some_skill,
    is_under,
    signature_of,
    span_of,
)
from skillwire.sources.ignore import IgnoreRules

PROGRESS_EVERY = 512  # files hashed between two calls of a progress callback


def index_skills(
    state: RootState,
    skill_dirs: Sequence[str],
    walked: Sequence[FileRecord],
    old: Mapping[str, FileRecord],
    *,
    built_before: dict[str, Built | Refusal],
    trusted_before_ns: int,
    progress: Progress | None,
    distrust: set[str],
    recheck_skill_md: bool = False,
    checked: set[str] | None = None,
    known_errors: dict[str, OSError] | None = None,
    rules_before: dict[str, tuple[str | None, IgnoreRules]] | None = None,
) -> None:
    """Hash the files of `skill_dirs` found by a walk (`walked`, sorted), then build each skill into `state`.

    Files at a location in `distrust` are read again whatever their stamp, and their skills rebuilt.
    With `recheck_skill_md` (`old` came from a digest cache), every SKILL.md is read and parsed again and
    its skill rebuilt unless the bytes give exactly the frontmatter recorded: a cache can pair true stamps
    with any text, so frontmatter is only ever published from the bytes on disk. SKILL.md files in
    `checked` were read by `restore` in this process: their stamps are its own, so they need no second read.
    `known_errors`: files already found unreadable (by path), hashed before this call and not in `walked`.
    `rules_before`: the last scan's `RootState.rules`, whose objects an unchanged skill keeps (`build_skills`)."""
    in_skill = set(state.rules)
    root_is_skill = "" in in_skill
    memo: dict[str, bool] = {}
    todo = [f for f in walked if in_some_skill(f.rel, in_skill, memo, root_is_skill=root_is_skill)]
    errors: dict[str, OSError] = {}
    reread: set[str] = set()
    vanished: set[int] = set()
    root_prefix = state.real_root + "/"
    total = len(todo)
    fresh: list[Job] = []  # files with nothing to go by: read and hashed after this loop, on every core
    same: dict[int, FileRecord] = {}  # id of a walked record -> the earlier record it equals
    copies: dict[int, FileRecord] = {}  # id of an earlier record the walk listed -> the new record in its place
    done = 0
    for listed in todo:
        rec = listed
        if not (rec.rel.isascii() or encodes(rec.rel)):
            continue  # under a folder whose name is not UTF-8: its skill is refused for that, unread
        path = rec.location or root_prefix + rec.rel
        prev = old.get(rec.rel)
        usable = prev if prev is not None and prev.stamp is not None else None
        if distrust and path in distrust:
            usable = None
            reread.add(rec.rel)
        if rec is prev:  # the walk listed the last scan's own record (`Walk.reuse`): kept only while unchanged
            state_of = _unchanged(rec, path, trusted_before_ns) if usable is not None else False
            if state_of is True:
                done += 1
                if progress is not None and (done % PROGRESS_EVERY == 0 or done == total):
                    progress(done, total)
                continue
            if isinstance(state_of, FileNotFoundError):
                vanished.add(id(rec))
                done += 1
                continue
            rec = copies[id(prev)] = FileRecord(prev.tail, prev.location, head=prev.head)  # never changed in place
        if usable is None:
            fresh.append((rec, path))
            continue
        done += 1
        if (
            recheck_skill_md
            and usable is not None
            and (rec.rel == SKILL_FILE or rec.rel.endswith(SLASH_SKILL_FILE))
            and not (checked and rec.rel in checked)
        ):
            error = hash_file(rec, path, None, trusted_before_ns, state.real_root)
            if error is None and not same_parse(rec, usable):
                reread.add(rec.rel)
        else:
            error = hash_file(rec, path, usable, trusted_before_ns, state.real_root)
            if error is None and rec.digest is usable.digest and rec.location == usable.location:
                same[id(rec)] = usable  # unchanged, its fields copied from `usable`: keep that record instead
        if isinstance(error, FileNotFoundError):
            vanished.add(id(rec))  # removed (or renamed away) since the walk listed it: it is not there
        elif error is not None:
            errors[rec.rel] = error
        if progress is not None and (done % PROGRESS_EVERY == 0 or done == total):
            progress(done, total)
    if fresh:
        finished = [total - len(fresh)]  # files skipped above (names no URI carries) count as done

        def advanced(count: int) -> None:
            before = finished[0]
            finished[0] += count
            if progress is not None and (
                finished[0] // PROGRESS_EVERY > before // PROGRESS_EVERY or finished[0] == total
            ):
                progress(finished[0], total)

        failed = hash_files(fresh, state.real_root, advanced)
        for rec, _ in fresh:
            error = failed.get(id(rec))
            if isinstance(error, FileNotFoundError):
                vanished.add(id(rec))
            elif error is not None:
                errors[rec.rel] = error
    if copies:
        state.files[:] = [copies.get(id(f), f) for f in state.files]
    if vanished:
        kept = [f for f in state.files if id(f) not in vanished]
        state.files[:] = kept
    if same:
        # A rescan keeps the records (and their path strings) of unchanged files: the walk's copies are freed
        # together, so a rescan of an unchanged tree leaves the memory it found, not a second set beside holes.
        state.files[:] = [same.get(id(f), f) for f in state.files]
    if known_errors:
        errors = {**known_errors, **errors}
    build_skills(
        state, skill_dirs, errors, reread, built_before=built_before, vanished=bool(vanished), rules_before=rules_before
    )


def _unchanged(rec: FileRecord, path: str, trusted_before_ns: int) -> bool | OSError:
    """True if the file at `path` still has `rec`'s stamp, old enough to vouch for its bytes (as `hash_file` asks of
    a previous record); False if not; the OSError if it cannot be stat'ed."""
    try:
        key = file_key(os.stat(path))
    except OSError as exc:
        return exc
    return hash(key) == rec.stamp and key[4] < trusted_before_ns and key[3] < trusted_before_ns


def build_skills(
    state: RootState,
    skill_dirs: Sequence[str],
    errors: dict[str, OSError],
    reread: set[str],
    *,
    built_before: dict[str, Built | Refusal],
    vanished: bool,
    root_is_skill: bool | None = None,
    rules_before: dict[str, tuple[str | None, IgnoreRules]] | None = None,
) -> None:
    """Build each skill of `skill_dirs` from `state`'s hashed files into `state.results` (unchanged ones shared
    from `built_before`); with `vanished` (files gone since the walk), a skill whose SKILL.md went is dropped.

    `errors`: files that could not be read, by path; `reread`: files read again whatever their stamp.
    `root_is_skill`: whether the root folder is a skill (default: whether `state` holds it as one).
    `rules_before`: the last scan's rules by skill folder: an unchanged skill keeps that entry and its folder
    name, so the walk's copies are freed together (a rescan then leaves no survivors among freed memory)."""
    if root_is_skill is None:
        root_is_skill = "" in state.rules
    base: tuple[str, ...] = (os.path.basename(state.real_root),) if root_is_skill else ()
    display_root = str(state.root)
    root_prefix = state.real_root + "/"
    gone: list[str] = []
    kept: dict[str, tuple[str, tuple[str | None, IgnoreRules]]] = {}  # skill folder -> the last scan's name and rules
    for skill_dir in skill_dirs:
        skill_path = base + tuple(intern(p) for p in skill_dir.split("/") if p)  # team/area prefixes repeat
        prefix = skill_dir + "/" if skill_dir else ""
        lo, hi = span_of(state.files, skill_dir)
        members = state.files[lo:hi]
        if vanished and not any(rec.rel == prefix + SKILL_FILE for rec in members):
            gone.append(skill_dir)  # its SKILL.md went away since the walk: no longer a skill
            continue
        bad = [b for b in state.bad_paths if is_under(b.path, skill_dir)]
        apart, rules = state.rules[skill_dir]
        real_dir = apart if apart is not None else root_prefix + skill_dir if skill_dir else state.real_root
        lo, hi = span(state.folders, skill_dir)
        folders = state.folders[lo:hi]
        signature = signature_of(members, bad, skill_dir, folders)
        before = built_before.get(skill_dir)
        if (
            isinstance(before, Built)
            and before.signature == signature
            and (before.real_dir, before.rules, before.shown_root) == (real_dir, rules, display_root)
            and not any(rec.rel in errors or rec.rel in reread for rec in members)
        ):
            state.results[skill_dir] = before  # unchanged: the published objects are shared, not rebuilt
            old = rules_before.get(skill_dir) if rules_before is not None else None
            if old is not None and old == (apart, rules) and before.rel_dir == skill_dir:
                kept[skill_dir] = (before.rel_dir, old)
            continue
        try:
            skill, moved = _build_skill(
                members, bad, prefix, skill_path, errors, real_dir=real_dir, root_prefix=root_prefix, folders=folders
            )
        except SkillError as err:
            rel = err.path or SKILL_FILE
            display = os.path.join(display_root, skill_dir) if skill_dir else display_root
            state.results[skill_dir] = Refusal(os.path.join(display, rel), err.rule, err.message, err.line)
            continue
        state.results[skill_dir] = Built(
            skill, moved, display_root, apart, skill_dir, rules, state.real_root, signature
        )
    if kept:
        _keep_earlier(state, kept)
    if gone:
        for skill_dir in gone:
            state.results.pop(skill_dir, None)
            del state.rules[skill_dir]
        state.skill_dirs = [d for d in state.skill_dirs if d not in set(gone)]


def _keep_earlier(state: RootState, kept: dict[str, tuple[str, tuple[str | None, IgnoreRules]]]) -> None:
    """Put the last scan's equal objects (folder name, rules entry) in place of the walk's for unchanged skills."""
    rules = [(kept[d][0], kept[d][1]) if d in kept else (d, v) for d, v in state.rules.items()]
    state.rules.clear()
    state.rules.update(rules)
    results = [(kept[d][0], v) if d in kept else (d, v) for d, v in state.results.items()]
    state.results.clear()
    state.results.update(results)
    state.skill_dirs[:] = [kept[d][0] if d in kept else d for d in state.skill_dirs]


def _build_skill(
    members: Sequence[FileRecord],
    bad_paths: Sequence[Refusal],
    prefix: str,
    skill_path: tuple[str, ...],
    errors: dict[str, OSError],
    *,
    real_dir: str,
    root_prefix: str,
    folders: Sequence[str] = (),
) -> tuple[Skill, dict[str, str] | None]:
    """One skill folder's entry by the core rules (and the files not at `real_dir`/path, if any); SkillError
    naming the broken rule. A bad path found by the walk and an unreadable file are this source's problems.
    `folders`: its empty branches (root-relative, sorted)."""
    cut = len(prefix)
    problems = [SkillError(bad.message, rule=bad.rule, path=bad.path[cut:]) for bad in bad_paths]
    if errors:
        problems.extend(
            SkillError(f"cannot be read: {error.strerror or error}", rule="unreadable", path=rec.rel[cut:])
            for rec in members
            if (error := errors.get(rec.rel)) is not None
        )
    # Names in a skill repeat across skills (SKILL.md, references/...): one string each, not one per file.
    facts = [FileFacts(intern(rec.rel[cut:]), rec.size, rec.digest or "", rec.mime) for rec in members]
    skill_md = next(rec for rec in members if rec.rel == prefix + SKILL_FILE).frontmatter
    if skill_md is None:  # never read (under a name no URI can carry): the name rules refuse the skill first
        skill_md = SkillError("cannot be read", rule="unreadable", path=SKILL_FILE)
    skill = build_skill(skill_path, facts, skill_md, problems=problems, folders=[f[cut:] for f in folders])
    moved: dict[str, str] = {}
    usual_dir = real_dir == root_prefix + prefix[:-1] if prefix else real_dir + "/" == root_prefix
    if not usual_dir or any(rec.location is not None for rec in members):
        for rec in members:
            rel = rec.rel[cut:]
            location = rec.location or root_prefix + rec.rel
            if location != real_dir + "/" + rel:
                moved[rel] = location
    return skill, moved or None
