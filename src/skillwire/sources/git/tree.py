"""Walking a git tree as the folder source walks a folder: the files it holds, links followed, what is left out.

A commit's tree is read straight from the object database (no checkout): each regular blob is a file (its mode,
executable or not, does not matter), whatever its name says. The folder source's rules apply unchanged, so the
same content gives the same files whether it is checked out or not:

- a symbolic link (mode 120000) is followed only when its target, fully resolved inside the tree, stays inside
  it; an absolute target or one that climbs above the tree is refused (`link-escapes`), so is a target that is
  not there (`link-dangles`) and a folder link that leads back to a folder above it (`link-loop`);
- a submodule (a gitlink, mode 160000) is refused (`submodule`): its files live in another repository;
- built-in ignores and `.skillwireignore` files (gitignore syntax, in any folder) drop what they match;
- a file name that is not UTF-8 is reported (`file-name-encoding`) and its blob never read; a tree entry named
  "", ".", ".." or holding "/" (only a crafted tree has one) is refused (`tree-entry-invalid`).

    walk = walk_tree(repo, commit.tree)
    walk.files          # [(root-relative path, blob id), ...] in path order
    walk.bad_paths      # refusals: inside a skill they refuse it, elsewhere they are only reported
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from skillwire.core.catalog import Refusal
from skillwire.core.skill_rules import encodes, nameable_folder, shown_name
from skillwire.sources.ignore import IGNORE_FILE, MAX_IGNORE_FILE_BYTES, IgnoreRules, builtin_ignored

TREE = 0o040000
LINK = 0o120000
GITLINK = 0o160000
MAX_LINK_TARGET = 4096  # PATH_MAX: a longer link text is no path a checkout could make
MAX_LINK_HOPS = 40  # Linux's limit on links followed while resolving one path (ELOOP past it)
MAX_ENTRIES = 2_000_000  # links to folders can multiply a small tree; a walk stops here
MAX_DEPTH = 256  # folders deeper than this are not walked (a crafted tree costs nothing to nest; a URI has bounds)


class TreeTooLarge(Exception):
    """The tree, with its folder links followed, holds more than MAX_ENTRIES entries."""


@dataclass(frozen=True, slots=True)
class _Found:
    """What the walk of one folder found, kept for the next walk: a folder whose tree id, place and ignore rules
    are unchanged (and that holds no link) holds the same files."""

    files: tuple[tuple[str, pygit2.Oid], ...]
    folders: tuple[str, ...]
    bad_paths: tuple[Refusal, ...]
    entries: int


Memo = dict[tuple[bytes, str, str, tuple[tuple[str, bytes], ...]], _Found]
"""Folders walked, by (tree id, path served as, path in the tree, ignore files in force)."""


@dataclass(slots=True)
class TreeWalk:
    """What one walk of a commit's tree found, and the folders it walked (`memo`, for the next walk)."""

    files: list[tuple[str, pygit2.Oid]] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)  # empty branches: folders below which nothing was recorded
    bad_paths: list[Refusal] = field(default_factory=list)
    links: int = 0  # links followed: a file's blob may come from elsewhere in the tree
    entries: int = 0
    memo: Memo = field(default_factory=dict)


class _LinkError(Exception):
    """A link that is not followed: the refusal rule and its message."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


def walk_tree(repo: pygit2.Repository, tree: pygit2.Tree, before: Memo | None = None) -> TreeWalk:
    """Every served file under `tree` (links followed as for folders, ignores applied), in path order.

    `before`: the `memo` of an earlier walk of the same repository; folders it walked are not read again, so
    a walk after a one-file commit reads only the trees on that file's path."""
    walk = TreeWalk()
    _Walker(repo, tree, walk, before or {}).folder(tree, "", "", _Rules(IgnoreRules.empty(), ()), frozenset({""}))
    walk.files.sort()
    walk.folders.sort()
    return walk


@dataclass(frozen=True, slots=True)
class _Rules:
    """The ignore rules in force, and what identifies them across walks: (folder, blob id) of each ignore file."""

    rules: IgnoreRules
    key: tuple[tuple[str, bytes], ...]

    def ignored(self, rel: str, *, is_dir: bool) -> bool:
        return self.rules.ignored(rel, is_dir=is_dir)

    def with_file(self, folder: str, lines: list[str], blob: pygit2.Oid) -> _Rules:
        """These rules plus the ignore file `blob` (its `lines`) in `folder`."""
        return _Rules(self.rules.with_file(folder, lines), (*self.key, (folder, blob.raw)))


