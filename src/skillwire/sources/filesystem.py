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
import re
import stat
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillwire.catalog import Catalog, Refusal
from skillwire.errors import FrontmatterError, SkillError
from skillwire.frontmatter import parse_skill_md
from skillwire.manifest import Skill, SkillFile, check_limits
from skillwire.mime import DEFAULT_MIME_TYPE, mime_type_for
from skillwire.names import description_problem, is_reg_name, name_problem
from skillwire.sources.digest_cache import CacheEntry, DigestCache, FileKey, file_key
from skillwire.sources.ignore import IGNORE_FILE, IgnoreRules, builtin_ignored
from skillwire.uri import SKILL_FILE, directory_uri, join_segments

# A relative path whose segments need no percent-encoding (the common case).
_PLAIN_PATH = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/]*")

logger = logging.getLogger(__name__)

# Measured on 2 cores with 10,000 skills of small files: per-file Python work holds the GIL, and
# threads only added contention (0.70 s single vs 0.82-1.29 s with two). Raise it for catalogs of large files.
_HASH_WORKERS = 1


@dataclass(slots=True)
class _FileRecord:
    rel: str  # root-relative, "/"-separated
    location: str  # resolved real path
    size: int  # -1 until stat'ed: a scan stats a file where it reads it, in a hashing thread
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

    def __init__(
        self, roots: Iterable[str | os.PathLike[str]], *, digest_cache: str | os.PathLike[str] | None = None
    ) -> None:
        self.roots: tuple[Path, ...] = tuple(Path(r) for r in roots)
        if not self.roots:
            raise ValueError("FolderSource needs at least one root folder")
        self._watches: dict[str, _SkillWatch] = {}
        # Optional: digests remembered across restarts (see sources.digest_cache); loaded on first scan.
        self.digest_cache_path: Path | None = Path(digest_cache) if digest_cache is not None else None
        self._cache: DigestCache | None = None

    def scan(self, generation: int = 0) -> Catalog:
        """Walk every root and build a fresh catalog (nothing is shared with earlier scans)."""
        skills: list[Skill] = []
        locations: dict[str, str] = {}
        refusals: list[Refusal] = []
        seen: dict[str, str] = {}
        watches: dict[str, _SkillWatch] = {}
        cache = self._cache
        if cache is None and self.digest_cache_path is not None:
            cache = self._cache = DigestCache.load(self.digest_cache_path)
        for root in self.roots:
            for result in self._scan_root(root, cache):
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
        if cache is not None:
            cache.save()
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
        walk.files.sort(key=_rel_of)
        return _signature(walk, watch.rel_dir) != watch.signature

    # -- walking ---------------------------------------------------------------------------------------------------

    def _scan_root(
        self, root: Path, cache: DigestCache | None
    ) -> Iterable[tuple[Skill, dict[str, str], str, _SkillWatch] | Refusal]:
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
        _walk_dir(walk, real_root, "", IgnoreRules.empty(), frozenset(), stat_files=False)
        yield from _bad_paths_outside_skills(walk)
        # A root that is itself a skill is published under its own folder name.
        base: tuple[str, ...] = (os.path.basename(real_root),) if "" in walk.skill_dirs else ()
        walk.files.sort(key=_rel_of)
        rels = [f.rel for f in walk.files]
        skill_dirs = set(walk.skill_dirs)
        memo: dict[str, bool] = {}
        hashed = _hash_all([f for f in walk.files if _in_some_skill(f.rel, skill_dirs, memo)], cache)
        for skill_dir in walk.skill_dirs:
            display = os.path.join(display_root, skill_dir) if skill_dir else display_root
            skill_path = base + tuple(p for p in skill_dir.split("/") if p)
            try:
                skill, locs = _build_skill(walk, rels, skill_dir, skill_path, hashed, cache=cache)
            except SkillError as err:
                rel = err.path or SKILL_FILE
                yield Refusal(os.path.join(display, rel), err.rule, err.message, err.line)
                continue
            real_dir, rules = walk.skill_rules[skill_dir]
            signature = _signature(walk, skill_dir, rels)
            yield skill, locs, display, _SkillWatch(real_root, real_dir, skill_dir, rules, signature)


def _walk_dir(
    walk: _Walk,
    real_dir: str,
    rel_dir: str,
    rules: IgnoreRules,
    ancestors: frozenset[tuple[int, int]],
    *,
    stat_files: bool = True,
) -> None:
    """Record what is under `real_dir`. With `stat_files` False, regular files (known from the
    directory entry's type) are left un-stat'ed (size -1): the scan stats each where it reads it."""
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
            if not stat_files and not is_link and entry.is_file(follow_symlinks=False):
                if not builtin_ignored(entry.name, is_dir=False) and not (
                    rules.specs and rules.ignored(rel, is_dir=False)
                ):
                    walk.files.append(_FileRecord(rel, entry.path, -1, _NO_STAMP))
                    if entry.name == SKILL_FILE:
                        walk.skill_dirs.append(rel_dir)
                        walk.skill_rules[rel_dir] = (real_dir, rules)
                continue
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
            _walk_dir(walk, location, rel, rules, ancestors, stat_files=stat_files)
        elif stat.S_ISREG(st.st_mode):
            walk.files.append(_FileRecord(rel, location, st.st_size, (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)))
            if entry.name == SKILL_FILE:
                walk.skill_dirs.append(rel_dir)
                walk.skill_rules[rel_dir] = (real_dir, rules)
        else:
            walk.bad_paths.append(Refusal(rel, "not-a-file", "not a regular file (device, socket or pipe)"))


