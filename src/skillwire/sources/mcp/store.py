"""`GatewayCache`: what a gateway verified from its upstreams, on disk: content by digest, and each upstream's state.

Layout under the root (default `$XDG_CACHE_HOME/skillwire/gateway`, or `--gateway-cache DIR`):

    ORIGIN-IS-MCP.txt            says that everything here arrived over MCP and is untrusted input
    content/ab/cdef...           one file per sha256 digest ("ab" its first two hex digits, then the other 62)
    upstreams/<key>.json         one upstream's last verified state: its entries as it listed them, and when

Content is written only after its bytes hashed to the digest they are filed under (`put` hashes them itself), each
file whole or not at all (a private temp file, then renamed over), and re-hashed on every `read`: a file that no
longer matches is deleted and reads as missing, so a tampered cache costs a refetch and never serves a wrong byte.
Every path below the root is walked one component at a time without following a link (`cache/disk.py`).

Eviction, so the cache stays bounded:

1. After every successful refresh of an upstream, content referenced by no upstream's state in this directory (nor
   by a refresh still running in this process) is deleted.
2. A state no gateway has used for `state_max_age_s` (30 days; each scan touches the states it serves) is deleted
   first, so an upstream removed from every gateway's command line frees its content.
3. `max_bytes` (default 2 GiB) caps the content: a file that would pass it even after step 1 is not written, and the
   skill needing it is refused (`gateway-cache-full`). Content a kept state references is never deleted to make
   room: that is what an upstream that is down is served from.

Temp files left by a crash are deleted by the same pass once an hour old. Two gateways may share a directory (each
write is atomic, each read re-hashed); one may then delete what the other just wrote and has not yet recorded,
which costs the other a refetch.

    cache = GatewayCache(root)
    cache.put(digest, data)                   # False when the byte cap leaves no room
    cache.read(digest, size)                  # verified bytes, or None
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from skillwire.cache.disk import (
    DIR_FLAGS,
    clear,
    enter_dir,
    is_regular,
    make_dirs,
    open_root,
    read_regular,
    remove_file,
    try_open_dir,
    write_atomic,
)
from skillwire.cache.store import default_root as host_cache_root
from skillwire.core.digest import is_digest, sha256_digest

__all__ = ["DEFAULT_MAX_BYTES", "STATE_MAX_AGE_S", "GatewayCache", "default_root"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 2 * 1024 * 1024 * 1024
"""The content a gateway cache holds at most, by default (2 GiB)."""
STATE_MAX_AGE_S = 30 * 24 * 3600.0
"""A state no gateway has used for this long is deleted at the next eviction (and its content with it)."""
_TEMP_MAX_AGE_S = 3600.0
_CONTENT = "content"
_STATES = "upstreams"
_TEMP_PREFIX = ".tmp-"
MARKER_NAME = "ORIGIN-IS-MCP.txt"
MARKER_TEXT = """\
Everything below this folder arrived over MCP from the upstream servers of a skillwire gateway
(`skillwire serve NAME=mcp:...`). It is UNTRUSTED server-provided input, kept by digest:

  content/ab/cdef...     one file per sha256 digest, re-hashed on every read
  upstreams/KEY.json     each upstream's last verified state

