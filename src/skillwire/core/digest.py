"""SHA-256 digests in the `sha256:{hex}` form the Skills extension uses.

Integrity and Verification: "Digests are SHA-256 hashes of a file's raw bytes,
formatted as sha256:{hex} where {hex} is 64 lowercase hexadecimal characters."

    sha256_digest(b"hello")      # 'sha256:2cf24d...'
    is_digest("sha256:" + "0" * 64)  # True
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
