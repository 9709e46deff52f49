"""Digests of git blobs, keyed by blob id: a blob is hashed once, whichever commit, branch or restart meets it again.

A blob id names its bytes (it is their SHA-1 or SHA-256 with a header), so the sha256 digest, size and
text-or-binary sniff of a blob never change: re-indexing a new commit hashes only the blobs it has not seen,
and a persisted cache makes a restart read no file content but the SKILL.md files. `hashed` counts the blobs
hashed by this process (observable: a one-file commit costs one).

The persisted file (a `DigestCache` file, written atomically) may be forged, so what it says is published only
until checked: a read of a blob hashes the bytes it sends (`checked`), and a digest the file got wrong is
replaced by the true one, so the next scan publishes that. A blob larger than a skill may be in total is never
read (its skill is refused for its size).

    digests = BlobDigests(Path("~/.cache/skillwire/blobs.json").expanduser())
    facts = digests.of(repo, blob_id)      # BlobFacts(digest, size, text), hashed if not known
    digests.save()
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import NamedTuple

import pygit2

from skillwire.core.digest import sha256_digest
from skillwire.core.manifest import MAX_TOTAL_BYTES
from skillwire.core.skill_rules import SNIFF_BYTES, looks_like_text
from skillwire.sources.digest_cache import DigestCache, ignored

logger = logging.getLogger(__name__)

_KEY = "git-blobs"
TOO_LARGE = "sha256:" + "0" * 64  # the digest listed for a blob too large to serve (its skill is refused)


class BlobFacts(NamedTuple):
    """What hashing a blob found: its sha256 digest, size in bytes, and whether its start reads as UTF-8 text."""

    digest: str
    size: int
    text: bool


class BlobDigests:
    """Blob id -> BlobFacts, hashed on first use, optionally kept in a file across restarts."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.hashed = 0  # blobs hashed by this process
        self.corrected = 0  # digests from the file found wrong when their blob was read
        self._known: dict[bytes, BlobFacts] = {}
        self._unchecked: set[bytes] = set()  # taken from the file: what they say is not yet seen to be true
        self._cache: DigestCache | None = None
        self._dirty = False
        if path is not None:
            self._cache = DigestCache.load(path)
            self._load(self._cache.snapshot())

    def _load(self, snapshot: object) -> None:
        if snapshot is None:
            return
        try:
            blobs = snapshot[_KEY] if isinstance(snapshot, dict) else None
            if not isinstance(blobs, dict):
                raise ValueError("it holds no git blob digests")
            for key, row in blobs.items():
                digest, size, text = row
                if not (
                    isinstance(digest, str)
                    and len(digest) == 71
                    and digest.startswith("sha256:")
                    and type(size) is int
                    and 0 <= size <= MAX_TOTAL_BYTES
                    and type(text) is bool
                ):
                    raise ValueError(f"malformed entry for blob {key[:12]!r}")
                oid = bytes.fromhex(key)
                self._known[oid] = BlobFacts(digest, size, text)
                self._unchecked.add(oid)
        except (ValueError, TypeError) as exc:
            ignored(self.path, f"unusable ({exc})")
            self._known.clear()
            self._unchecked.clear()

    def of(self, repo: pygit2.Repository, oid: pygit2.Oid) -> BlobFacts:
        """The facts of blob `oid` in `repo`: remembered, or read and hashed now."""
        found = self._known.get(oid.raw)
        if found is not None:
            return found
        _, size = repo.odb.read_header(oid)
        if size > MAX_TOTAL_BYTES:
            return BlobFacts(TOO_LARGE, size, False)  # never read; not remembered (it costs no read to say again)
        _, data = repo.odb.read(oid)
        return self._hashed(oid.raw, data)

    def _hashed(self, key: bytes, data: bytes) -> BlobFacts:
        self.hashed += 1
        facts = BlobFacts(sha256_digest(data), len(data), looks_like_text(data[:SNIFF_BYTES]))
        self._known[key] = facts
        self._unchecked.discard(key)
        self._dirty = True
        return facts

    def checked(self, oid: pygit2.Oid, data: bytes) -> None:
        """`data` was just read from blob `oid`: if the file said otherwise of it, remember the truth instead."""
        key = oid.raw
        if key not in self._unchecked:
            return
        facts = self._known[key]
        if facts.size != len(data) or facts.digest != sha256_digest(data):
            logger.warning("digest cache %s was wrong about blob %s; it is hashed again", self.path, oid)
            self._hashed(key, data)
            self.corrected += 1
        self._unchecked.discard(key)

    def save(self) -> None:
        """Write what is known to the file (if any), atomically, when something was hashed since it was read."""
        if self._cache is None or not self._dirty:
            return
        known = self._known.copy()  # one step under the GIL: a read on another thread may add to it meanwhile
        rows = {key.hex(): list(facts) for key, facts in known.items()}
        self._cache.save({_KEY: rows}, trusted_before_ns=[])
        self._dirty = False
