"""`MemoryCache`: verified skill files in memory, bounded in bytes, the least recently used dropped first.

Lazy Retrieval: "Hosts SHOULD cache verified skill content locally, populated on demand as files are read rather
than in bulk." `Host` keeps one by default (`Host(memory_cache_bytes=...)`), in front of the opt-in disk cache:

- A file is kept under (server label, uri in normal form, digest). A read for an entry whose digest changed is a
  miss, so bytes that do not match the entry the caller holds are never answered; `put` checks size and digest
  itself, so only verified bytes get in. Nothing outside the process can edit them, so a hit is not re-hashed
  (the spec's re-hash on every access is about content cached on disk).
- Bounded: at most `max_bytes` (32 MiB by default) in all, each file charged its bytes, its key and a fixed
  `ITEM_OVERHEAD` (so many empty files cannot grow it either); a file over `max_item_bytes` (an eighth of
  `max_bytes` by default, 4 MiB) is not kept. Past the bound, the least recently used files go first.

    cache = MemoryCache()                  # or MemoryCache(max_bytes=8 * 1024 * 1024)
    cache.put("docs", record, data)        # after a verified read
    cache.get("docs", record)              # those bytes while the held entry lists that digest, else None
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from skillwire.core.hosting.entry import EntryResource
from skillwire.core.hosting.verify import verify_bytes
from skillwire.core.uri import normal_uri

__all__ = ["DEFAULT_MEMORY_CACHE_BYTES", "ITEM_OVERHEAD", "MemoryCache"]

DEFAULT_MEMORY_CACHE_BYTES: Final = 32 * 1024 * 1024
"""What `Host` keeps in memory by default: 32 MiB of verified files (two skills at the spec's 16 MiB limit)."""

ITEM_OVERHEAD: Final = 256
"""Bytes charged per file on top of its content and key: the bookkeeping Python spends on one (about 250)."""

_Key = tuple[str, str, str]  # (origin, uri in normal form, digest)


class MemoryCache:
    """Verified skill files in memory: (origin, uri, digest) -> bytes, bounded by `max_bytes`, LRU (see the module)."""

    def __init__(self, max_bytes: int = DEFAULT_MEMORY_CACHE_BYTES, *, max_item_bytes: int | None = None) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be 0 or more, not {max_bytes}")
        if max_item_bytes is not None and max_item_bytes < 0:
            raise ValueError(f"max_item_bytes must be 0 or more, not {max_item_bytes}")
        self.max_bytes = max_bytes
        self.max_item_bytes = min(max_bytes, max_bytes // 8 if max_item_bytes is None else max_item_bytes)
        self._items: OrderedDict[_Key, bytes] = OrderedDict()  # least recently used first
        self._charged = 0

    @property
    def charged(self) -> int:
        """The bytes held, as charged against `max_bytes` (content, keys and `ITEM_OVERHEAD` per file)."""
        return self._charged

    def __len__(self) -> int:
        """How many files are held."""
        return len(self._items)

    def get(self, origin: str, resource: EntryResource) -> bytes | None:
        """The bytes kept for `resource` (its uri in any spelling, and its digest and size), or None."""
        key = (origin, normal_uri(resource.uri), resource.digest)
        data = self._items.get(key)
        if data is None or len(data) != resource.size:  # a size the digest's bytes do not have: that entry is wrong
            return None
        self._items.move_to_end(key)
        return data

    def put(self, origin: str, resource: EntryResource, data: bytes) -> None:
        """Keep `data` for `resource` after checking its size and digest (VerificationError if they differ); a file
        over `max_item_bytes` is not kept (nor hashed). The least recently used files make room."""
        if len(data) == resource.size and len(data) > self.max_item_bytes:
            return
        verify_bytes(resource, data)
        key = (origin, normal_uri(resource.uri), resource.digest)
        charge = _charge(key, data)
        if charge > self.max_bytes:
            return  # its key alone (a uri of thousands of characters) would not fit
        old = self._items.pop(key, None)
        if old is not None:
            self._charged -= _charge(key, old)
        self._items[key] = data
        self._charged += charge
        while self._charged > self.max_bytes:
            dropped_key, dropped = self._items.popitem(last=False)
            self._charged -= _charge(dropped_key, dropped)

    def remove_origin(self, origin: str) -> None:
        """Forget every file of the server labelled `origin`."""
        for key in [k for k in self._items if k[0] == origin]:
            self._charged -= _charge(key, self._items.pop(key))

    def clear(self) -> None:
        """Forget every file."""
        self._items.clear()
        self._charged = 0


def _charge(key: _Key, data: bytes) -> int:
    return len(data) + sum(len(part) for part in key) + ITEM_OVERHEAD