def entry_name(entry: pygit2.Object) -> str:
    """A tree entry's name as the OS gives a file name: UTF-8, bytes that are not as lone surrogates (PEP 383)."""
    raw = entry.raw_name
    assert raw is not None  # an object read from a tree always has its name
    return raw.decode("utf-8", "surrogateescape")


@dataclass(frozen=True, slots=True)
class _Walker:
    """One walk: the repository, the commit's root tree (links resolve in it), and what was found so far."""

    repo: pygit2.Repository
    root: pygit2.Tree
    walk: TreeWalk
    before: Memo

    def folder(self, tree: pygit2.Tree, rel_dir: str, real_dir: str, rules: _Rules, ancestors: frozenset[str]) -> None:
        """Record what is under `tree`, served as `rel_dir`, found in the tree at `real_dir` (differs under a link).

        A folder the last walk found the same way is taken from it; one holding no link is kept for the next."""
        walk = self.walk
        if rel_dir.count("/") >= MAX_DEPTH:
            walk.bad_paths.append(Refusal(rel_dir, "tree-too-deep", f"folders nest more than {MAX_DEPTH} deep here"))
            return
        key = (tree.id.raw, rel_dir, real_dir, rules.key)
        found = self.before.get(key)
        if found is None:
            start, folders, bad, links, count = (
                len(walk.files),
                len(walk.folders),
                len(walk.bad_paths),
                walk.links,
                walk.entries,
            )
            self._read(tree, rel_dir, real_dir, rules, ancestors)
            if walk.links != links:
                return  # a link's target may change while this tree does not: walked afresh each time
            found = _Found(
                tuple(walk.files[start:]),
                tuple(walk.folders[folders:]),
                tuple(walk.bad_paths[bad:]),
                walk.entries - count,
            )
        else:
            walk.files.extend(found.files)
            walk.folders.extend(found.folders)
            walk.bad_paths.extend(found.bad_paths)
            walk.entries += found.entries
        walk.memo[key] = found

    def _read(self, tree: pygit2.Tree, rel_dir: str, real_dir: str, rules: _Rules, ancestors: frozenset[str]) -> None:
        """Walk the entries of `tree` (see `folder`)."""
        repo, root, walk = self.repo, self.root, self.walk
        entries = list(tree)
        walk.entries += len(entries)
        if walk.entries > MAX_ENTRIES:
            raise TreeTooLarge(f"the tree holds over {MAX_ENTRIES:,} entries with its folder links followed")
        prefix = rel_dir + "/" if rel_dir else ""
        for entry in entries:
            if entry_name(entry) == IGNORE_FILE:
                try:
                    rules = rules.with_file(rel_dir, _ignore_lines(repo, entry), entry.id)
                except _LinkError as exc:
                    walk.bad_paths.append(Refusal(prefix + IGNORE_FILE, exc.rule, f"ignore file unreadable: {exc}"))
        for entry in entries:
            name = entry_name(entry)
            rel = prefix + name
            mode: int = entry.filemode
            if name in ("", ".", "..") or "/" in name or "\0" in name:
                walk.bad_paths.append(
                    Refusal(rel, "tree-entry-invalid", f"tree entry {name!r} is no file name (a crafted tree?)")
                )
                continue
            if not (name.isascii() or encodes(name)) and mode != TREE:
                if builtin_ignored(name, is_dir=False) or rules.ignored(rel, is_dir=False):
                    continue
                shown = shown_name(name)
                walk.bad_paths.append(
                    Refusal(rel, "file-name-encoding", f"name '{shown}' is not valid UTF-8; rename it to valid UTF-8")
                )
                continue
            real = _join(real_dir, name)
            oid = entry.id
            if mode == LINK:
                try:
                    real, mode, oid = _resolve(repo, root, real, 0)
                except _LinkError as exc:
                    if not (builtin_ignored(name, is_dir=False) or rules.ignored(rel, is_dir=False)):
                        walk.bad_paths.append(Refusal(rel, exc.rule, exc.message))
                    continue
                walk.links += 1
            is_dir = mode == TREE
            if builtin_ignored(name, is_dir=is_dir) or rules.ignored(rel, is_dir=is_dir):
                continue
            if is_dir:
                if real in ancestors:
                    walk.bad_paths.append(Refusal(rel, "link-loop", "symbolic link loops back to a folder above it"))
                    continue
                sub = repo[oid]
                assert isinstance(sub, pygit2.Tree)
                before = (len(walk.files), len(walk.folders), len(walk.bad_paths))
                self.folder(sub, rel, real, rules, ancestors | {real})
                if before == (len(walk.files), len(walk.folders), len(walk.bad_paths)) and nameable_folder(rel):
                    walk.folders.append(rel)  # empty, or holding only ignored files: a directory all the same
            elif mode == GITLINK:
                walk.bad_paths.append(Refusal(rel, "submodule", _SUBMODULE))
            elif mode & 0o170000 == 0o100000:
                walk.files.append((rel, oid))
            else:
                walk.bad_paths.append(Refusal(rel, "not-a-file", f"not a regular file (git mode {mode:o})"))


