"""Skills from folders: walk roots, find every SKILL.md, hash every file, and build a Catalog.

A skill is a folder holding a `SKILL.md` file; skills may nest (the enclosing
skill's manifest lists the nested skill's files too) and may sit in hidden
folders. The skill path is the folder's path relative to the root; when a root
is itself a skill, its own folder name is the path. Symbolic links are followed
only when their target, fully resolved, stays inside the root; a link that
leaves the root or dangles is refused, and so is any skill that contains one
(a manifest must be complete, so a skill missing a file is not served). One
bad skill never stops the others: it is left out with a `Refusal`.

    source = FolderSource(["skills/"])
    catalog = source.scan()
    catalog.refusals     # what was left out, and why
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from skillwire.catalog import Catalog, Refusal
from skillwire.errors import FrontmatterError, SkillError
from skillwire.frontmatter import parse_skill_md
from skillwire.manifest import Skill, SkillFile, check_limits
from skillwire.mime import DEFAULT_MIME_TYPE, mime_type_for
from skillwire.names import description_problem, is_reg_name, name_problem
from skillwire.sources.ignore import IGNORE_FILE, IgnoreRules, builtin_ignored
from skillwire.uri import SKILL_FILE, file_uri

logger = logging.getLogger(__name__)

_HASH_WORKERS = max(2, min(8, os.cpu_count() or 2))


@dataclass(frozen=True, slots=True)
class _FileRecord:
    rel: str  # root-relative, "/"-separated
    location: str  # resolved real path
    size: int
    stamp: tuple[int, int, int]  # (mtime_ns, ctime_ns, inode): changes whenever the content may have


@dataclass(slots=True)
class _Walk:
    """What one walk of one root found."""

    root: str
    files: list[_FileRecord] = field(default_factory=list)
    bad_paths: list[Refusal] = field(default_factory=list)
    skill_dirs: list[str] = field(default_factory=list)
    skill_rules: dict[str, tuple[str, IgnoreRules]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _SkillWatch:
    """How to re-walk one served skill's folder, and what the walk found when it was indexed."""

    root: str
    real_dir: str
    rel_dir: str
    rules: IgnoreRules
    signature: tuple[object, ...]


