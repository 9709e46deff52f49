"""Verified reads of a skill's files, and what a failed one changes: the entry refreshed, approval revoked, window held.

Integrity and Verification (verify before use; on failure refresh, re-approve if the set changed) told once, here.

    reads = Reads(connections, registry, approvals, cache, limits, memory=MemoryCache())
    data = await reads.fetch_verified(key, entry, entry.skill_md)  # or SkillChanged, with the approval revoked

A read is answered from memory first (`MemoryCache`), then from `cache` (the disk `SkillCache`, opt-in; a hit there
is kept in memory too), and only then fetched; a fetched file is kept in both once every check passed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio.lowlevel

from skillwire.cache.memory import MemoryCache
from skillwire.cache.port import ContentCache
from skillwire.core.errors import (
    ReadFailed,
    ResponseTooLarge,
    SkillChanged,
    SkillDeclined,
    SkillwireError,
    VerificationError,
)
from skillwire.core.hosting.approvals import ApprovalStore, ContentChange, NeedsApproval, check, diff_content
from skillwire.core.hosting.entry import EntryResource, SkillEntry
from skillwire.core.hosting.limits import ClientLimits
from skillwire.core.hosting.policy import origin_tag
from skillwire.core.hosting.registry import Registry, SkillKey
from skillwire.core.hosting.verify import verify_bytes, verify_frontmatter
from skillwire.core.hosting.window import ActingWindow
from skillwire.core.manifest import MAX_TOTAL_BYTES
from skillwire.core.uri import same_uri
from skillwire.host.connections import Connection, Connections

logger = logging.getLogger(__name__)


class Reads:
    """The host's verified reads and the state they keep true: acting windows, suspended windows, revoked sets.

    `windows` are open from a load until `unload` (the SKILL.md left the model's context); `suspended` holds
    windows whose skill changed under them (still acting, so execution stays gated, but no more reads);
    `revoked` holds the content sets of approvals revoked because the skill changed, so the next prompt says
    "changed".
    """

    def __init__(
        self,
        connections: Connections,
        registry: Registry,
        approvals: ApprovalStore,
        cache: ContentCache | None,
        limits: ClientLimits,
        *,
        memory: MemoryCache | None = None,
    ) -> None:
        self._connections = connections
        self._registry = registry
        self.approvals = approvals  # public: `Host.approvals`, `.cache` and `.limits` read and set these
        self.cache = cache
        self.memory = memory
        self.limits = limits
        self.windows: dict[SkillKey, ActingWindow] = {}
        self.suspended: dict[SkillKey, ContentChange] = {}
        self.revoked: dict[SkillKey, frozenset[tuple[str, str]]] = {}

    def forget_origin(self, label: str) -> None:
        """Drop every window, revoked set and file in memory of a removed server."""
        for table in (self.windows, self.suspended, self.revoked):
            for key in [k for k in table if k.origin == label]:
                del table[key]
        if self.memory is not None:
            self.memory.remove_origin(label)

    def observe(self, key: SkillKey, entry: SkillEntry) -> None:
        """A fresh entry from skills/list or skills/get: an approval that no longer covers it is revoked.

        Content-bound approval: "If a subsequent entry for that skill ... advertises a
        different set ... the host MUST treat the prior approval as revoked and re-prompt
        before loading or executing."
        """
        approval = self.approvals.get(key)
        if approval is not None and isinstance(check(approval, entry), NeedsApproval):
            self.approvals.revoke(key)
            self.revoked[key] = approval.content
        window = self.windows.get(key)
        if window is not None and window.entry.content_set != entry.content_set:
            self.suspended[key] = diff_content(window.entry.content_set, entry.content_set)

    async def fetch_skill_md(self, key: SkillKey, entry: SkillEntry) -> bytes:
        """SKILL.md of `entry`, verified: size and digest (unless dynamic), then frontmatter."""
        if not entry.is_dynamic:
            record = entry.skill_md
            assert record is not None
            return await self.fetch_verified(key, entry, record)  # checks the frontmatter too
        data = await self.read_dynamic(self._connections.get(key.origin), entry, entry.uri)
        try:
            verify_frontmatter(entry, data)
        except VerificationError as err:
            await self.after_failure(key, entry, err)
            raise
        return data

    async def fetch_verified(self, key: SkillKey, entry: SkillEntry, record: EntryResource) -> bytes:
        """Bytes of a listed file: from a cache if they are the record's (size and digest), else fetched and
        verified. SKILL.md's frontmatter is checked against the held entry either way."""
        data = self._cached(key.origin, record)
        fetched = data is None
        if data is not None:
            # A hit answers without I/O: still let other tasks run, or a caller reading in a loop starves them
            await anyio.lowlevel.checkpoint()
        else:
            try:
                data = await self._connections.get(key.origin).read(record.uri, record.size)
            except (ReadFailed, VerificationError) as err:
                # Reading Directories: a listed file the server no longer serves; "the same refresh applies".
                # An answer cut off past the listed size (ResponseTooLarge) is a verification failure too.
                await self.after_failure(key, entry, err)
                raise
        try:
            if fetched:
                verify_bytes(record, data)
            if same_uri(record.uri, entry.uri):
                # Every check before the cache: bytes whose frontmatter the host refused are never kept.
                verify_frontmatter(entry, data)
        except VerificationError as err:
            await self.after_failure(key, entry, err)
            raise
        if fetched:
            for store in (self.memory, self.cache):
                if store is not None:
                    store.put(key.origin, record, data)
        return data

    def _cached(self, origin: str, record: EntryResource) -> bytes | None:
        """`record`'s bytes from memory, else from `cache` (then kept in memory too), else None."""
        data = self.memory.get(origin, record) if self.memory is not None else None
        if data is None and self.cache is not None:
            data = self.cache.get(origin, record)
            if data is not None and self.memory is not None:
                self.memory.put(origin, record, data)
        return data

    async def after_failure(self, key: SkillKey, held: SkillEntry, err: SkillwireError) -> None:
        """Content was not used. Refresh the entry; if its set changed, revoke the approval and say what changed.

        Integrity and Verification: "To recover from staleness, the host calls skills/get
        for that skill ... and proceeds from the current resources set." The acting window
        stays open (it ends only when the SKILL.md leaves context), so execution stays gated.
        """
        logger.warning("verification failed for %s: %s", origin_tag(key), err)
        server = self._connections.get(key.origin)
        try:
            fresh = await server.client.get_entry(key.uri)
        except SkillwireError as refresh_err:
            logger.warning("refreshing %s failed: %s", origin_tag(key), refresh_err)
            return
        self._registry.update_entry(key.origin, fresh)
        self.observe(key, fresh)
        if fresh.content_set != held.content_set:
            self.revoked.setdefault(key, held.content_set)
            change = diff_content(held.content_set, fresh.content_set)
            if key in self.windows:
                self.suspended[key] = change
            raise SkillChanged(key, change) from err

    async def read_dynamic(self, server: Connection, entry: SkillEntry, uri: str) -> bytes:
        """A read for a dynamic skill: no size is listed, so the spec's 16 MiB per-skill total bounds it
        (or `limits.max_read_bytes`, if lower). Each answer may take only what is left of the total, and is
        cut off on the wire past that.
        """
        budget = min(MAX_TOTAL_BYTES, self.limits.max_read_bytes)
        used = server.dynamic_bytes.get(entry.uri, 0)
        try:
            data = await server.read(uri, budget - used)
        except ResponseTooLarge:
            data = None
        total = used + (budget + 1 if data is None else len(data))
        server.dynamic_bytes[entry.uri] = total
        if data is None or total > budget:
            raise SkillDeclined(
                f"{entry.uri}: dynamic content passed the per-skill limit of {budget:,} bytes; stopped loading"
            )
        return data


class Once:
    """SKILL.md fetched at most once per load: for the user to read before approving (if asked), then the load."""

    def __init__(self, fetch: Callable[[], Awaitable[bytes]]) -> None:
        self._fetch = fetch
        self._data: bytes | None = None

    async def __call__(self) -> bytes:
        if self._data is None:
            self._data = await self._fetch()
        return self._data

    async def text(self) -> str:
        return (await self()).decode("utf-8", errors="replace")
