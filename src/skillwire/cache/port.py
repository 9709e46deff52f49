"""`ContentCache`: what the host asks of a store of verified skill files (`MemoryCache`, the disk `SkillCache`, yours).

Keyed by the server's host-assigned label and the held entry's record (uri, digest, size): a store answers only
bytes that equal that record, so the host never sees content the entry it holds does not list.

    data = cache.get("docs", record)      # bytes of exactly `record`'s size and digest, or None
    cache.put("docs", record, data)       # after a verified read; bytes that do not match are refused
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from skillwire.core.hosting.entry import EntryResource


@runtime_checkable
class ContentCache(Protocol):
    """A store of verified skill files, keyed by (server label, the held entry's record for the file)."""

    def get(self, origin: str, resource: EntryResource) -> bytes | None:
        """The bytes of `resource` from the server labelled `origin` if held and equal to its size and digest."""
        ...

    def put(self, origin: str, resource: EntryResource, data: bytes) -> None:
        """Keep `data` for `resource` if the store keeps files of its size; bytes that do not match the record's
        size and digest are never kept (VerificationError)."""
        ...

    def remove_origin(self, origin: str) -> None:
        """Forget everything held for the server labelled `origin` (the user removed it)."""
        ...
