"""Skills shipped inside installed Python distributions: `skillwire serve --packages`.

A distribution declares skill folders in the entry-point group `skillwire.skills` (`package_roots`); each folder
is served like a folder given to `skillwire serve`, with the same rules. A folder installed on disk (a wheel
installed normally, an editable install) is read by the folder source itself, so links, FIFOs and every other
folder rule apply unchanged; a folder with no real path (a zip import) is listed and read through
`importlib.resources` with bounds (`package_tree`) and served from memory as read. Folders of several
distributions are served together: a skill path offered by two of them is refused for both, naming both.

A broken or hostile distribution only loses its own skills: whatever goes wrong while finding, listing or
reading its folder becomes a refusal naming it (`package acme-tools 1.2.0 (...)`), and the others are served.
Discovery runs again at each rescan, so a distribution installed meanwhile appears: `watch` rescans after pip
installs, upgrades or removes one, or a skill folder on disk is edited (`package_watch`); SIGHUP rescans too.

    source = PackageSource()                      # every installed distribution
    source = PackageSource(["acme-tools"])        # only these (PEP 503 names)
    catalog = source.scan()
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskStatus

from skillwire.core.catalog import Catalog, FileContent, Refusal
from skillwire.core.manifest import MAX_TOTAL_BYTES, Skill, SkillFile
from skillwire.core.skill_rules import skill_folders
from skillwire.sources.composite import CompositeSource, Member
from skillwire.sources.folder.source import FolderSource
from skillwire.sources.ignore import IGNORE_FILE
from skillwire.sources.memory.source import MemorySource
from skillwire.sources.packages.roots import PackageRoot, RootProblem, package_roots, shown
from skillwire.sources.packages.tree import TreeProblem, list_tree, read_member
from skillwire.sources.port import DEFAULT_PACE, Rebuild, WatchableSource, WatchPace

if TYPE_CHECKING:
    from skillwire.sources.packages.watch import WatchedPlaces

__all__ = ["MAX_ARCHIVE_BYTES", "PackageSource"]

MAX_ARCHIVE_BYTES = 256 * 1024 * 1024
"""Most bytes one distribution's skill folder may hold when it has no real path (they are kept in memory)."""

PROBLEM_RULE = "package-unreadable"