_SUBMODULE = (
    "a git submodule: its files live in another repository, which is not served; "
    "serve that repository as a source of its own, or copy its files in"
)


def _resolve(repo: pygit2.Repository, root: pygit2.Tree, link: str, hops: int) -> tuple[str, int, pygit2.Oid]:
    """Where the link at `link` leads inside `root`, fully resolved: the path there, its mode and its object id.

    Containment is decided on the resolved path, never on the link text, as for folders: `a/../../x` leaves
    the tree even though it starts inside it. A link in the middle of a target is resolved first, as the OS does.
    """
    if hops >= MAX_LINK_HOPS:
        raise _LinkError("unreadable", "cannot be read: Too many levels of symbolic links")
    blob = repo[_entry(root, link).id]
    if not isinstance(blob, pygit2.Blob) or blob.size > MAX_LINK_TARGET:
        raise _LinkError("unreadable", "cannot be read: File name too long")
    text = blob.data.decode("utf-8", "surrogateescape")
    if text.startswith("/") or "\0" in text:
        raise _LinkError("link-escapes", "symbolic link leads outside the served root")
    parts = link.split("/")[:-1]
    mode, oid = TREE, root.id  # what `parts` names so far: a folder
    for comp in text.split("/"):
        if comp in ("", "."):
            continue
        if mode == GITLINK:
            raise _LinkError("submodule", _SUBMODULE)
        if mode != TREE:
            raise _LinkError("unreadable", "cannot be read: Not a directory")
        if comp == "..":
            if not parts:
                raise _LinkError("link-escapes", "symbolic link leads outside the served root")
            parts.pop()
            mode, oid = TREE, (_entry(root, "/".join(parts)).id if parts else root.id)
            continue
        path = "/".join([*parts, comp])
        entry = _entry(root, path)
        if entry.filemode == LINK:
            resolved, mode, oid = _resolve(repo, root, path, hops + 1)
            parts = resolved.split("/") if resolved else []
        else:
            mode, oid = entry.filemode, entry.id
            parts.append(comp)
    return "/".join(parts), mode, oid


def _entry(root: pygit2.Tree, path: str) -> pygit2.Object:
    """The entry at `path` (root-relative, "/"-separated) in `root`; `link-dangles` if there is none."""
    try:
        return root[path]
    except (KeyError, UnicodeEncodeError):
        raise _LinkError("link-dangles", "symbolic link points to nothing") from None


def _ignore_lines(repo: pygit2.Repository, entry: pygit2.Object) -> list[str]:
    """The lines of a `.skillwireignore` blob: a regular file of at most MAX_IGNORE_FILE_BYTES of UTF-8."""
    if entry.filemode & 0o170000 != 0o100000:
        raise _LinkError("not-a-file", "not a regular file")
    _, size = repo.odb.read_header(entry.id)
    if size > MAX_IGNORE_FILE_BYTES:
        raise _LinkError("unreadable", f"larger than {MAX_IGNORE_FILE_BYTES} bytes")
    blob = repo[entry.id]
    assert isinstance(blob, pygit2.Blob)
    try:
        return blob.data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise _LinkError("unreadable", str(exc)) from None


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name
