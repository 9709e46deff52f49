"""SHA-256 digests in the `sha256:{hex}` form the Skills extension uses.

Integrity and Verification: "Digests are SHA-256 hashes of a file's raw bytes,
formatted as sha256:{hex} where {hex} is 64 lowercase hexadecimal characters."

    sha256_digest(b"hello")      # 'sha256:2cf24d...'
    is_digest("sha256:" + "0" * 64)  # True
    digest_text(compact_digest(text)) == text    # True for any text: the compact form of a digest is its 32 bytes
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def sha256_digest(data: bytes) -> str:
    """The `sha256:{hex}` digest of `data` (raw bytes, never decoded text)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sha256_digest_of(chunks: Iterable[bytes]) -> str:
    """The `sha256:{hex}` digest of the concatenated `chunks`, hashed as they come (never joined in memory)."""
    hasher = hashlib.sha256()
    for chunk in chunks:
        hasher.update(chunk)
    return "sha256:" + hasher.hexdigest()


def is_digest(value: object) -> bool:
    """True if `value` is `sha256:` followed by 64 lowercase hex characters."""
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


Digest = str | bytes
"""A digest as an index keeps it: the 32 raw bytes of a `sha256:{hex}` digest (65 bytes in memory, not 120), or the
text itself when it is not one (a digest cache may hold anything: it is carried, never trusted)."""


def compact_digest(text: str) -> Digest:
    """`text` as an index keeps it: its 32 raw bytes if it is a `sha256:{hex}` digest, else `text` itself."""
    return bytes.fromhex(text[7:]) if _DIGEST.fullmatch(text) else text


def digest_text(digest: Digest) -> str:
    """The `sha256:{hex}` text of a digest kept by `compact_digest` (text is returned as it is)."""
    return digest if isinstance(digest, str) else "sha256:" + digest.hex()
