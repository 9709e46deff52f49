"""Walking a root folder: which files and skill folders it holds, and what is wrong on the way.

Follows a symbolic link only when its fully resolved target stays inside the root; a link that leaves it, dangles
or loops, a device, socket or pipe, and a name that is not UTF-8 become bad paths (refusing the skill holding
them). Ignore rules (`sources.ignore`) apply as the walk goes; with project ignores, virtualenvs, node_modules
and `.gitignore`d folders are passed over while looking for skills. A folder below which nothing was recorded
(empty, or holding only ignored files) is an empty branch (`Skill.folders`) if a URI can name it.

    walk = Walk(root=real_root)
    walk_dir(walk, real_root, "", IgnoreRules.empty(), frozenset())
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from sys import intern
from typing import Protocol

from skillwire.core.catalog import Refusal
from skillwire.core.skill_rules import (
    encodes,
    nameable_folder,
    shown_name,
)
from skillwire.core.uri import SKILL_FILE
from skillwire.sources.digest_cache import file_key
from skillwire.sources.folder.records import (
    FileRecord,
    Walk,
    is_inside,
    join_rel,
)
from skillwire.sources.ignore import IGNORE_FILE, MAX_IGNORE_FILE_BYTES, IgnoreRules, builtin_ignored
from skillwire.sources.safe_open import UnsafeFile, read_regular

GITIGNORE = ".gitignore"


PROJECT_DIRS = frozenset({"node_modules"})  # with project_ignores: never walked while looking for skills


VENV_MARKER = "pyvenv.cfg"  # a folder holding it is a Python virtualenv (PEP 405)


Descent = tuple[str, str, IgnoreRules, frozenset[tuple[int, int]], "IgnoreRules | None"]
"""What `walk_dir` gets to walk one folder: its real location, root-relative path, rules, ancestors, project."""


class Handoff(Protocol):
    """Takes a folder the walk reached to be walked elsewhere (True), or leaves it to this walk (False).

    Called where the walk would go into the folder, after every check on the way (ignore rules, links, loops), with
    the arguments that walk would get; `fanout` is how many folders its parent lists (0 in a skill folder)."""

    def __call__(self, walk: Walk, descent: Descent, *, fanout: int) -> bool: ...


def walk_dir(
    walk: Walk,
    real_dir: str,
    rel_dir: str,
    rules: IgnoreRules,
    ancestors: frozenset[tuple[int, int]],
    *,
    stat_files: bool = True,
    project: IgnoreRules | None = None,
    handoff: Handoff | None = None,
    ident: tuple[int, int] | None = None,
) -> None:
    """Record what is under `real_dir`. With `stat_files` False, regular files (known from the
    directory entry's type) are left un-stat'ed (key None): the scan stats each where it reads it.
    `project`: the `.gitignore` rules in force while no skill has been entered (`project_ignores`), else None.
    `handoff`: may take folders to be walked elsewhere; each taken goes to `walk.deferred`, and so does a folder
    below which only taken folders lie (whether they are empty branches is known once their walks are back).
    `ident`: `real_dir`'s (st_dev, st_ino) when the caller has just stat'ed it (one system call less per folder)."""
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
            rules = rules.with_file(rel_dir, ignore_lines(real_dir))
        except (OSError, UnicodeDecodeError) as exc:
            rule = "not-a-file" if isinstance(exc, UnsafeFile) else "unreadable"
            walk.bad_paths.append(
                Refusal(join_rel(rel_dir, IGNORE_FILE), rule, f"ignore file unreadable: {reason_of(exc)}")
            )
    if project is not None:
        project = _project_rules(project, entries, real_dir, rel_dir)
    if ident is None:
        here = os.stat(real_dir)
        ident = (here.st_dev, here.st_ino)
    ancestors = ancestors | {ident}
    prefix = rel_dir + "/" if rel_dir else ""
    root_prefix = walk.root + "/"
    at_usual_path = real_dir == (root_prefix + rel_dir if rel_dir else walk.root)  # so is every plain file here
    files = walk.files
    fanout = 0
    if handoff is not None and not any(e.name == SKILL_FILE for e in entries):  # a skill's folders stay together
        fanout = sum(1 for e in entries if e.is_dir(follow_symlinks=False))
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
                    location = None if at_usual_path else entry.path
                    earlier = walk.reuse.get(rel) if walk.reuse is not None else None
                    if earlier is not None and earlier.location == location and earlier.stamp is not None:
                        files.append(earlier)  # `index_skills` checks its stamp and copies it if the file changed
                    else:
                        record = FileRecord(intern(name), location, head=prefix)
                        record.ident = hash((ident[0], entry.inode()))  # no system call: the entry's inode
                        files.append(record)
                    if name == SKILL_FILE:
                        walk.skill_dirs.append(rel_dir)
                        walk.skill_rules[rel_dir] = (None if at_usual_path else real_dir, rules)
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
            if not is_inside(location, walk.root):
                walk.bad_paths.append(Refusal(rel, "link-escapes", "symbolic link leads outside the served root"))
                continue
            walk.linked = True
        if is_dir:
            if (st.st_dev, st.st_ino) in ancestors:
                walk.bad_paths.append(Refusal(rel, "link-loop", "symbolic link loops back to a folder above it"))
                continue
            if project is not None and _not_a_skill_tree(project, name, rel, location):
                continue
            if handoff is not None and handoff(walk, (location, rel, rules, ancestors, project), fanout=fanout):
                walk.deferred.append(rel)
                continue
            found = (len(walk.files), len(walk.folders), len(walk.bad_paths), len(walk.deferred))
            walk_dir(
                walk,
                location,
                rel,
                rules,
                ancestors,
                stat_files=stat_files,
                project=project,
                handoff=handoff,
                ident=(st.st_dev, st.st_ino),
            )
            if found[:3] == (len(walk.files), len(walk.folders), len(walk.bad_paths)):
                if found[3] != len(walk.deferred):
                    walk.deferred.append(rel)  # only folders walked elsewhere below it: decided when they are back
                elif nameable_folder(rel):
                    walk.folders.append(rel)  # empty, or holding only ignored files: a directory all the same
        elif stat.S_ISREG(st.st_mode):
            usual = location == root_prefix + rel
            record = FileRecord(intern(name), None if usual else location, st.st_size, hash(file_key(st)), head=prefix)
            record.ident = hash((st.st_dev, st.st_ino))
            walk.files.append(record)
            if name == SKILL_FILE:
                walk.skill_dirs.append(rel_dir)
                walk.skill_rules[rel_dir] = (None if at_usual_path else real_dir, rules)
        else:
            walk.bad_paths.append(Refusal(rel, "not-a-file", "not a regular file (device, socket or pipe)"))


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
            return project.with_file(rel_dir, ignore_lines(real_dir, GITIGNORE))
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


def ignore_lines(real_dir: str, name: str = IGNORE_FILE) -> list[str]:
    """The lines of the ignore file `name` in the real folder `real_dir`: a regular file of at most
    MAX_IGNORE_FILE_BYTES in UTF-8, opened without waiting (a FIFO named like it must not hang a scan)."""
    path = real_dir + "/" + name
    data = read_regular(path, limit=MAX_IGNORE_FILE_BYTES, real_path=path)
    if len(data) > MAX_IGNORE_FILE_BYTES:
        raise OSError(errno.EFBIG, f"larger than {MAX_IGNORE_FILE_BYTES} bytes")
    return data.decode("utf-8").splitlines()


def reason_of(exc: BaseException) -> str:
    """An OSError's reason without the path (the refusal names it), else the exception's text."""
    return str(exc.strerror or exc) if isinstance(exc, OSError) else str(exc)
