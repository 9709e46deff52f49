"""What `skillwire validate` and `skillwire serve` warn about: one function for both, so they never disagree.

A warning is something served that a host may read differently, or something left out that its author may not
expect: the portability traps of each served SKILL.md (`server.portability`, on `core.lint`), names that several
skills share (`core.lint.duplicate_name_warnings`) and, for folders, the SKILL.md of each refused skill and the
files in a served skill's folder that the server leaves out. A file is named as the user would write it: under
the root they named, through the linked folder they reached it by.

    roots = FolderRoots(["skills/", "team=more-skills/"])
    for warning in catalog_warnings(catalog, roots):
        print(warning)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from skillwire.core.catalog import Catalog
from skillwire.core.lint import RULES, LintWarning, duplicate_name_warnings, lint_skill_md
from skillwire.core.skill_rules import shown_name
from skillwire.core.uri import PREFIX
from skillwire.server.portability import MAX_SKILL_MD_BYTES, PortabilityCheck
from skillwire.sources.folder.source import FolderFile
from skillwire.sources.ignore import IGNORE_FILE
from skillwire.sources.safe_open import read_regular
from skillwire.sources.spec import parse_spec

__all__ = ["FolderRoots", "catalog_warnings"]

_QUIET = frozenset({IGNORE_FILE, ".gitkeep"})  # left out on purpose: saying so would be noise


@dataclass(frozen=True, slots=True)
class _Root:
    given: str  # as the user wrote it
    real: str  # its resolved path, ending in a separator
    prefix: str  # the skill path its skills are served under, ending in "/" ("" for none)


class FolderRoots:
    """The folders among a command's SOURCE specs, to name served files by the paths the user gave."""

    def __init__(self, specs: Sequence[str]) -> None:
        given = [(str(Path(s.target)), s.prefix) for s in map(parse_spec, specs) if s.kind == "folder"]
        self.roots = tuple(
            _Root(root, os.path.realpath(root).rstrip(os.sep) + os.sep, "".join(p + "/" for p in prefix))
            for root, prefix in given  # as the folder source names them (`Path`): refusals begin with these
        )

    def holds(self, path: str) -> bool:
        """True if `path` (as a refusal names it) lies under one of the roots as they were given."""
        return any(path == r.given or path.startswith(r.given.rstrip(os.sep) + os.sep) for r in self.roots)

    def shown(self, catalog: Catalog, uri: str) -> str:
        """The path of the file at `uri` as the user would write it (the URI itself for a file not on disk).

        The catalog keeps a file's resolved real path; a skill reached through a linked folder has the same one as
        the skill the link points at, so the path is taken from the URI (the path under its root) whenever that
        path leads to the file, and from the real path only when it does not (a root that is itself a skill).
        """
        served = catalog.file(uri)
        if served is None or not isinstance(served.content, FolderFile):
            return uri
        location = served.content.path
        path = unquote(uri.removeprefix(PREFIX))
        for root in self.roots:
            if not location.startswith(root.real):
                continue
            if path.startswith(root.prefix):
                own = path[len(root.prefix) :]
                linked = os.path.join(root.given, own)
                if location == root.real + own or os.path.realpath(linked) == location:
                    return shown_name(linked)  # shown_name: a root's own path may hold bytes that are not UTF-8
            return shown_name(os.path.join(root.given, location[len(root.real) :]))
        return shown_name(location)


def catalog_warnings(catalog: Catalog, roots: FolderRoots, check: PortabilityCheck | None = None) -> list[LintWarning]:
    """Every warning about `catalog`: shared names, each served SKILL.md's portability, refused skills' SKILL.md
    (read where they were found), and files the server leaves out. `check`: the one serving uses, if any (it
    keeps what it linted already; its `shown` must be `roots.shown`)."""
    check = check or PortabilityCheck(roots.shown)
    return [
        *duplicate_name_warnings(catalog, lambda uri: roots.shown(catalog, uri)),
        *check.warnings(catalog),
        *_refused_skill_md(catalog, roots),
        *_not_served(catalog),
    ]


def _refused_skill_md(catalog: Catalog, roots: FolderRoots) -> list[LintWarning]:
    """The warnings of every refused skill's SKILL.md in a folder (a portability refusal already says its own)."""
    out: list[LintWarning] = []
    for refusal in catalog.refusals:
        path = refusal.path
        if refusal.skill and refusal.rule not in RULES and os.path.basename(path) == "SKILL.md" and roots.holds(path):
            try:  # a regular file only, never over-read: it may have been swapped for a FIFO since the scan
                raw = read_regular(path, limit=MAX_SKILL_MD_BYTES)
            except OSError:
                continue
            if raw is not None and len(raw) <= MAX_SKILL_MD_BYTES:
                out.extend(lint_skill_md(raw, path=path))
    return out


def _not_served(catalog: Catalog) -> list[LintWarning]:
    """Files and folders inside served skills that the server leaves out (built-in ignores, .skillwireignore).

    The catalog is the truth: whatever is on disk under a skill's folder but in no manifest is not served, so no
    ignore rule is restated here. A `.gitkeep` (and a folder holding nothing else) is left out on purpose: no
    warning for it.
    """
    served: set[str] = set()
    holding: set[str] = set()  # every folder that holds a served file, at any depth
    skill_dirs: set[str] = set()
    for skill in catalog.skills:
        for f in skill.files:
            entry = catalog.file(f.uri)
            if entry is not None and isinstance(entry.content, FolderFile):
                served.add(entry.content.path)
                if f.rel_path == "SKILL.md":
                    skill_dirs.add(os.path.dirname(entry.content.path))
    for path in served:
        folder = os.path.dirname(path)
        while folder not in holding and folder != os.path.dirname(folder):
            holding.add(folder)
            folder = os.path.dirname(folder)
    out: list[LintWarning] = []
    seen: set[str] = set()
    for top in sorted(skill_dirs):
        for folder, dirs, files in os.walk(top):
            for name in list(dirs):
                path = os.path.join(folder, name)
                if path not in holding and path not in seen:
                    dirs.remove(name)
                    seen.add(path)
                    if not _only_placeholders(path):
                        out.append(_ignored(path + os.sep, "folder"))
            for name in files:
                path = os.path.join(folder, name)
                if name not in _QUIET and path not in served and path not in seen and not os.path.islink(path):
                    seen.add(path)
                    out.append(_ignored(path, "file"))
    return out


def _only_placeholders(folder: str) -> bool:
    """True if `folder` holds no file but `.gitkeep` placeholders (at any depth): nothing anyone meant to serve."""
    return all(name in _QUIET for _, _, files in os.walk(folder) for name in files)


def _ignored(path: str, kind: str) -> LintWarning:
    return LintWarning(
        path=shown_name(path),  # a name that is not UTF-8 is shown escaped: JSON and the terminal can carry it
        line=None,
        column=None,
        rule="not-served",
        message=f"this {kind} is in the skill's folder but is not served (built-in ignore rules or .skillwireignore)",
        fix="delete it, or if the skill needs it, take it out of .skillwireignore",
    )
