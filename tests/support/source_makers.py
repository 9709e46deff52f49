"""Every kind of skill source, made from the same files: the contract tests and the conformance run use these.

A maker turns {path relative to the source's root: bytes} into a source serving exactly those files, using
`scratch` (an empty folder of its own) for anything it must write. The root is named `skills` wherever a source
has a root name (a SKILL.md at the top is a skill of that name). `where` is how the source's refusal paths start
(its skill folders are `where/PATH`). A new kind of source adds one entry to `MAKERS`.

    made = MAKERS["memory"]({"pdf/SKILL.md": b"..."}, tmp_path)
    made.source.scan()
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from skillwire.sources.folder.source import FolderSource
from skillwire.sources.git.source import GitSource
from skillwire.sources.memory.source import MemorySource
from skillwire.sources.packages.source import PackageSource
from skillwire.sources.port import SkillSource
from tests.support.git_repos import git_commit, git_init
from tests.support.wheels import build_wheel, package_files

ROOT_NAME = "skills"


@dataclass(frozen=True)
class Made:
    """A source, and how its refusal paths begin."""

    source: SkillSource
    where: str


Maker = Callable[[Mapping[str, bytes], Path], Made]


def write_tree(files: Mapping[str, bytes], root: Path) -> Path:
    """Write `files` under `root` (made if missing) and return it; a path ending in "/" is a folder, made empty."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        path = root.joinpath(*rel.rstrip("/").split("/"))
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def read_tree(root: Path) -> dict[str, bytes]:
    """Every regular file under `root`, by '/'-separated relative path (links and others left out)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def make_folder(files: Mapping[str, bytes], scratch: Path) -> Made:
    root = write_tree(files, scratch / ROOT_NAME)
    return Made(FolderSource([root]), str(root))


def make_memory(files: Mapping[str, bytes], scratch: Path) -> Made:
    return Made(MemorySource(files, root_name=ROOT_NAME, label="memory"), "memory")


PACKAGE = ("contract-skills", "1.0", "contract_skills")
"""The distribution the package makers build: name, version, and the import package holding `skills/`."""


def _contract_wheel(files: Mapping[str, bytes], scratch: Path) -> tuple[Path, str]:
    """A wheel whose package ships `files` as its `skills` folder, and the label its skills' refusals start with."""
    name, version, package = PACKAGE
    scratch.mkdir(parents=True, exist_ok=True)
    wheel = build_wheel(scratch, name, version, package_files(package, files), {"skills": f"{package}:skills"})
    return wheel, f"package {name} {version} (skills = {package}:skills)"


def make_package(files: Mapping[str, bytes], scratch: Path) -> Made:
    """Skills in a wheel imported as a zip archive (no real path: read through importlib.resources)."""
    wheel, label = _contract_wheel(files, scratch)
    return Made(PackageSource([PACKAGE[0]], path=[str(wheel)]), label)


def make_installed_package(files: Mapping[str, bytes], scratch: Path) -> Made:
    """Skills in a wheel unpacked into a site folder, as pip installs a pure wheel (a real path)."""
    wheel, label = _contract_wheel(files, scratch)
    site = scratch / "site-packages"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return Made(PackageSource([PACKAGE[0]], path=[str(site)]), label)


def make_git(files: Mapping[str, bytes], scratch: Path) -> Made:
    """A repository whose one commit holds the files, served from its object database (the work tree unread).

    Git keeps no empty folder: an empty one is kept as people keep it, with a `.gitkeep` (which skillwire ignores)."""
    kept = {(rel + ".gitkeep" if rel.endswith("/") else rel): data for rel, data in files.items()}
    root = write_tree(kept, scratch / ROOT_NAME)
    git_init(root)
    git_commit(root, "the files")
    return Made(GitSource(root, "main"), f"{root}@main")


MAKERS: dict[str, Maker] = {
    "folder": make_folder,
    "git": make_git,
    "memory": make_memory,
    "package": make_package,
    "package-installed": make_installed_package,
}
"""Every source kind the contract tests and the conformance run cover, by name."""
