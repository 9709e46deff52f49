"""Pinning a gateway's upstream skills: a lock file of the versions served, and the changes held until accepted.

`skillwire serve vendor=mcp:URL --lock skills.lock` writes the lock from the first verified state of each upstream
it does not pin yet, then serves exactly the locked versions: an upstream change (a skill changed, added or removed)
is fetched and verified as always, but kept in `skills.lock.pending` instead of served, until `skillwire lock
accept` moves it into the lock. A locked version the upstream no longer has keeps being served from the gateway
cache, and the log says so. The lock is JSON, sorted and indented, one record per skill (diffable, reviewable):

    {"format": "skillwire-lock", "version": 1, "upstreams": ["https://tools.example/mcp"],
     "skills": [{"upstream": "https://tools.example/mcp", "uri": "skill://pdf/SKILL.md",
                 "files": [{"path": "SKILL.md", "digest": "sha256:...", "size": 812}, ...]}]}

A pending record is the same plus `"change": "changed" | "added" | "removed"` (a removed skill lists no files).
Both files are written whole and atomically; one process-wide lock serialises the gateway's upstreams writing them.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from skillwire.cache.disk import write_atomic
from skillwire.core.digest import is_digest
from skillwire.core.errors import SpecError
from skillwire.core.uri import normal_uri
from skillwire.sources.mcp.jsonfile import read_json_file

__all__ = ["LOCK_FORMAT", "LockFile", "LockedFile", "LockedSkill", "Pending", "PinnedState", "changes_between"]

LOCK_FORMAT = "skillwire-lock"
_VERSION = 1
_MAX_LOCK_BYTES = 64 << 20  # a lock of 100,000 skills is a few tens of MB; anything larger is not one

Change = Literal["changed", "added", "removed"]


@dataclass(frozen=True, slots=True, order=True)
class LockedFile:
    """One file of a locked skill: its path inside the skill, digest and size."""

    path: str
    digest: str
    size: int


@dataclass(frozen=True, slots=True)
class LockedSkill:
    """One skill as locked: which upstream (as shown), its upstream URI, and every file."""

    upstream: str
    uri: str
    files: tuple[LockedFile, ...]

    @property
    def key(self) -> tuple[str, str]:
        return self.upstream, normal_uri(self.uri)

    def to_json(self) -> dict[str, Any]:
        files = [{"path": f.path, "digest": f.digest, "size": f.size} for f in sorted(self.files)]
        return {"upstream": self.upstream, "uri": self.uri, "files": files}


@dataclass(frozen=True, slots=True)
class Pending:
    """An upstream change held back: the skill as upstream has it now (no files when removed), and what changed."""

    change: Change
    skill: LockedSkill

    def to_json(self) -> dict[str, Any]:
        return {"change": self.change, **self.skill.to_json()}


@dataclass(frozen=True, slots=True)
class PinnedState:
    """What a lock file holds: the upstreams it pins and their skills by key."""

    upstreams: frozenset[str]
    skills: Mapping[tuple[str, str], LockedSkill]

    def of(self, upstream: str) -> dict[str, LockedSkill]:
        """The locked skills of one upstream, by normal URI."""
        return {key[1]: s for key, s in self.skills.items() if key[0] == upstream}


def changes_between(locked: Mapping[str, LockedSkill], now: Mapping[str, LockedSkill]) -> list[Pending]:
    """What differs between an upstream's locked skills and its verified skills now (both by normal URI)."""
    found: list[Pending] = []
    for uri, skill in now.items():
        was = locked.get(uri)
        if was is None:
            found.append(Pending("added", skill))
        elif sorted(was.files) != sorted(skill.files):
            found.append(Pending("changed", skill))
    found += [Pending("removed", LockedSkill(s.upstream, s.uri, ())) for uri, s in locked.items() if uri not in now]
    return sorted(found, key=lambda p: p.skill.key)


