"""Skills held in memory: a mapping of paths to bytes, served like a folder holding those files.

For embedding skillwire (skills made by the program itself) and as the honest fake in tests: it applies the
ignore rules (`sources.ignore`) and hands the rest to the shared builder (`sources.building`), so the same files
give the same skills, refusals, bytes, digests and directories as a folder holding them. A path ending in
`SKILL.md` makes its folder a skill (skills nest); `.skillwireignore` files and the built-in ignores apply; a
`SKILL.md` at the top makes the whole mapping one skill named `root_name`. A key ending in "/" (with empty bytes)
is a folder: an empty one is a directory with no children, as is a folder holding only ignored files. The mapping
is copied: the catalog never changes under a reader.

    source = MemorySource({"pdf/SKILL.md": b"---\\nname: pdf\\ndescription: PDFs\\n---\\n", "pdf/drafts/": b""})
    source.scan().skill("skill://pdf/SKILL.md")
"""

from __future__ import annotations

from collections.abc import Mapping

from skillwire.core.catalog import Catalog, Refusal
from skillwire.core.skill_rules import nameable_folder
from skillwire.sources.building import MemoryFile, SourceFile, build_catalog
from skillwire.sources.ignore import IGNORE_FILE, IgnoreRules, builtin_ignored

__all__ = ["MemoryFile", "MemorySource"]


class MemorySource:
    """A source of skills held in memory: {path relative to the root ("/"-separated): bytes}; "path/": b"" is a
    folder."""

    def __init__(self, files: Mapping[str, bytes], *, root_name: str = "skills", label: str = "memory") -> None:
        for path in files:
            name = path[:-1] if path.endswith("/") else path
            if not name or name.startswith("/") or any(p in ("", ".", "..") for p in name.split("/")):
                raise ValueError(f"{path!r} is not a relative path of '/'-separated names")
            if name != path and files[path]:
                raise ValueError(f"{path!r} names a folder (it ends in '/'), so it holds no bytes")
        self._files = {path: bytes(data) for path, data in files.items()}
        self._root_name = root_name
        self._label = label

    @property
    def label(self) -> str:
        return self._label

    @property
    def revision(self) -> str | None:
        return None

    def scan(self, generation: int = 0) -> Catalog:
        """Every skill the files make, and what was refused (paths as `label/path`)."""
        paths, problems, empty = _served(self._files)
        return build_catalog(
            [SourceFile.of_bytes(path, self._files[path]) for path in paths],
            label=self._label,
            root_name=self._root_name,
            folders=empty,
            problems=problems,
            generation=generation,
        )


def _served(files: Mapping[str, bytes]) -> tuple[list[str], list[Refusal], list[str]]:
    """The paths a folder walk would keep (built-in ignores and `.skillwireignore` files applied), sorted, the
    ignore files that could not be read (as problems of the folder holding them), and the empty branches a walk
    would note (folders not ignored with nothing kept below, that a URI can name), sorted."""
    rules_of: dict[str, IgnoreRules | None] = {}
    problems: list[Refusal] = []

    def rules(folder: str) -> IgnoreRules | None:
        """The rules in force inside `folder`, or None if the folder itself is ignored."""
        if folder in rules_of:
            return rules_of[folder]
        parent, _, name = folder.rpartition("/")
        above = rules(parent) if folder else IgnoreRules.empty()
        if above is None or (folder and (builtin_ignored(name, is_dir=True) or above.ignored(folder, is_dir=True))):
            rules_of[folder] = None
            return None
        found = above
        ignore_path = f"{folder}/{IGNORE_FILE}" if folder else IGNORE_FILE
        if ignore_path in files:
            try:
                found = above.with_file(folder, files[ignore_path].decode("utf-8").splitlines())
            except UnicodeDecodeError as exc:
                problems.append(Refusal(ignore_path, "unreadable", f"ignore file unreadable: {exc}"))
        rules_of[folder] = found
        return found

    kept = []
    live: set[str] = set()  # every folder a walk would enter
    for path in files:
        folder, _, name = path.rpartition("/")
        for at in _folders_of(folder):
            if rules(at) is not None:
                live.add(at)
        here = rules(folder)
        if not name or here is None or builtin_ignored(name, is_dir=False) or here.ignored(path, is_dir=False):
            continue
        kept.append(path)
    kept.sort()
    below = {at for path in [*kept, *(p.path for p in problems)] for at in _folders_of(path.rpartition("/")[0])}
    below.update(up for at in live if nameable_folder(at) for up in _folders_of(at.rpartition("/")[0]))
    return kept, problems, sorted(at for at in live if at not in below and nameable_folder(at))


def _folders_of(folder: str) -> list[str]:
    """`folder` and every folder above it, root excluded ("a/b" gives "a/b" and "a")."""
    parts = folder.split("/") if folder else []
    return ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]