Nothing here is a filesystem skill; deleting this folder only makes the gateway fetch again.
"""


def default_root() -> Path:
    """`$XDG_CACHE_HOME/skillwire/gateway`, or `~/.cache/skillwire/gateway` (beside the host's cache)."""
    return host_cache_root().parent / "gateway"


class GatewayCache:
    """Verified upstream content by digest, and each upstream's last verified state (see the module docstring).

    Safe to use from several threads: a gateway's reads run on the server's threads while a refresh writes.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        state_max_age_s: float = STATE_MAX_AGE_S,
    ) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, not {max_bytes}")
        chosen = default_root() if root is None else Path(root).expanduser()
        self.root: Path = chosen.resolve()  # the user's folders above it may be links; below it, nothing is followed
        self.max_bytes = max_bytes
        self.state_max_age_s = state_max_age_s
        self._lock = threading.Lock()
        self._making = threading.Lock()
        self._used: int | None = None  # bytes of content on disk, counted on first need
        self._pinned: dict[str, int] = {}  # digests a running refresh needs: never evicted (a count per refresh)

    @classmethod
    def shared(cls, root: str | os.PathLike[str] | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES) -> GatewayCache:
        """The one cache of this process at `root` (made on first use), so upstreams sharing a directory share its
        count and its cap; `max_bytes` applies when it is made."""
        chosen = (default_root() if root is None else Path(root).expanduser()).resolve()
        with _SHARED_LOCK:
            found = _SHARED.get(chosen)
            if found is None:
                found = _SHARED[chosen] = cls(chosen, max_bytes=max_bytes)
            return found

    # -- content ---------------------------------------------------------------------------------------------------

    def has(self, digest: str, size: int) -> bool:
        """Whether a regular file of `size` bytes is kept for `digest` (not hashed: `read` does that)."""
        with self._content_dir(digest, make=False) as folder:
            if folder is None:
                return False
            try:
                info = os.stat(_leaf(digest), dir_fd=folder, follow_symlinks=False)
            except OSError:
                return False
            return stat.S_ISREG(info.st_mode) and info.st_size == size

    def read(self, digest: str, size: int) -> bytes | None:
        """The `size` bytes kept for `digest`, re-hashed now; None when missing or not those bytes (then deleted)."""
        if not is_digest(digest):
            return None
        with self._content_dir(digest, make=False) as folder:
            if folder is None:
                return None
            data = read_regular(folder, _leaf(digest), limit=size)
            if data is not None and len(data) == size and sha256_digest(data) == digest:
                return data
            if data is not None or not self._absent(folder, digest):
                logger.warning("gateway cache %s: %s is not what was kept; deleted", self.root, digest)
                self._forget(folder, digest)
            return None

    def put(self, digest: str, data: bytes) -> bool:
        """Keep `data` as `digest`; False (nothing written) when the byte cap leaves no room even after eviction.

        ValueError when `data` does not hash to `digest`: only verified bytes are kept.
        """
        if sha256_digest(data) != digest:
            raise ValueError(f"the bytes given for {digest} hash to {sha256_digest(data)}; not kept")
        if self.has(digest, len(data)):
            return True
        if self._over_cap(len(data)):
            self.evict()
            if self._over_cap(len(data)):
                return False
        with self._content_dir(digest, make=True) as folder:
            assert folder is not None
            write_atomic(folder, _leaf(digest), data)
        with self._lock:
            if self._used is not None:
                self._used += len(data)
        return True

    @property
    def used_bytes(self) -> int:
        """Bytes of content on disk (counted once, then kept up to date by this process's writes and evictions)."""
        with self._lock:
            if self._used is None:
                self._used = sum(f[3] for f in self._content_files() if not f[2].startswith(_TEMP_PREFIX))
            return self._used

    @contextlib.contextmanager
    def pinned(self, digests: Iterable[str]) -> Iterator[None]:
        """Within the block, eviction keeps `digests` (what a refresh is fetching, not yet in any state)."""
        held = set(digests)
        with self._lock:
            for d in held:
                self._pinned[d] = self._pinned.get(d, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                for d in held:
                    left = self._pinned[d] - 1
                    if left:
                        self._pinned[d] = left
                    else:
                        del self._pinned[d]

    # -- states ----------------------------------------------------------------------------------------------------

    def load_state(self, key: str) -> dict[str, Any] | None:
        """The state kept for the upstream `key` as written by `save_state`, or None (missing or unreadable)."""
        states = self._walk((_STATES,), make=False)
        if states is None:
            return None
        try:
            raw = _read_small(states, _state_name(key))
        finally:
            os.close(states)
        if raw is None:
            return None
        try:
            state = json.loads(raw)
        except ValueError:
            logger.warning("gateway cache %s: the state of upstream %s is not JSON; ignored", self.root, key)
            return None
        return state if isinstance(state, dict) else None

    def save_state(self, key: str, state: dict[str, Any]) -> None:
        """Keep `state` for the upstream `key` (written whole or not at all)."""
        data = json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        with self._states_dir() as states:
            write_atomic(states, _state_name(key), data)

    def touch_state(self, key: str) -> None:
        """Record that a gateway still serves the upstream `key` (eviction deletes states unused for long)."""
        with contextlib.suppress(OSError), self._states_dir() as states:
            os.utime(_state_name(key), dir_fd=states, follow_symlinks=False)

    # -- eviction --------------------------------------------------------------------------------------------------

    def evict(self) -> int:
        """Delete states unused for `state_max_age_s`, then content no state references (see the module
        docstring); the bytes freed."""
        now = time.time()
        keep = self._referenced(now)
        with self._lock:
            keep.update(self._pinned)
        freed = 0
        for folder, shard, name, size in self._content_files():
            if name.startswith(_TEMP_PREFIX):
                with contextlib.suppress(OSError):
                    if now - os.stat(name, dir_fd=folder, follow_symlinks=False).st_mtime > _TEMP_MAX_AGE_S:
                        remove_file(folder, name)
                continue  # a write in progress (or left by a crash): never counted
            digest = f"sha256:{shard}{name}"
            if digest not in keep:  # a name that is no digest is never kept either
                remove_file(folder, name)
                freed += size
        with self._lock:
            if self._used is not None:
                self._used = max(0, self._used - freed)
        if freed:
            logger.info("gateway cache %s: %d bytes no upstream's state references deleted", self.root, freed)
        return freed

    def _referenced(self, now: float) -> set[str]:
        """Every digest a kept state lists; states unused for too long, or unreadable, are deleted on the way."""
        keep: set[str] = set()
        states = self._walk((_STATES,), make=False)
        if states is None:
            return keep
        try:
            for entry in os.scandir(states):
                if not entry.name.endswith(".json") or not entry.is_file(follow_symlinks=False):
                    if entry.name.startswith(_TEMP_PREFIX) and _older(entry, now, _TEMP_MAX_AGE_S):
                        remove_file(states, entry.name)
                    continue
                if _older(entry, now, self.state_max_age_s):
                    logger.info("gateway cache %s: state %s unused for long; deleted", self.root, entry.name)
                    remove_file(states, entry.name)
                    continue
                digests = _state_digests(_read_small(states, entry.name))
                if digests is None:
                    logger.warning("gateway cache %s: %s is not a state; deleted", self.root, entry.name)
                    remove_file(states, entry.name)
                    continue
                keep.update(digests)
        finally:
            os.close(states)
        return keep

    # -- plumbing --------------------------------------------------------------------------------------------------

    def _over_cap(self, size: int) -> bool:
        return self.used_bytes + size > self.max_bytes

    def _absent(self, folder: int, digest: str) -> bool:
        try:
            os.stat(_leaf(digest), dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return False

    def _forget(self, folder: int, digest: str) -> None:
        """Delete what is kept for `digest` (a planted folder too) and take it off the count."""
        try:
            size = os.stat(_leaf(digest), dir_fd=folder, follow_symlinks=False).st_size
        except OSError:
            size = 0
        with contextlib.suppress(OSError):
            clear(folder, _leaf(digest))
        with self._lock:
            if self._used is not None:
                self._used = max(0, self._used - size)

    def _content_files(self) -> Iterator[tuple[int, str, str, int]]:
        """(shard folder, shard, name, size) of every regular file under content/ (temp files included)."""
        content = self._walk((_CONTENT,), make=False)
        if content is None:
            return
        try:
            shards = sorted(e.name for e in os.scandir(content) if e.is_dir(follow_symlinks=False))
            for shard in shards:
                inner = try_open_dir(content, shard)
                if inner is None:
                    continue
                try:
                    for entry in list(os.scandir(inner)):
                        try:
                            info = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue  # gone meanwhile
                        if stat.S_ISREG(info.st_mode):
                            yield inner, shard, entry.name, info.st_size
                finally:
                    os.close(inner)
        finally:
            os.close(content)

    @contextlib.contextmanager
    def _content_dir(self, digest: str, *, make: bool) -> Iterator[int | None]:
        """The shard folder of `digest` (made when `make`; else None when missing), closed after the block."""
        if not is_digest(digest):
            raise ValueError(f"not a sha256 digest: {digest[:80]!r}")
        folder = self._walk((_CONTENT, digest[7:9]), make=make)
        try:
            yield folder
        finally:
            if folder is not None:
                os.close(folder)

    def _walk(self, names: tuple[str, ...], *, make: bool) -> int | None:
        """The folder `names` below the root, opened one step at a time without following a link: made when
        `make` (with the root and its marker), else None when a step is missing."""
        if make:
            with self._making:  # `enter_dir` replaces what is not a folder: two threads must not make one at once
                return self._walk_making(names)
        folder = open_root(self.root)
        for name in names:
            if folder is None:
                return None
            try:
                child = try_open_dir(folder, name)
            finally:
                os.close(folder)
            folder = child
        return folder

    def _walk_making(self, names: tuple[str, ...]) -> int:
        folder = self._ensure_root()
        for name in names:
            try:
                child = _enter(folder, name)
            finally:
                os.close(folder)
            folder = child
        return folder

    @contextlib.contextmanager
    def _states_dir(self) -> Iterator[int]:
        states = self._walk((_STATES,), make=True)
        assert states is not None
        try:
            yield states
        finally:
            os.close(states)

    def _ensure_root(self) -> int:
        """The root (made 0o700 with its marker if needed), opened without following a link."""
        make_dirs(self.root)
        folder = os.open(self.root, DIR_FLAGS)
        try:
            if not is_regular(folder, MARKER_NAME):
                clear(folder, MARKER_NAME)
                write_atomic(folder, MARKER_NAME, MARKER_TEXT.encode("utf-8"))
        except BaseException:
            os.close(folder)
            raise
        return folder


def _enter(folder: int, name: str) -> int:
    """`enter_dir`, when another thread or process may be making the same folder at the same time."""
    try:
        return enter_dir(folder, name)
    except FileExistsError:  # made by the other one between our look and our mkdir: use it
        child = try_open_dir(folder, name)
        if child is None:
            raise
        return child


_SHARED: dict[Path, GatewayCache] = {}
_SHARED_LOCK = threading.Lock()


def _leaf(digest: str) -> str:
    """The file name of `digest` in its shard: the 62 hex digits after the first two."""
    return digest[9:]


def _state_name(key: str) -> str:
    if not key or not all(c in "0123456789abcdef" for c in key):
        raise ValueError(f"an upstream key is lowercase hex, not {key!r}")
    return f"{key}.json"


_MAX_STATE_BYTES = 512 * 1024 * 1024  # a state of 200,000 entries is far smaller (a listing may take as much)


def _read_small(folder: int, name: str) -> bytes | None:
    """The regular file `name` in `folder` (never a link or a FIFO), or None."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_STATE_BYTES:
            return None
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(info.st_size + 1)  # what fstat saw, and one byte to tell a file that grew meanwhile
    finally:
        os.close(fd)


def _state_digests(raw: bytes | None) -> set[str] | None:
    """Every digest a state lists, or None when it is not a state."""
    if raw is None:
        return None
    try:
        state = json.loads(raw)
    except ValueError:
        return None
    skills = state.get("skills") if isinstance(state, dict) else None
    if not isinstance(skills, list):
        return None
    pending = state.get("pending")
    if isinstance(pending, list):  # versions a lock holds back: their content is kept for an accept
        skills = [*skills, *pending]
    found: set[str] = set()
    for kept in skills:
        entry = kept.get("entry") if isinstance(kept, dict) else None
        resources = entry.get("resources") if isinstance(entry, dict) else None
        if isinstance(resources, list):
            found.update(r["digest"] for r in resources if isinstance(r, dict) and is_digest(r.get("digest")))
    return found


def _older(entry: os.DirEntry[str], now: float, age: float) -> bool:
    try:
        return now - entry.stat(follow_symlinks=False).st_mtime > age
    except OSError:
        return False
