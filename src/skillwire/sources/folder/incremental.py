"""Re-indexing only what a change touched: the skill folder (or plain folder) holding each changed path.

`rewalk` walks one region again with the ignore rules and ancestors a walk from the root would carry, and
patches the root's state; anything it cannot patch (links, a folder turned file) raises NeedFullScan.

    for region in outermost_regions({region_of(state, rel) for rel in changed}):
        rewalk(state, region, progress, distrust)
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from skillwire.core.catalog import Refusal
from skillwire.core.skill_rules import (
    span,
)
from skillwire.sources.folder.index import index_skills
from skillwire.sources.folder.records import (
    Built,
    NeedFullScan,
    Progress,
    RootState,
    Walk,
    is_under,
    join_rel,
    rel_of,
    span_of,
)
from skillwire.sources.folder.walk import ignore_lines, reason_of, walk_dir
from skillwire.sources.ignore import IGNORE_FILE, IgnoreRules, builtin_ignored


def relative(path: str, root: str) -> str | None:
    """`path` relative to `root`, "/"-separated ("" for the root itself), or None if it is outside."""
    if path == root:
        return ""
    prefix = root.rstrip(os.sep) + os.sep
    if not path.startswith(prefix):
        return None
    rel = path[len(prefix) :]
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


def region_of(state: RootState, rel: str) -> str:
    """The folder to walk again for a change at `rel`: the outermost skill holding it, else its folder."""
    known = state.rules  # keyed by skill folder
    outermost = None
    folder = rel
    while folder:
        if folder in known:
            outermost = folder
        folder = folder.rpartition("/")[0]
    if outermost is not None:
        return outermost
    return rel.rpartition("/")[0]


def outermost_regions(regions: Iterable[str]) -> list[str]:
    """The regions not inside another one (a region "" is the whole root)."""
    kept: list[str] = []
    for region in sorted(regions):
        if not kept or not is_under(region, kept[-1]):
            kept.append(region)
        if region == "":
            return [""]
    return kept


def rewalk(state: RootState, region: str, progress: Progress | None, distrust: set[str]) -> None:
    """Walk `region` (a root-relative folder) again and patch `state` with what it finds."""
    rules, ancestors, ignored = _context(state.real_root, region)
    real_dir = os.path.join(state.real_root, *region.split("/")) if region else state.real_root
    walk = Walk(root=state.real_root)
    if not ignored:
        try:
            st = os.lstat(real_dir)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise NeedFullScan(f"{region}: {exc.strerror or exc}") from None
        if st is not None:
            if not stat.S_ISDIR(st.st_mode):
                raise NeedFullScan(f"{region} is no longer a folder")
            walk_dir(walk, real_dir, region, rules, ancestors, stat_files=False)
    if walk.linked:
        raise NeedFullScan(f"{region} holds symbolic links")
    walk.files.sort(key=rel_of)
    lo, hi = span_of(state.files, region)
    old = {f.rel: f for f in state.files[lo:hi]}
    built_before: dict[str, Built | Refusal] = {}
    state.files[lo:hi] = walk.files
    lo, hi = span(state.folders, region)
    state.folders[lo:hi] = sorted(walk.folders)
    state.bad_paths = [b for b in state.bad_paths if not is_under(b.path, region)] + walk.bad_paths
    for skill_dir in [d for d in state.skill_dirs if is_under(d, region)]:
        built_before[skill_dir] = state.results.pop(skill_dir)
        del state.rules[skill_dir]
    state.skill_dirs = sorted([d for d in state.skill_dirs if not is_under(d, region)] + walk.skill_dirs)
    state.rules.update(walk.skill_rules)
    index_skills(
        state,
        sorted(walk.skill_dirs),
        walk.files,
        old,
        built_before=built_before,
        trusted_before_ns=state.trusted_before_ns,
        progress=progress,
        distrust=distrust,
    )


def _context(real_root: str, region: str) -> tuple[IgnoreRules, frozenset[tuple[int, int]], bool]:
    """What a walk from the root would carry into `region`: ignore rules, the folders above, and whether
    `region` itself is ignored. Raises NeedFullScan if a folder on the way is a link (or not a folder)."""
    rules = IgnoreRules.empty()
    ancestors: set[tuple[int, int]] = set()
    folder, real = "", real_root
    parts = region.split("/") if region else []
    for depth in range(len(parts) + 1):
        try:
            st = os.lstat(real)
        except FileNotFoundError:
            return rules, frozenset(ancestors), True  # gone: nothing under it is served
        except OSError as exc:
            raise NeedFullScan(f"{folder or '.'}: {exc.strerror or exc}") from None
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise NeedFullScan(f"{folder or '.'} is a link or not a folder")
        if depth == len(parts):
            break
        ancestors.add((st.st_dev, st.st_ino))
        try:
            if os.path.lexists(real + "/" + IGNORE_FILE):  # anything by that name: ignore_lines refuses a non-file
                rules = rules.with_file(folder, ignore_lines(real))
        except (OSError, UnicodeDecodeError) as exc:
            raise NeedFullScan(f"ignore file unreadable: {reason_of(exc)}") from None  # the full walk reports it
        name = parts[depth]
        folder = join_rel(folder, name)
        real = os.path.join(real, name)
        if builtin_ignored(name, is_dir=True) or rules.ignored(folder, is_dir=True):
            return rules, frozenset(ancestors), True
    return rules, frozenset(ancestors), False
