"""Hashing a walked file: its size, digest, MIME type and (for a SKILL.md) frontmatter, or why it cannot be read.

A file whose stamp (device, inode, size, mtime, ctime) still matches the last index is not read again; any
other is opened through `safe_open.open_regular` and read at most size + 1 bytes.

    error = hash_file(record, path, previous, trusted_before_ns, real_root)
"""

from __future__ import annotations

import errno
import hashlib
import os

from skillwire.core.errors import SkillError
from skillwire.core.mime import DEFAULT_MIME_TYPE, mime_type_for
from skillwire.core.skill_rules import (
    looks_like_text,
    read_frontmatter,
)
from skillwire.core.uri import SKILL_FILE
from skillwire.sources.digest_cache import file_key
from skillwire.sources.folder.records import (
    FileRecord,
)
from skillwire.sources.safe_open import open_regular

_CHUNK = 1 << 20


_SNIFF = 8192


_READ_ATTEMPTS = 3  # a file that changes size while being read is read again, this many times at most


class _ChangedWhileRead(OSError):
    """A file's size changed between its fstat and the end of its read, on every attempt."""


def hash_file(
    rec: FileRecord, path: str, prev: FileRecord | None, trusted_before_ns: int, real_root: str
) -> OSError | None:
    """Fill in `rec`'s size, stamp, digest, MIME type (and, for a SKILL.md, frontmatter); an OSError if unreadable.

    The digest is taken from `prev` (the same path in the last scan, or in the digest cache) when the
    file's stamp still matches and is older than `trusted_before_ns`, else the file is read and hashed.
    The stat comes before the read: a write after it changes the ctime, so a digest is never filed
    under a stamp the file no longer has. The file is opened with `open_regular` (no wait on a FIFO
    swapped in since the walk, no link followed, its real path checked inside `real_root`: it may have
    been renamed since the walk, never moved out) and at most its size + 1 bytes
    are read: a file that grows or shrinks meanwhile is read again, then counted unreadable.
    """
    rel = rec.rel
    is_skill_md = rel == SKILL_FILE or rel.endswith("/" + SKILL_FILE)
    mime = mime_type_for(rel)
    try:
        if prev is not None:
            key = file_key(os.stat(path))
            if hash(key) == prev.stamp and key[4] < trusted_before_ns and key[3] < trusted_before_ns:
                rec.size, rec.stamp = prev.size, prev.stamp
                rec.digest, rec.mime, rec.frontmatter = prev.digest, prev.mime, prev.frontmatter
                rec.ident = None
                return None
        fd, st = open_regular(path, within=real_root, ident=rec.ident)
        rec.ident = None
        try:
            for _ in range(_READ_ATTEMPTS):
                size = st.st_size
                if size < _CHUNK:
                    data = os.read(fd, size + 1)  # one call: a regular file reads short only at its end
                    read = len(data)
                    if mime == DEFAULT_MIME_TYPE and looks_like_text(data[:_SNIFF]):
                        mime = "text/plain"
                    digest = hashlib.sha256(data).digest()  # raw: kept as 32 bytes (`digest.compact_digest`)
                    kept = data if is_skill_md else None
                else:
                    h = hashlib.sha256()
                    chunks: list[bytes] = []
                    read = 0
                    while read <= size and (chunk := os.read(fd, min(_CHUNK, size + 1 - read))):
                        if read == 0 and mime == DEFAULT_MIME_TYPE and looks_like_text(chunk[:_SNIFF]):
                            mime = "text/plain"
                        read += len(chunk)
                        h.update(chunk)
                        if is_skill_md:
                            chunks.append(chunk)
                    digest = h.digest()
                    kept = b"".join(chunks) if is_skill_md else None
                if read == size:
                    break
                os.lseek(fd, 0, os.SEEK_SET)  # written to while read: read it whole again
                st = os.fstat(fd)
                mime = mime_type_for(rel)
            else:
                raise _ChangedWhileRead(errno.EAGAIN, "the file kept changing size while it was read")
        finally:
            os.close(fd)
    except OSError as exc:
        rec.stamp = None
        return exc
    rec.size, rec.stamp, rec.digest, rec.mime = size, hash(file_key(st)), digest, mime
    if kept is not None:
        try:
            rec.frontmatter = read_frontmatter(kept)
        except SkillError as err:
            rec.frontmatter = err.with_traceback(None)  # kept: its traceback would tie it to this frame in a cycle
    return None


def same_parse(fresh: FileRecord, recorded: FileRecord) -> bool:
    """True if a SKILL.md just read has the digest and exactly the frontmatter that `recorded` holds."""
    if fresh.digest != recorded.digest:
        return False
    a, b = fresh.frontmatter, recorded.frontmatter
    if not (isinstance(a, tuple) and isinstance(b, tuple)) or a[1] != b[1]:
        return False
    return a[0] == b[0] and _same_json(a[0], b[0])


def _same_json(a: object, b: object) -> bool:
    """Equal as JSON values, types and key order included (in Python 1 == 1.0 == True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(_same_json(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(map(_same_json, a, b))
    return a == b
