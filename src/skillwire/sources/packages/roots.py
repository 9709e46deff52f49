"""Where installed Python distributions keep their skills: the `skillwire.skills` entry-point group.

A distribution ships skills by naming, in the entry-point group `skillwire.skills`, a package
(`acme_tools`) or a folder inside one (`acme_tools:skills`; deeper folders with dots,
`acme_tools:data.skills`). That folder is a root like any folder given to `skillwire serve`:
skill folders (or one skill) under it. The entry point's own name is free text shown in messages.

Finding a root never runs a distribution's code: the package is located with the import system's
finders (`find_spec`, parents included, without importing them) and its files are opened through
`importlib.resources` on a module object that is never executed. Every failure is the failing
distribution's alone: it becomes a `RootProblem` naming it, and the other distributions go on.

    for found in package_roots():                    # every distribution on sys.path
        found.root.iterdir()                         # an importlib.resources Traversable
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.metadata
import importlib.resources
import importlib.util
import re
import sys
import types
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from importlib.resources.abc import Traversable
from pathlib import Path

from skillwire.core.display import clip, terminal_safe

ENTRY_POINT_GROUP = "skillwire.skills"
"""The entry-point group naming skill folders (pyproject.toml: `[project.entry-points."skillwire.skills"]`)."""

_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_FOLDER = re.compile(r"[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*")
_SHOWN = 80  # characters of a distribution's own text (name, version, entry) shown in a message


@dataclass(frozen=True, slots=True)
class PackageRoot:
    """One entry point's skill folder: the distribution it came from and the folder as a Traversable."""

    distribution: str
    version: str
    entry: str
    value: str
    root: Traversable

    @property
    def label(self) -> str:
        """How messages name it: `package acme-tools 1.2.0 (acme = acme_tools:skills)`."""
        return f"package {self.distribution} {self.version} ({self.entry} = {self.value})"


@dataclass(frozen=True, slots=True)
class RootProblem:
    """An entry point (or a whole distribution) whose skills cannot be found, and why."""

    distribution: str
    version: str
    entry: str | None
    reason: str

    @property
    def label(self) -> str:
        named = f"package {self.distribution} {self.version}" if self.version else f"package {self.distribution}"
        return named if self.entry is None else f"{named} (entry point {self.entry})"