class FolderSource:
    """A source of skills: one or more root folders on the local filesystem."""

    def __init__(self, roots: Iterable[str | os.PathLike[str]]) -> None:
        self.roots: tuple[Path, ...] = tuple(Path(r) for r in roots)
        if not self.roots:
            raise ValueError("FolderSource needs at least one root folder")
        self._watches: dict[str, _SkillWatch] = {}

    def scan(self, generation: int = 0) -> Catalog:
        """Walk every root and build a fresh catalog (nothing is shared with earlier scans)."""
        skills: list[Skill] = []
        locations: dict[str, str] = {}
        refusals: list[Refusal] = []
        seen: dict[str, str] = {}
        watches: dict[str, _SkillWatch] = {}
        for root in self.roots:
            for result in self._scan_root(root):
                if isinstance(result, Refusal):
                    refusals.append(result)
                    continue
                skill, skill_locations, display, watch = result
                if skill.uri in seen:
                    refusals.append(
                        Refusal(display, "duplicate-uri", f"{skill.uri} is already served from {seen[skill.uri]}")
                    )
                    continue
                seen[skill.uri] = display
                skills.append(skill)
                locations.update(skill_locations)
                watches[skill.uri] = watch
        for refusal in refusals:
            logger.info("not served: %s", refusal)
        refused = sum(r.skill for r in refusals)
        if refused:
            logger.warning("%d skill(s) not served; see Catalog.refusals (or -v) for each reason", refused)
        self._watches = watches
        return Catalog(skills, locations, refusals, generation=generation)

    def changed(self, skill_uri: str) -> bool:
        """True if the skill's folder no longer matches what was indexed (a file added, removed or touched).

        Walks only that skill's folder and compares names, sizes, times and inodes;
        it reads no file content. A skill this source did not index is unchanged.
        """
        watch = self._watches.get(skill_uri)
        if watch is None:
            return False
        walk = _Walk(root=watch.root)
        _walk_dir(walk, watch.real_dir, watch.rel_dir, watch.rules, frozenset())
        walk.files.sort(key=lambda f: f.rel)
        return _signature(walk, watch.rel_dir) != watch.signature

    # -- walking ---------------------------------------------------------------------------------------------------

    def _scan_root(self, root: Path) -> Iterable[tuple[Skill, dict[str, str], str, _SkillWatch] | Refusal]:
        display_root = str(root)
        try:
            real_root = os.path.realpath(root, strict=True)
        except OSError as exc:
            yield Refusal(display_root, "root-missing", f"root folder cannot be opened: {exc.strerror or exc}")
            return
        if not os.path.isdir(real_root):
            yield Refusal(display_root, "root-not-folder", "root is not a folder")
            return
        walk = _Walk(root=real_root)
        _walk_dir(walk, real_root, "", IgnoreRules.empty(), frozenset())
        yield from _bad_paths_outside_skills(walk)
        # A root that is itself a skill is published under its own folder name.
        base: tuple[str, ...] = (os.path.basename(real_root),) if "" in walk.skill_dirs else ()
        walk.files.sort(key=lambda f: f.rel)
        skill_dirs = set(walk.skill_dirs)
        hashed = _hash_all([f for f in walk.files if _in_some_skill(f.rel, skill_dirs)])
        for skill_dir in walk.skill_dirs:
            display = os.path.join(display_root, skill_dir) if skill_dir else display_root
            skill_path = base + tuple(p for p in skill_dir.split("/") if p)
            try:
                skill, locs = _build_skill(walk, skill_dir, skill_path, hashed)
            except SkillError as err:
                rel = err.path or SKILL_FILE
                yield Refusal(os.path.join(display, rel), err.rule, err.message, err.line)
                continue
            real_dir, rules = walk.skill_rules[skill_dir]
            yield skill, locs, display, _SkillWatch(real_root, real_dir, skill_dir, rules, _signature(walk, skill_dir))


def _walk_dir(
    walk: _Walk, real_dir: str, rel_dir: str, rules: IgnoreRules, ancestors: frozenset[tuple[int, int]]
) -> None:
    try:
        with os.scandir(real_dir) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        walk.bad_paths.append(Refusal(rel_dir or ".", "unreadable", f"folder cannot be read: {exc.strerror or exc}"))
        return
    if any(e.name == IGNORE_FILE for e in entries):
        try:
            lines = Path(real_dir, IGNORE_FILE).read_text(encoding="utf-8").splitlines()
            rules = rules.with_file(rel_dir, lines)
        except (OSError, UnicodeDecodeError) as exc:
            walk.bad_paths.append(Refusal(_join(rel_dir, IGNORE_FILE), "unreadable", f"ignore file unreadable: {exc}"))
    here = os.stat(real_dir)
    ancestors = ancestors | {(here.st_dev, here.st_ino)}
    for entry in entries:
        rel = _join(rel_dir, entry.name)
        try:
            is_link = entry.is_symlink()
            st = os.stat(entry.path) if is_link else entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            walk.bad_paths.append(Refusal(rel, "link-dangles", "symbolic link points to nothing"))
            continue
        except OSError as exc:
            walk.bad_paths.append(Refusal(rel, "unreadable", f"cannot be read: {exc.strerror or exc}"))
            continue
        is_dir = stat.S_ISDIR(st.st_mode)
        if builtin_ignored(entry.name, is_dir=is_dir) or rules.ignored(rel, is_dir=is_dir):
            continue
        location = entry.path
        if is_link:
            # Containment is decided on the fully resolved target, never on the link text:
            # a link that resolves outside the root would let a URI reach any file.
            location = os.path.realpath(entry.path)
            if not _inside(location, walk.root):
                walk.bad_paths.append(Refusal(rel, "link-escapes", "symbolic link leads outside the served root"))
                continue
        if is_dir:
            if (st.st_dev, st.st_ino) in ancestors:
                walk.bad_paths.append(Refusal(rel, "link-loop", "symbolic link loops back to a folder above it"))
                continue
            _walk_dir(walk, location, rel, rules, ancestors)
        elif stat.S_ISREG(st.st_mode):
            walk.files.append(_FileRecord(rel, location, st.st_size, (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)))
            if entry.name == SKILL_FILE:
                walk.skill_dirs.append(rel_dir)
                walk.skill_rules[rel_dir] = (real_dir, rules)
        else:
            walk.bad_paths.append(Refusal(rel, "not-a-file", "not a regular file (device, socket or pipe)"))