class PackageSource(WatchableSource):
    """The skills of installed distributions (see the module docstring).

    `only`: distribution names to serve (None: every distribution that declares skills). `path`: where to look
    for distributions and their packages (default `sys.path`), folders or wheels as `str` or `Path`.
    """

    def __init__(
        self, only: Iterable[str] | None = None, *, path: Sequence[str | os.PathLike[str]] | None = None
    ) -> None:
        self.only = None if only is None else tuple(only)
        if self.only is not None and not self.only:
            raise ValueError("name at least one distribution, or pass None for all of them")
        # importlib.metadata matches `str` entries only (as on sys.path): a Path would find nothing, silently.
        self.path = None if path is None else tuple(os.fspath(p) for p in path)
        self._folders: dict[str, FolderSource] = {}  # kept across scans: a rescan re-reads only changed files
        self._revision: str | None = None
        self._roots: tuple[Path, ...] = ()  # the skill folders on disk the last scan found, for `watch`

    @property
    def label(self) -> str:
        return "packages" if self.only is None else "packages " + ",".join(shown(n) for n in self.only)

    @property
    def revision(self) -> str | None:
        """The distributions the current catalog came from, with their versions."""
        return self._revision

    def watched_places(self) -> WatchedPlaces:
        """Where installs, upgrades and removals show, for the distributions and skill folders of the last scan."""
        from skillwire.sources.packages.watch import watched_places

        return watched_places(sys.path if self.path is None else self.path, self._roots)

    async def watch(
        self,
        rebuild: Rebuild,
        *,
        pace: WatchPace = DEFAULT_PACE,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Rescan after pip installs, upgrades or removes a distribution, or a skill folder changes (see
        `package_watch`)."""
        from skillwire.sources.packages.watch import watch_packages  # watchfiles loads only when watching

        await watch_packages(self.watched_places, rebuild, pace=pace, task_status=task_status)

    def scan(self, generation: int = 0) -> Catalog:
        """Find every declared skill folder now and serve them together."""
        members: list[Member] = []
        problems: list[Refusal] = []
        folders: dict[str, FolderSource] = {}
        versions: set[str] = set()
        for found in package_roots(self.only, path=self.path):
            if isinstance(found, RootProblem):
                problems.append(Refusal(found.label, PROBLEM_RULE, found.reason))
                continue
            versions.add(f"{found.distribution} {found.version}")
            if isinstance(found.root, Path):
                key = str(found.root)
                folders[key] = self._folders.get(key) or FolderSource([found.root])
                members.append(Member(_Labelled(found, folders[key].scan, key)))
            else:
                members.append(Member(_Labelled(found, partial(_scan_archive, found), found.label)))
        self._folders = folders
        self._roots = tuple(Path(key) for key in folders)
        self._revision = ", ".join(sorted(versions)) or None
        if not members:
            return Catalog([], {}, problems, generation=generation)
        catalog = CompositeSource(members).scan(generation)
        return _with_refusals(catalog, [*problems, *catalog.refusals]) if problems else catalog


class _Labelled:
    """One distribution's skill folder as a composite member: named after the distribution, never raising.

    `scan`: how the folder is indexed (a `FolderSource`'s, or `_scan_archive`); `where`: how the refusal paths
    it gives begin (replaced by the label)."""

    def __init__(self, found: PackageRoot, scan: Callable[[int], Catalog], where: str) -> None:
        self._found = found
        self._scan = scan
        self._where = where

    @property
    def label(self) -> str:
        return self._found.label

    @property
    def revision(self) -> str | None:
        return self._found.version

    def scan(self, generation: int = 0) -> Catalog:
        try:
            catalog = self._scan(generation)
        except Exception as exc:  # a hostile distribution's problem, never the server's
            why = f"{type(exc).__name__}: {exc}"
            return Catalog([], {}, [Refusal(self.label, PROBLEM_RULE, f"cannot be read: {shown(why)}")], generation)
        if self._where == self.label:
            return catalog
        refusals = [_relabelled(r, self._where, self.label) for r in catalog.refusals]
        return _with_refusals(catalog, refusals)


def _scan_archive(found: PackageRoot, generation: int) -> Catalog:
    """A skill folder without a real path (a zip import): listed and read now, within `MAX_ARCHIVE_BYTES`, and
    served from memory as read (the archive may change later; what was hashed is what is served)."""
    root: Traversable = found.root
    try:
        files = _read_archive(root)
    except TreeProblem as problem:
        return Catalog([], {}, [Refusal(found.label, PROBLEM_RULE, problem.reason)], generation)
    return MemorySource(files, root_name=root.name or "skills", label=found.label).scan(generation)


def _read_archive(root: Traversable) -> dict[str, bytes]:
    """Every file under `root`, with the bytes of those a skill or an ignore rule may need (others empty), and its
    empty folders as `FOLDER/` keys (MemorySource's way of holding a folder)."""
    tree = list_tree(root)
    needed = skill_folders(tree.files)
    files: dict[str, bytes] = {}
    total = 0
    for rel in tree.files:
        if not (rel.rpartition("/")[2] == IGNORE_FILE or any(_under(rel, d) for d in needed)):
            files[rel] = b""  # outside every skill: only its name matters
            continue
        data = read_member(root, rel, limit=MAX_TOTAL_BYTES)  # one byte more than a skill may hold: refused
        total += len(data)
        if total > MAX_ARCHIVE_BYTES:
            raise TreeProblem(f"its skills hold more than {MAX_ARCHIVE_BYTES >> 20} MiB; install it unzipped")
        files[rel] = data
    holding = {rel[:i] for rel in (*tree.files, *tree.folders) for i, c in enumerate(rel) if c == "/"}
    for folder in tree.folders:
        if folder not in holding and folder not in files:
            files[folder + "/"] = b""  # an empty folder (a zip's directory entry): a directory, as on disk
    return files


def _under(path: str, folder: str) -> bool:
    return not folder or path.startswith(folder + "/")


def _relabelled(refusal: Refusal, where: str, label: str) -> Refusal:
    """`refusal` with its path starting at the distribution's label instead of the folder's path."""
    path = label + refusal.path[len(where) :] if refusal.path.startswith(where) else f"{label}: {refusal.path}"
    return Refusal(path, refusal.rule, refusal.message, refusal.line, refusal.skill)


def _with_refusals(catalog: Catalog, refusals: Sequence[Refusal]) -> Catalog:
    """`catalog` with `refusals` instead of its own; its files are read through it."""
    return Catalog(catalog.skills, _ReadThrough(catalog), refusals, generation=catalog.generation)


@dataclass(frozen=True, slots=True)
class _ReadThrough:
    """How to read a file of a re-made catalog: through the catalog that served it first."""

    catalog: Catalog

    def __call__(self, skill: Skill, f: SkillFile) -> FileContent:
        served = self.catalog.file(f.uri)
        if served is None:  # cannot happen: the same skills, the same files
            raise KeyError(f.uri)
        return served.content
