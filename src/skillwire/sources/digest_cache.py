"""An optional on-disk digest cache, so a restart of an unchanged catalog need not re-read it.

The file holds the last catalog a `FolderSource` built for its roots: every served
skill with its frontmatter, and every file with its digest, size, MIME type and the
key of what the filesystem said about it when it was hashed, (device, inode, size,
mtime_ns, ctime_ns). A write to a file changes its ctime (the kernel sets it, and no
unprivileged call can set it back, unlike mtime), so an edit that keeps the size and
restores the mtime still misses. Files changed in the last moments before a scan
(`RACY_NS`) are never trusted by their key: timestamps are coarser than writes.

A restart publishes this catalog after reading only each skill's SKILL.md
(`FolderSource.restore`: frontmatter is parsed from those bytes, never taken from the
file), then checks the disk: a walk and a stat per file, reading only files whose key
changed, and every SKILL.md. The cache is only a hint, and may be forged: the server
re-hashes a file on every read (and re-hashes it whatever its key if the bytes disagree),
checks that the file it opens is at the recorded resolved path, so a stale or forged
entry can never serve bytes that disagree with the manifest, nor bytes from outside a root. A missing, corrupt
or unreadable cache file is ignored with a warning; so is a path that is not a regular
file (a FIFO is never waited on, and never replaced). It is written atomically (a
temporary file renamed over it, readable by its owner only) after each full scan.

    cache = DigestCache.load(Path("~/.cache/skillwire/skills.json").expanduser())
    body = cache.body()             # the bytes after the header (the folder source's own layout), or None
    cache.save_body(new_body, trusted_before_ns=[...])     # or snapshot() / save(): a body in JSON (git's)
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from skillwire.sources.safe_open import UnsafeFile, read_regular

logger = logging.getLogger(__name__)

FileKey = tuple[int, int, int, int, int]  # (st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)

_FORMAT = "skillwire-digest-cache"
# 6: the folder snapshot in columns (`folder_cache_layout`); 5: JSON rows. A cache of another version is ignored.
_VERSION = 6
MAX_CACHE_BYTES = 1 << 30  # far above a 100,000-skill catalog's cache (about 100 MB); a larger file is not read
RACY_NS = 2_000_000_000  # files changed less than this long before a scan are not trusted by their key
# What decoding a hostile cache may raise (RecursionError: JSON nested past the interpreter's limit): caught, the
# cache ignored, never a failed start.
UNUSABLE = (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, RecursionError)


def ignored(path: object, why: str) -> None:
    """Say that the digest cache at `path` (or part of it) is not used, and why: a warning, shown by default,
    since a restart then costs a full scan (and a cache nobody wrote may be an attack)."""
    logger.warning("digest cache %s ignored: %s", path, why)


def file_key(st: os.stat_result) -> FileKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class DigestCache:
    """One cache file: the bytes of its snapshot, decoded only when asked for."""

    def __init__(
        self,
        path: Path,
        body: bytes | None = None,
        trusted: list[int | None] | None = None,
        *,
        writable: bool = True,
    ) -> None:
        self.path = path
        self.writable = writable  # False when the path names something other than a regular file: left alone
        self._body = body  # until a save: then only its fingerprint is kept (about 75 MB at 100,000 skills)
        self._written: bytes | None = None
        self.trusted_before_ns: list[int | None] = trusted or []
        """Per root: files whose times are older than this were hashed after their last change."""

    @classmethod
    def load(cls, path: Path) -> DigestCache:
        """The cache stored at `path`; empty (with a warning) if it is unreadable or corrupt, or silently if missing."""
        try:
            # A FIFO or a device named as the cache must not hang the start, nor /dev/zero fill memory.
            raw = read_regular(os.fspath(path), limit=MAX_CACHE_BYTES, follow_links=True)
            if len(raw) > MAX_CACHE_BYTES:
                raise UnsafeFile(errno.EFBIG, f"larger than {MAX_CACHE_BYTES >> 20} MiB")
        except FileNotFoundError:
            return cls(path)
        except OSError as exc:
            unsafe = isinstance(exc, UnsafeFile)
            ignored(path, f"unreadable ({exc.strerror or exc})" + ("; it is left as it is" if unsafe else ""))
            return cls(path, writable=not unsafe)
        try:
            header, _, body = raw.partition(b"\n")
            doc = json.loads(header)
            if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
                raise ValueError("not a skillwire digest cache")
            if doc.get("version") != _VERSION:
                ignored(
                    path, f"written in another layout (version {doc.get('version')!r}); it is rewritten after the scan"
                )
                return cls(path)
            trusted = doc["trusted_before_ns"]
            if not isinstance(trusted, list) or not all(t is None or type(t) is int for t in trusted):
                raise ValueError("malformed header")
        except UNUSABLE as exc:
            ignored(path, f"corrupt ({exc})")
            return cls(path)
        return cls(path, body, trusted)

    def body(self) -> bytes | None:
        """The stored snapshot's bytes, as its writer laid them out (None if there are none)."""
        return self._body

    def snapshot(self) -> Any:
        """The stored snapshot as decoded JSON (None if there is none or it does not decode)."""
        if self._body is None:
            return None
        try:
            return json.loads(self._body)
        except (ValueError, RecursionError) as exc:
            ignored(self.path, f"corrupt ({exc})")
            return None

    def save(self, snapshot: Any, *, trusted_before_ns: list[int | None]) -> None:
        """`save_body` of `snapshot` (JSON-ready) as compact JSON."""
        text = json.dumps(snapshot, separators=(",", ":"))  # ASCII: lone surrogates are escaped, never raise
        self.save_body(text.encode("ascii"), trusted_before_ns=trusted_before_ns)

    def save_body(self, body: bytes, *, trusted_before_ns: list[int | None]) -> None:
        """Write `body` atomically, unless the file already holds it; failures are logged.

        An unchanged snapshot is not rewritten even if `trusted_before_ns` moved on: the older
        times it keeps only make a later scan re-read a few more files, never fewer.
        """
        fingerprint = hashlib.sha256(body).digest()
        if body == self._body or fingerprint == self._written or not self.writable:
            self._body, self._written = None, fingerprint
            return
        header = json.dumps(
            {"format": _FORMAT, "version": _VERSION, "trusted_before_ns": trusted_before_ns}, separators=(",", ":")
        )
        tmp = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp", dir=self.path.parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(header.encode("ascii") + b"\n")  # compact JSON escapes newlines: the header is the first line
                fh.write(body)
            os.replace(tmp, self.path)
            tmp = None
        except OSError as exc:
            logger.warning("digest cache %s not written: %s", self.path, exc.strerror or exc)
            return
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        self._body, self._written = None, fingerprint
        self.trusted_before_ns = trusted_before_ns