def _signature(walk: _Walk, skill_dir: str, rels: Sequence[str] | None = None) -> tuple[object, ...]:
    """What a walk saw of one skill folder, without reading content: files with stamps, and bad paths."""
    prefix = skill_dir + "/" if skill_dir else ""
    files = tuple((f.rel, f.size, f.stamp) for f in _members(walk.files, prefix, rels))
    bad = tuple(sorted((b.path, b.rule) for b in walk.bad_paths if _under(b.path, skill_dir)))
    return files, bad


def _bad_paths_outside_skills(walk: _Walk) -> list[Refusal]:
    """Problems found while walking that lie in no skill: reported, but they refuse nothing."""
    return [
        Refusal(bad.path, bad.rule, bad.message, skill=False)
        for bad in walk.bad_paths
        if not any(_under(bad.path, d) for d in walk.skill_dirs)
    ]


_NO_STAMP = (0, 0, 0)


@dataclass(frozen=True, slots=True)
class _Hashed:
    size: int
    stamp: tuple[int, int, int]
    key: FileKey
    digest: str
    mime_type: str
    skill_md: bytes | None  # the bytes of a SKILL.md, kept to parse its frontmatter
    frontmatter: tuple[dict[str, Any], int] | None  # a SKILL.md's parsed frontmatter, from the digest cache


_CHUNK = 1 << 20
_SNIFF = 8192
_O_READ = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _hash_file(rec: _FileRecord, cache: DigestCache | None) -> _Hashed | OSError:
    """Stat, read and SHA-256 one file (or take its digest from the cache when its key matches).

    The stat comes before the read: a write after the stat changes the ctime, so an entry
    cached from a racing read is keyed on a stamp the file no longer has.
    """
    rel = rec.rel
    is_skill_md = rel == SKILL_FILE or rel.endswith("/" + SKILL_FILE)
    mime = mime_type_for(rel)
    try:
        if cache is not None:
            st = os.stat(rec.location)
            key = file_key(st)
            hit = cache.get(key)
            if hit is not None and (hit.frontmatter is not None or not is_skill_md):
                cache.put(key, hit)
                if mime == DEFAULT_MIME_TYPE:
                    mime = hit.mime_type  # sniffed from the content, which the key vouches for
                stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
                return _Hashed(st.st_size, stamp, key, hit.digest, mime, None, hit.frontmatter)
        fd = os.open(rec.location, _O_READ)
        try:
            st = os.fstat(fd)
            size = st.st_size
            if size < _CHUNK:
                data = os.read(fd, size + 1)
                if len(data) > size:  # grew since the stat: read on to the end
                    data = b"".join([data, *iter(lambda: os.read(fd, _CHUNK), b"")])
                if mime == DEFAULT_MIME_TYPE and _looks_like_text(data[:_SNIFF]):
                    mime = "text/plain"
                digest = "sha256:" + hashlib.sha256(data).hexdigest()
                kept = data if is_skill_md else None
            else:
                h = hashlib.sha256()
                chunks: list[bytes] = []
                first = True
                while chunk := os.read(fd, _CHUNK):
                    if first and mime == DEFAULT_MIME_TYPE and _looks_like_text(chunk[:_SNIFF]):
                        mime = "text/plain"
                    first = False
                    h.update(chunk)
                    if is_skill_md:
                        chunks.append(chunk)
                digest = "sha256:" + h.hexdigest()
                kept = b"".join(chunks) if is_skill_md else None
        finally:
            os.close(fd)
    except OSError as exc:
        return exc
    key = file_key(st)
    if cache is not None and not is_skill_md:
        cache.put(key, CacheEntry(digest, mime))  # a SKILL.md is put once its frontmatter parses
    return _Hashed(size, (st.st_mtime_ns, st.st_ctime_ns, st.st_ino), key, digest, mime, kept, None)


