"""An optional on-disk cache of file digests, so a restart of an unchanged catalog need not re-read it.

Each entry is keyed on what the filesystem says about a file without reading it:
(device, inode, size, mtime_ns, ctime_ns). A write to a file changes its ctime
(the kernel sets it, and no unprivileged call can set it back, unlike mtime), so
an edit that keeps the size and restores the mtime still misses. The value is the
digest and MIME type, plus, for a SKILL.md, its parsed frontmatter and the line
it starts on (so a warm start need not read or parse it either). Nothing else is
stored: no paths, no content.

The file also keeps a snapshot of the last catalog built with it (skills, their
files' digests and locations, refusals), so a restart can publish at once and
check the disk afterwards (`FolderSource.restore`). The file is three lines of
compact JSON (a header, the snapshot, the digest entries), and each part is
decoded only when asked for.

The cache is only a hint: the server re-hashes a file on every read, so a stale
entry can never serve bytes that disagree with the manifest. A missing, corrupt
or unreadable cache file is ignored with a warning; it is written atomically
(a temporary file renamed over it) after a scan.

    cache = DigestCache.load(Path("~/.cache/skillwire/digests.json").expanduser())
    entry = cache.get(key)
    cache.put(key, CacheEntry(digest, mime_type, None))
    cache.save()
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

FileKey = tuple[int, int, int, int, int]  # (st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)

_FORMAT = "skillwire-digest-cache"
_VERSION = 2
RACY_NS = 2_000_000_000  # files changed less than this long ago are not cached


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """What is remembered of one file: its digest, its MIME type, and (SKILL.md only) its frontmatter."""

    digest: str
    mime_type: str
    frontmatter: tuple[dict[str, Any], int] | None = None  # (frontmatter, first line), parsed without error


def file_key(st: os.stat_result) -> FileKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class DigestCache:
    """Entries loaded from one file, and the entries a scan used (which are what `save` writes)."""

    def __init__(
        self, path: Path | None, entries: dict[FileKey, CacheEntry] | None = None, snapshot: str | None = None
    ) -> None:
        self.path = path
        self._old: dict[FileKey, CacheEntry] = entries or {}
        self._new: dict[FileKey, CacheEntry] = {}
        self._entries_text: str | None = None  # decoded on first use
        self._snapshot_text = snapshot

    @classmethod
    def load(cls, path: Path) -> DigestCache:
        """The cache stored at `path`; empty (with a warning) if it is missing-but-expected, unreadable or corrupt."""
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return cls(path)
        except OSError as exc:
            logger.warning("digest cache %s unreadable, ignored: %s", path, exc.strerror or exc)
            return cls(path)
        try:
            header, snapshot, entries = raw.split(b"\n", 2)
            doc = json.loads(header)
            if not isinstance(doc, dict) or doc.get("format") != _FORMAT or doc.get("version") != _VERSION:
                raise ValueError("not a skillwire digest cache of this version")
            snapshot_text = snapshot.decode("utf-8")
            entries_text = entries.decode("utf-8")
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            logger.warning("digest cache %s is corrupt, ignored: %s", path, exc)
            return cls(path)
        cache = cls(path, snapshot=None if snapshot_text == "null" else snapshot_text)
        cache._entries_text = entries_text
        return cache

    def _entries(self) -> dict[FileKey, CacheEntry]:
        if self._entries_text is not None:
            text, self._entries_text = self._entries_text, None
            try:
                self._old = _decode(text)
            except (ValueError, TypeError, KeyError, IndexError) as exc:
                logger.warning("digest cache %s is corrupt, ignored: %s", self.path, exc)
                self._old = {}
        return self._old

    def snapshot(self) -> Any:
        """The stored catalog snapshot as decoded JSON (None if there is none or it does not decode)."""
        if self._snapshot_text is None:
            return None
        try:
            return json.loads(self._snapshot_text)
        except ValueError as exc:
            logger.warning("digest cache %s: catalog snapshot is corrupt, ignored: %s", self.path, exc)
            return None

    def __len__(self) -> int:
        return len(self._entries())

    def get(self, key: FileKey) -> CacheEntry | None:
        return self._entries().get(key)

    def put(self, key: FileKey, entry: CacheEntry) -> None:
        """Remember `entry` for the next start, unless the file changed too recently to trust its times."""
        # Timestamps are coarser than writes (a tick is milliseconds): a write in the same tick as the
        # stat would leave the key unchanged, so a file touched in the last moments is not remembered.
        if max(key[3], key[4]) > time.time_ns() - RACY_NS:
            return
        self._new[key] = entry

    def save(self, snapshot: Any = None) -> None:
        """Write the entries this scan used (and `snapshot`, JSON-ready), atomically; failures are logged."""
        if self.path is None:
            return
        snapshot_text = json.dumps(snapshot, separators=(",", ":")) if snapshot is not None else None
        if self._new == self._entries() and snapshot_text == self._snapshot_text:
            self._new = {}  # an unchanged catalog: nothing to write
            return
        rows = []
        for key, e in self._new.items():
            row: list[Any] = [*key, e.digest, e.mime_type]
            if e.frontmatter is not None:
                row += [e.frontmatter[0], e.frontmatter[1]]
            rows.append(row)
        header = json.dumps({"format": _FORMAT, "version": _VERSION}, separators=(",", ":"))
        # Compact JSON escapes every newline inside strings, so the three parts split on "\n".
        data = "\n".join([header, snapshot_text or "null", json.dumps(rows, separators=(",", ":"))])
        tmp = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
            os.replace(tmp, self.path)
            tmp = None
        except OSError as exc:
            logger.warning("digest cache %s not written: %s", self.path, exc.strerror or exc)
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        self._old, self._new = self._new, {}
        self._snapshot_text = snapshot_text


def _decode(text: str) -> dict[FileKey, CacheEntry]:
    rows = json.loads(text)
    if not isinstance(rows, list):
        raise ValueError("entries are not a list")
    entries: dict[FileKey, CacheEntry] = {}
    for row in rows:
        if not isinstance(row, list) or len(row) not in (7, 9):
            raise ValueError("malformed entry")
        key: FileKey = (row[0], row[1], row[2], row[3], row[4])
        if type(key[0]) is not int or type(key[1]) is not int or type(key[2]) is not int:
            raise ValueError("malformed key")
        if type(key[3]) is not int or type(key[4]) is not int:
            raise ValueError("malformed key")
        digest, mime = row[5], row[6]
        if not isinstance(digest, str) or not digest.startswith("sha256:") or not isinstance(mime, str):
            raise ValueError("malformed digest or type")
        fm = None
        if len(row) == 9:
            if not isinstance(row[7], dict) or type(row[8]) is not int:
                raise ValueError("malformed frontmatter")
            fm = (row[7], row[8])
        entries[key] = CacheEntry(digest, mime, fm)
    return entries