def normalize_name(name: str) -> str:
    """A distribution name as PEP 503 compares them (`Acme_Tools` and `acme-tools` are one)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def package_roots(
    only: Collection[str] | None = None, *, path: Sequence[str] | None = None
) -> Iterator[PackageRoot | RootProblem]:
    """Every skill folder the installed distributions declare, in distribution-name order.

    `only`: distribution names to keep (any spelling PEP 503 equates); a name not installed is a
    `RootProblem`. `path`: the import path to search (default `sys.path`); the first distribution
    of a name on it wins, as for imports.
    """
    # What was installed or removed a moment ago must be seen: the import system caches a folder's listing
    # by its mtime, which two changes within one clock tick leave as it was.
    importlib.invalidate_caches()
    importlib.metadata.MetadataPathFinder().invalidate_caches()  # an instance: a plain method on 3.11
    wanted = None if only is None else {normalize_name(n): n for n in only}
    seen: dict[str, tuple[str, importlib.metadata.Distribution]] = {}
    problems: list[RootProblem] = []
    for dist in importlib.metadata.distributions(path=list(sys.path if path is None else path)):
        try:
            name = _text(dist.metadata["Name"])
        except Exception as exc:  # a distribution's metadata is its own; it must not stop the others
            problems.append(RootProblem("(unnamed)", "", None, f"its metadata cannot be read: {_why(exc)}"))
            continue
        if not name:
            continue  # no name: not a distribution anything could ask for (pip shows none either)
        key = normalize_name(name)
        if key not in seen and (wanted is None or key in wanted):
            seen[key] = (shown(name), dist)
    yield from problems
    if wanted is not None:
        for key in sorted(set(wanted) - set(seen)):
            yield RootProblem(shown(wanted[key]), "", None, "no distribution of that name is installed")
    for key in sorted(seen):
        yield from _roots_of(*seen[key], path)


def _roots_of(
    name: str, dist: importlib.metadata.Distribution, path: Sequence[str] | None
) -> Iterator[PackageRoot | RootProblem]:
    """The skill folders the distribution `name` declares (a problem instead of each one that cannot be found)."""
    try:
        version = shown(_text(dist.metadata["Version"]) or "?")
        entries = sorted(
            (ep for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP), key=lambda ep: (ep.name, ep.value)
        )
    except Exception as exc:
        yield RootProblem(name, "", None, f"its entry points cannot be read: {_why(exc)}")
        return
    for ep in entries:
        entry = shown(ep.name)
        try:
            yield PackageRoot(name, version, entry, shown(ep.value), _locate(ep.value, path))
        except _NotFound as exc:
            yield RootProblem(name, version, entry, exc.reason)
        except Exception as exc:  # a hostile spec or loader: this entry point's problem, never the server's
            yield RootProblem(name, version, entry, f"{shown(ep.value)} cannot be opened: {_why(exc)}")


class _NotFound(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _locate(value: str, path: Sequence[str] | None) -> Traversable:
    """The folder an entry point's value names: `package` or `package:folder.sub`, found without importing."""
    module, sep, folder = (part.strip() for part in value.partition(":"))
    if not _MODULE.fullmatch(module) or (sep and not _FOLDER.fullmatch(folder)):
        raise _NotFound(f"{shown(value)!r} names no package or folder in one: write 'package' or 'package:folder'")
    spec = _find_spec(module, path)
    if spec is None:
        raise _NotFound(f"the package {module} is not installed")
    if spec.submodule_search_locations is None:
        raise _NotFound(f"{module} is a module, not a package: skills live in a package's folder")
    root = _files(spec)
    for part in folder.split(".") if sep else ():
        root = root.joinpath(part)
    if not root.is_dir():
        raise _NotFound(f"{shown(value)} is not a folder in the installed package")
    return root


def _find_spec(dotted: str, path: Sequence[str] | None) -> ModuleSpec | None:
    """The spec of `dotted`, each parent located by the finders but never imported (no package code runs)."""
    parts = dotted.split(".")
    if path is None:
        spec = importlib.util.find_spec(parts[0])  # a top-level name imports nothing (meta-path finders included)
    else:
        spec = importlib.machinery.PathFinder.find_spec(parts[0], list(path))
    for i in range(1, len(parts)):
        if spec is None or spec.submodule_search_locations is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[: i + 1]), list(spec.submodule_search_locations))
    return spec


def _files(spec: ModuleSpec) -> Traversable:
    """The package's folder as importlib.resources sees it, from a module object that is never executed."""
    if spec.origin is None or spec.loader is None or isinstance(spec.loader, importlib.machinery.NamespaceLoader):
        folders = [Path(p) for p in spec.submodule_search_locations or ()]
        if len(folders) != 1 or not folders[0].is_dir():
            raise _NotFound(
                f"{spec.name} is a namespace package spread over {len(folders)} places: "
                "give it an __init__.py, or name a folder in a regular package"
            )
        return folders[0]
    # A bare module object carrying the spec: no loader's create_module or exec_module is called (an
    # extension-module __init__ would run C code in create_module), yet importlib.resources reads through the
    # spec's loader as for an imported package (a folder, a zip archive, or whatever the loader reads from).
    module = types.ModuleType(spec.name)
    module.__spec__ = spec
    return importlib.resources.files(module)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def shown(text: str) -> str:
    """A distribution's own text (a name, a version, an archive's member) made fit for a message: one line, bounded."""
    return clip(terminal_safe(text), _SHOWN)


def _why(exc: BaseException) -> str:
    return shown(f"{type(exc).__name__}: {exc}")