def _hash_all(files: Sequence[_FileRecord], cache: DigestCache | None = None) -> dict[str, _Hashed | OSError]:
    """Digest of every file, keyed by root-relative path; fills in each record's size and stamp.

    Threads, because stat, open, read and hashlib on buffers over 2 KiB release the GIL:
    both cores work. Files go out in one batch per worker, since a future per small
    file costs more than hashing it.
    """
    workers = min(_HASH_WORKERS, max(1, len(files) // 64))
    if workers == 1:
        results = [_hash_file(f, cache) for f in files]
        ordered: Sequence[_FileRecord] = files
    else:
        batches = [files[i::workers] for i in range(workers)]
        results = []
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for part in pool.map(_hash_batch, batches, [cache] * workers):
                results.extend(part)
        ordered = [f for batch in batches for f in batch]
    out: dict[str, _Hashed | OSError] = {}
    for rec, result in zip(ordered, results, strict=True):
        out[rec.rel] = result
        if rec.size < 0:
            if isinstance(result, _Hashed):
                rec.size = result.size
                rec.stamp = result.stamp
            else:
                rec.size = 0
    return out


def _hash_batch(files: Sequence[_FileRecord], cache: DigestCache | None) -> list[_Hashed | OSError]:
    return [_hash_file(f, cache) for f in files]


def _build_skill(
    walk: _Walk,
    rels: Sequence[str],
    skill_dir: str,
    skill_path: tuple[str, ...],
    hashed: dict[str, _Hashed | OSError],
    *,
    cache: DigestCache | None = None,
) -> tuple[Skill, dict[str, str]]:
    """Validate one skill folder and build its entry; raise SkillError naming the broken rule."""
    prefix = skill_dir + "/" if skill_dir else ""
    for bad in walk.bad_paths:
        if _under(bad.path, skill_dir):
            raise SkillError(bad.message, rule=bad.rule, path=bad.path[len(prefix) :])
    members = _members(walk.files, prefix, rels)
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
    if skill_md.frontmatter is not None:
        fm, line = skill_md.frontmatter
    else:
        fm, line = _parse_frontmatter(skill_md.skill_md)
        if cache is not None:
            cache.put(skill_md.key, CacheEntry(skill_md.digest, skill_md.mime_type, (fm, line)))
    _check_frontmatter(fm, line, skill_path)
    files: list[SkillFile] = []
    locations: dict[str, str] = {}
    base = directory_uri(skill_path) + "/"
    cut = len(prefix)
    for rec in members:
        result = hashed[rec.rel]
        rel = rec.rel[cut:]
        if isinstance(result, OSError):
            raise SkillError(f"cannot be read: {result.strerror or result}", rule="unreadable", path=rel)
        uri = base + (rel if _PLAIN_PATH.fullmatch(rel) else join_segments(rel.split("/")))
        files.append(SkillFile(rel, uri, result.digest, rec.size, result.mime_type))
        locations[uri] = rec.location
    files.sort(key=_manifest_order)
    return Skill(skill_path, fm, tuple(files)), locations


def _manifest_order(f: SkillFile) -> tuple[bool, str]:
    return (f.rel_path != SKILL_FILE, f.rel_path)


def _parse_frontmatter(raw: bytes | None) -> tuple[dict[str, Any], int]:
    assert raw is not None
    try:
        parsed = parse_skill_md(raw, path=SKILL_FILE)
    except FrontmatterError as err:
        if err.rule == "frontmatter-missing" and _looks_like_link_text(raw):
            target = raw.decode("utf-8", "replace").strip()
            raise FrontmatterError(
                f"file holds only the path {target!r}: a symbolic link checked out as a text file? "
                "Restore the link (git config core.symlinks true) or copy the real SKILL.md",
                rule=err.rule,
                path=err.path,
                line=err.line,
            ) from err
        raise
    return parsed.frontmatter, parsed.frontmatter_start_line


def _check_frontmatter(fm: dict[str, Any], line: int, skill_path: tuple[str, ...]) -> None:
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


def _members(files: Sequence[_FileRecord], prefix: str, rels: Sequence[str] | None = None) -> Sequence[_FileRecord]:
    """The files under `prefix` ("" or "a/b/"), from `files` sorted by path: one contiguous run.

    `rels`, if given, is `[f.rel for f in files]` (bisecting it is cheaper than a key function)."""
    if not prefix:
        return files
    if rels is None:
        rels = [f.rel for f in files]
    lo = bisect_left(rels, prefix)
    hi = bisect_left(rels, prefix[:-1] + "0", lo)  # "0" sorts right after "/"
    return files[lo:hi]


def _rel_of(f: _FileRecord) -> str:
    return f.rel


def _in_some_skill(rel: str, skill_dirs: set[str], memo: dict[str, bool] | None = None) -> bool:
    """True if some folder above `rel` is a skill (`memo` caches the answer per folder)."""
    if "" in skill_dirs:
        return True
    folder = rel.rpartition("/")[0]
    if memo is None:
        memo = {}
    return _folder_in_skill(folder, skill_dirs, memo)


def _folder_in_skill(folder: str, skill_dirs: set[str], memo: dict[str, bool]) -> bool:
    if not folder:
        return False
    found = memo.get(folder)
    if found is None:
        found = folder in skill_dirs or _folder_in_skill(folder.rpartition("/")[0], skill_dirs, memo)
        memo[folder] = found
    return found


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