def _signature(walk: _Walk, skill_dir: str) -> tuple[object, ...]:
    """What a walk saw of one skill folder, without reading content: files with stamps, and bad paths."""
    prefix = skill_dir + "/" if skill_dir else ""
    files = tuple((f.rel, f.size, f.stamp) for f in _members(walk.files, prefix))
    bad = tuple(sorted((b.path, b.rule) for b in walk.bad_paths if _under(b.path, skill_dir)))
    return files, bad


def _bad_paths_outside_skills(walk: _Walk) -> list[Refusal]:
    """Problems found while walking that lie in no skill: reported, but they refuse nothing."""
    return [
        Refusal(bad.path, bad.rule, bad.message, skill=False)
        for bad in walk.bad_paths
        if not any(_under(bad.path, d) for d in walk.skill_dirs)
    ]


@dataclass(frozen=True, slots=True)
class _Hashed:
    digest: str
    mime_type: str
    skill_md: bytes | None  # the bytes of a SKILL.md, kept to parse its frontmatter


_CHUNK = 1 << 20
_SNIFF = 8192


def _hash_file(rec: _FileRecord) -> _Hashed | OSError:
    """Stream one file through SHA-256; sniff its first bytes to type files with no known extension."""
    is_skill_md = rec.rel.rsplit("/", 1)[-1] == SKILL_FILE
    mime = mime_type_for(rec.rel)
    h = hashlib.sha256()
    kept: list[bytes] = []
    try:
        with open(rec.location, "rb") as fh:
            first = True
            while chunk := fh.read(_CHUNK):
                if first and mime == DEFAULT_MIME_TYPE and _looks_like_text(chunk[:_SNIFF]):
                    mime = "text/plain"
                first = False
                h.update(chunk)
                if is_skill_md:
                    kept.append(chunk)
    except OSError as exc:
        return exc
    return _Hashed("sha256:" + h.hexdigest(), mime, b"".join(kept) if is_skill_md else None)


