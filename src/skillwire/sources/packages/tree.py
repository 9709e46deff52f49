"""The files under a package's skill folder when it has no real path (a zip import): listed and read with bounds.

An archive is hostile input like any folder: a member name may hold `..` or an empty segment,
a listing may hold millions of names, a member may inflate without end. `list_tree` lists a
Traversable's files and folders once (a zip archive from its name list in one pass, not one scan
of every name per folder as `zipfile.Path.iterdir` does), refusing a name with an empty, `.` or
`..` segment and stopping past `MAX_ENTRIES`; `read_member` reads at most `limit + 1` bytes.

    tree = list_tree(files("acme_tools") / "skills")      # TreeProblem if the archive is hostile
    data = read_member(root, "pdf/SKILL.md", limit=size)
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.resources.abc import Traversable

from skillwire.sources.packages.roots import shown

MAX_ENTRIES = 100_000
"""Files and folders one package's skill folder may hold (a folder of 200 skills of 50 files is 10,000)."""

_CHUNK = 1 << 20


class TreeProblem(Exception):
    """A package's skill folder that cannot be listed safely; `reason` says why, in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Tree:
    """What a skill folder holds: files and folders by `/`-separated path relative to it, sorted."""

    files: tuple[str, ...]
    folders: tuple[str, ...]


def list_tree(root: Traversable, *, max_entries: int = MAX_ENTRIES) -> Tree:
    """Every file and folder under `root`; TreeProblem for a hostile name or more than `max_entries` entries."""
    if isinstance(root, zipfile.Path):
        return _zip_tree(root, max_entries)
    files: list[str] = []
    folders: list[str] = []
    pending: list[tuple[str, Traversable]] = [("", root)]
    while pending:
        prefix, folder = pending.pop()
        for child in folder.iterdir():
            rel = prefix + child.name
            _check(rel, child.name)
            if len(files) + len(folders) >= max_entries:
                raise TreeProblem(f"it holds more than {max_entries:,} files and folders")
            if child.is_dir():
                folders.append(rel)
                pending.append((rel + "/", child))
            elif child.is_file():
                files.append(rel)
    return Tree(tuple(sorted(files)), tuple(sorted(folders)))


def _zip_tree(root: zipfile.Path, max_entries: int) -> Tree:
    """A zip archive's members under `root`, from its name list in one pass."""
    prefix = root.at
    files: set[str] = set()
    folders: set[str] = set()
    for name in _names(root.root.namelist(), prefix):
        is_dir = name.endswith("/")
        rel = name[:-1] if is_dir else name
        if not rel:
            continue  # the root itself
        parts = rel.split("/")
        for segment in parts:
            _check(rel, segment)
        for i in range(1, len(parts)):
            folders.add("/".join(parts[:i]))  # a folder implied by a deeper member
        (folders if is_dir else files).add(rel)
        if len(files) + len(folders) > max_entries:
            raise TreeProblem(f"it holds more than {max_entries:,} files and folders")
    if files & folders:
        raise TreeProblem(f"{shown(min(files & folders))!r} is both a file and a folder in the archive")
    return Tree(tuple(sorted(files)), tuple(sorted(folders)))


def _names(names: Iterable[str], prefix: str) -> Iterable[str]:
    return (n[len(prefix) :] for n in names if n.startswith(prefix))


def _check(rel: str, segment: str) -> None:
    """TreeProblem if `segment` (of the path `rel`) cannot name a folder's entry: empty, `.`, `..` or holding `/`."""
    if segment in ("", ".", "..") or "/" in segment:
        raise TreeProblem(f"the archive holds the path {shown(rel)!r}, with an empty, '.' or '..' segment")


def read_member(root: Traversable, rel: str, *, limit: int) -> bytes:
    """At most `limit` + 1 bytes of the file `rel` under `root` (more than `limit` back: it is larger)."""
    node = root
    for segment in rel.split("/"):
        node = node.joinpath(segment)
    parts: list[bytes] = []
    left = limit + 1
    with node.open("rb") as stream:
        while left > 0:
            chunk = stream.read(min(left, _CHUNK))
            if not chunk:
                break
            parts.append(chunk)
            left -= len(chunk)
    return b"".join(parts)
