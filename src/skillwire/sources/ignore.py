"""Which paths under a skill root are never served.

Rules, in order:
1. Built-in: version-control folders (`.git`, `.hg`, `.svn`, `.bzr`, `_darcs`, `CVS`),
   bytecode and tool caches (`__pycache__`, `.mypy_cache`, `.pytest_cache`, `.ruff_cache`),
   OS junk (`.DS_Store`, `Thumbs.db`, `desktop.ini`, AppleDouble `._*` files), compiled
   Python (`*.pyc`, `*.pyo`), and the ignore files themselves.
2. `.skillwireignore` files, in any folder, with `.gitignore` syntax and semantics;
   patterns are relative to the folder holding the file and apply below it.

Hidden folders are otherwise walked (collections keep skills under `.curated/`).

    rules = IgnoreRules.empty().with_file("a/b", ["*.tmp", "build/"])
    rules.ignored("a/b/x.tmp", is_dir=False)   # True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when an ignore file is first read: a catalog without one never loads it
    import pathspec

IGNORE_FILE = ".skillwireignore"
MAX_IGNORE_FILE_BYTES = 1 << 20  # a .skillwireignore larger than this is refused, not read (every source)

IGNORED_DIRS = frozenset(
    {".git", ".hg", ".svn", ".bzr", "_darcs", "CVS", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
IGNORED_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini", IGNORE_FILE, ".gitkeep"})
IGNORED_SUFFIXES = (".pyc", ".pyo")


def builtin_ignored(name: str, *, is_dir: bool) -> bool:
    """True if the built-in rules drop an entry called `name`."""
    if is_dir:
        return name in IGNORED_DIRS
    return name in IGNORED_FILES or name.startswith("._") or name.endswith(IGNORED_SUFFIXES)


@dataclass(frozen=True)
class IgnoreRules:
    """The `.skillwireignore` specs in force for a folder: (folder, spec) pairs, outermost first."""

    specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()

    @classmethod
    def empty(cls) -> IgnoreRules:
        return cls()

    def with_file(self, folder: str, lines: Iterable[str]) -> IgnoreRules:
        """These rules plus the patterns of an ignore file in `folder` (root-relative, `/`-separated)."""
        import pathspec

        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        return IgnoreRules((*self.specs, (folder, spec)))

    def ignored(self, rel_path: str, *, is_dir: bool) -> bool:
        """True if `rel_path` (root-relative) is matched by an ignore file above it; later files win."""
        verdict = False
        for folder, spec in self.specs:
            prefix = folder + "/" if folder else ""
            if not rel_path.startswith(prefix):
                continue
            local = rel_path[len(prefix) :] + ("/" if is_dir else "")
            for pattern in spec.patterns:
                include = getattr(pattern, "include", None)
                if include is None:
                    continue
                if pattern.match_file(local) is not None:
                    verdict = bool(include)
        return verdict