def _hash_all(files: Sequence[_FileRecord]) -> dict[str, _Hashed | OSError]:
    """Digest of every file, keyed by root-relative path.

    Threads, because reads and hashlib on large buffers release the GIL: both cores
    work. Files go out in one batch per worker, since a future per small file costs
    more than hashing it.
    """
    workers = min(_HASH_WORKERS, max(1, len(files) // 64))
    if workers == 1:
        return {f.rel: _hash_file(f) for f in files}
    batches = [files[i::workers] for i in range(workers)]
    out: dict[str, _Hashed | OSError] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for batch, results in zip(batches, pool.map(_hash_batch, batches), strict=True):
            out.update(zip((f.rel for f in batch), results, strict=True))
    return out


def _hash_batch(files: Sequence[_FileRecord]) -> list[_Hashed | OSError]:
    return [_hash_file(f) for f in files]


def _build_skill(
    walk: _Walk, skill_dir: str, skill_path: tuple[str, ...], hashed: dict[str, _Hashed | OSError]
) -> tuple[Skill, dict[str, str]]:
    """Validate one skill folder and build its entry; raise SkillError naming the broken rule."""
    prefix = skill_dir + "/" if skill_dir else ""
    for bad in walk.bad_paths:
        if _under(bad.path, skill_dir):
            raise SkillError(bad.message, rule=bad.rule, path=bad.path[len(prefix) :])
    members = _members(walk.files, prefix)
    check_limits((f.size for f in members), path=SKILL_FILE)
    first = skill_path[0]
    if not is_reg_name(first):
        raise SkillError(
            f"first path segment {first!r} cannot be a URI authority (RFC 3986 reg-name); rename the folder",
            rule="path-authority",
            path=SKILL_FILE,
        )
    skill_md = hashed[prefix + SKILL_FILE]
    if isinstance(skill_md, OSError):
        raise SkillError(f"cannot be read: {skill_md.strerror or skill_md}", rule="unreadable", path=SKILL_FILE)
    assert skill_md.skill_md is not None
    try:
        parsed = parse_skill_md(skill_md.skill_md, path=SKILL_FILE)
    except FrontmatterError as err:
        if err.rule == "frontmatter-missing" and _looks_like_link_text(skill_md.skill_md):
            target = skill_md.skill_md.decode("utf-8", "replace").strip()
            raise FrontmatterError(
                f"file holds only the path {target!r}: a symbolic link checked out as a text file? "
                "Restore the link (git config core.symlinks true) or copy the real SKILL.md",
                rule=err.rule,
                path=err.path,
                line=err.line,
            ) from err
        raise
    fm = parsed.frontmatter
    line = parsed.frontmatter_start_line
    if "name" not in fm:
        raise SkillError("frontmatter has no 'name' field", rule="name-missing", path=SKILL_FILE, line=line)
    problem = name_problem(fm["name"])
    if problem is not None:
        raise SkillError(problem, rule="name-format", path=SKILL_FILE, line=line)
    if fm["name"] != skill_path[-1]:
        raise SkillError(
            f"name {fm['name']!r} differs from its folder {skill_path[-1]!r}; they must be equal",
            rule="name-mismatch",
            path=SKILL_FILE,
            line=line,
        )
    if "description" not in fm:
        raise SkillError("frontmatter has no 'description' field", rule="description-missing", path=SKILL_FILE)
    problem = description_problem(fm["description"])
    if problem is not None:
        raise SkillError(problem, rule="description-format", path=SKILL_FILE, line=line)
    files: list[SkillFile] = []
    locations: dict[str, str] = {}
    for rec in members:
        result = hashed[rec.rel]
        rel = rec.rel[len(prefix) :]
        if isinstance(result, OSError):
            raise SkillError(f"cannot be read: {result.strerror or result}", rule="unreadable", path=rel)
        uri = file_uri(skill_path, rel)
        files.append(SkillFile(rel, uri, result.digest, rec.size, result.mime_type))
        locations[uri] = rec.location
    files.sort(key=lambda f: (f.rel_path != SKILL_FILE, f.rel_path))
    return Skill(skill_path, fm, tuple(files)), locations


def _members(files: Sequence[_FileRecord], prefix: str) -> Sequence[_FileRecord]:
    """The files under `prefix` ("" or "a/b/"), from `files` sorted by path: one contiguous run."""
    if not prefix:
        return files
    lo = bisect_left(files, prefix, key=lambda f: f.rel)
    hi = bisect_left(files, prefix[:-1] + "0", key=lambda f: f.rel)  # "0" sorts right after "/"
    return files[lo:hi]


def _in_some_skill(rel: str, skill_dirs: set[str]) -> bool:
    if "" in skill_dirs:
        return True
    parts = rel.split("/")[:-1]
    return any("/".join(parts[: i + 1]) in skill_dirs for i in range(len(parts)))


def _looks_like_link_text(data: bytes) -> bool:
    """True for a short one-line file that reads like a relative path (how git stores a symlink without them)."""
    text = data.strip()
    return 0 < len(text) < 1024 and b"\n" not in text and text.endswith(b"SKILL.md") and b"/" in text


def _looks_like_text(head: bytes) -> bool:
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the sniff boundary is still text.
        return exc.start >= len(head) - 3 and exc.reason == "unexpected end of data"
    return True


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _under(rel: str, folder: str) -> bool:
    return folder in ("", rel) or rel.startswith(folder + "/")


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name