class LockFile:
    """A lock file and its `.pending` companion (see the module docstring); one per path in a process (`shared`)."""

    _shared: ClassVar[dict[str, LockFile]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
        self.pending_path = self.path.with_name(self.path.name + ".pending")
        self.guard = threading.RLock()

    @classmethod
    def shared(cls, path: str | os.PathLike[str]) -> LockFile:
        """The one `LockFile` of `path` in this process, so that upstreams sharing it take turns writing."""
        key = os.path.abspath(os.path.expanduser(os.fspath(path)))
        with cls._shared_lock:
            found = cls._shared.get(key)
            if found is None:
                found = cls._shared[key] = cls(key)
            return found

    def stamp(self) -> tuple[int, int] | None:
        """The lock file's (mtime_ns, size), to notice an accept; None while there is none."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def load(self) -> PinnedState | None:
        """The lock, or None when there is no lock file yet; SpecError naming the file when it is not a lock."""
        raw = _read(self.path)
        if raw is None:
            return None
        upstreams = raw.get("upstreams")
        if not isinstance(upstreams, list) or not all(isinstance(u, str) for u in upstreams):
            raise SpecError(f"{self.path}: not a skillwire lock (no list of upstreams)")
        skills = {s.key: s for s in _skills(raw.get("skills"), self.path, pending=False)}
        return PinnedState(frozenset(upstreams), skills)

    def load_pending(self) -> list[Pending]:
        raw = _read(self.pending_path)
        if raw is None:
            return []
        return list(_skills(raw.get("skills"), self.pending_path, pending=True))

    def save(self, state: PinnedState) -> None:
        body = {
            "format": LOCK_FORMAT,
            "version": _VERSION,
            "upstreams": sorted(state.upstreams),
            "skills": [s.to_json() for _, s in sorted(state.skills.items())],
        }
        _write(self.path, body)

    def save_pending(self, pending: Iterable[Pending]) -> None:
        records = sorted(pending, key=lambda p: p.skill.key)
        if not records:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.pending_path)
            return
        _write(
            self.pending_path,
            {"format": LOCK_FORMAT + "-pending", "version": _VERSION, "skills": [p.to_json() for p in records]},
        )


def _read(path: Path) -> dict[str, Any] | None:
    raw = read_json_file(path, limit=_MAX_LOCK_BYTES, what="a lock", missing_ok=True)
    if raw is None:
        return None
    if not isinstance(raw, dict) or not str(raw.get("format", "")).startswith(LOCK_FORMAT):
        raise SpecError(f"{path}: not a skillwire lock")
    if raw.get("version") != _VERSION:
        raise SpecError(f"{path}: a lock of version {raw.get('version')!r}; this skillwire reads version {_VERSION}")
    return raw


def _skills(raw: object, path: Path, *, pending: bool) -> Iterable[Any]:
    if not isinstance(raw, list):
        raise SpecError(f"{path}: no list of skills")
    for i, item in enumerate(raw):
        where = f"{path}: skill {i + 1}"
        if not isinstance(item, dict):
            raise SpecError(f"{where} is not an object")
        upstream, uri, files = item.get("upstream"), item.get("uri"), item.get("files")
        if not isinstance(upstream, str) or not isinstance(uri, str) or not isinstance(files, list):
            raise SpecError(f"{where} needs an upstream, a uri and a list of files")
        locked = LockedSkill(upstream, uri, tuple(_file(f, where) for f in files))
        if not pending:
            yield locked
            continue
        change = item.get("change")
        if change not in ("changed", "added", "removed"):
            raise SpecError(f"{where}: change must be changed, added or removed")
        yield Pending(change, locked)


def _file(raw: object, where: str) -> LockedFile:
    if isinstance(raw, dict):
        path, digest, size = raw.get("path"), raw.get("digest"), raw.get("size")
        if isinstance(path, str) and is_digest(digest) and isinstance(size, int) and size >= 0:
            assert isinstance(digest, str)
            return LockedFile(path, digest, size)
    raise SpecError(f"{where}: a file needs a path, a sha256 digest and a size")


def _write(path: Path, body: dict[str, Any]) -> None:
    """Write `body` as indented JSON, whole or not at all (`cache.disk.write_atomic`), in the file's own folder."""
    text = json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    try:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as err:
        raise SpecError(f"{path}: its folder cannot be opened: {err.strerror}") from None
    try:
        write_atomic(folder, path.name, text.encode("utf-8"))
    finally:
        os.close(folder)
