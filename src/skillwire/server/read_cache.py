"""Verified bytes of hot files, kept in memory so a read neither re-reads nor re-hashes them.

A `resources/read` hashes the bytes it is about to send and compares them with the published digest
(`service.py`); for a file read again and again that is a disk read and a sha256 per request. `ReadCache` keeps,
per file URI, what a read sent after that check (the `contents` entry: text, or base64 for binary), with the
catalog snapshot it was checked against and the file's stamp (`catalog.StampedContent`: device, inode, size,
mtime and ctime, taken before the bytes were read). An entry answers a later read only while both still hold:

- the same catalog snapshot is current (a rebuild empties the cache; the first entry kept for a newer snapshot,
  such as one a scheduled switch put in place, drops every older one; an older one never matches);
- the file's stamp is unchanged (one `lstat`, no read). A file changed at its source has another stamp: it is
  read and re-hashed, and a mismatch rebuilds the catalog as before, so a changed file is never served.

A file whose stamp is too recent to vouch for its bytes (changed within the last two seconds: timestamps are
coarser than writes) is not kept, nor one of `LARGE_READ_BYTES` or more (read afresh each time). A hit is
charged to the read budget like any read (`budget.py`: its answer costs the same memory while it is sent).
The cache is bounded by the memory its entries hold, text, URI and bookkeeping counted (least recently used
first out; 64 MiB by default, 0: off).

    cache = ReadCache(64 << 20)
    hit = cache.get(uri, catalog)            # the contents entry, or None: read, verify, then cache.put(...)
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from skillwire.core.catalog import Catalog, StampedContent
from skillwire.server.defaults import DEFAULT_READ_CACHE_BYTES, LARGE_READ_BYTES

# Bytes an entry costs besides its text and URI strings (`sys.getsizeof`, exact): the record and its slot in the
# ordered dictionary, about 200 (measured by tracemalloc; a test pins that the count is not below what is held).
_ENTRY_OVERHEAD = 224


@dataclass(frozen=True, slots=True)
class _Entry:
    catalog: Catalog
    content: StampedContent
    stamp: int
    size: int
    mime_type: str
    key: str  # "text" or "blob"
    value: str
    cost: int


class ReadCache:
    """At most `capacity` bytes of verified `resources/read` contents, least recently used dropped first."""

    def __init__(self, capacity: int = DEFAULT_READ_CACHE_BYTES) -> None:
        if capacity < 0:
            raise ValueError(f"a read cache holds 0 bytes or more, not {capacity}")
        self.capacity = capacity
        self.used = 0
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._of: Catalog | None = None  # the snapshot every entry was verified against

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, uri: str, catalog: Catalog) -> dict[str, Any] | None:
        """The contents entry kept for `uri` if it was verified against `catalog` and its file is unchanged."""
        entry = self._entries.get(uri)
        if entry is None:
            self.misses += 1
            return None
        if entry.catalog is not catalog or entry.content.stamp() != entry.stamp:
            self._drop(uri)
            self.misses += 1
            return None
        self._entries.move_to_end(uri)
        self.hits += 1
        return {"uri": uri, "mimeType": entry.mime_type, entry.key: entry.value}

    def size_of(self, uri: str, catalog: Catalog) -> int | None:
        """The size of `uri`'s file if an entry for it was verified against `catalog` (the read budget's question,
        answered without a catalog lookup); None if there is none."""
        entry = self._entries.get(uri)
        return entry.size if entry is not None and entry.catalog is catalog else None

    def put(
        self, catalog: Catalog, content: StampedContent, stamp: int | None, size: int, contents: dict[str, Any]
    ) -> None:
        """Keep `contents` (a verified read of `size` bytes, its stamp taken before them) while it may answer."""
        if stamp is None or size >= LARGE_READ_BYTES or self.capacity == 0:
            return
        key = "text" if "text" in contents else "blob"
        value = contents[key]
        uri = contents["uri"]
        cost = sys.getsizeof(value) + sys.getsizeof(uri) + _ENTRY_OVERHEAD
        if cost > self.capacity:
            return
        if self._of is not catalog:  # entries hold for one snapshot: a newer one (a scheduled switch) starts afresh
            self.clear()
            self._of = catalog
        self._drop(uri)
        self._entries[uri] = _Entry(catalog, content, stamp, size, contents["mimeType"], key, value, cost)
        self.used += cost
        while self.used > self.capacity:
            self._drop(next(iter(self._entries)))

    def clear(self) -> None:
        """Forget everything (a new catalog was published: nothing kept was verified against it)."""
        self._entries.clear()
        self._of = None
        self.used = 0

    def _drop(self, uri: str) -> None:
        entry = self._entries.pop(uri, None)
        if entry is not None:
            self.used -= entry.cost
