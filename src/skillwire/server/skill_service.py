"""The Skills extension's server behaviour over a catalog, independent of how it is mounted.

`SkillService` answers `skills/list`, `skills/get`, `resources/list`,
`resources/read` and `resources/directory/read` from the current `Catalog`
snapshot, with the spec's errors (-32602 for anything not served). Each request
takes one snapshot and answers from it alone. A read re-hashes the bytes it is
about to return; if they no longer match the published digest (the file
changed on disk), the catalog is rebuilt before answering, so a read never
returns bytes that match no manifest the server has published.

Every request method takes the caller's `scope` (a `Visibility`, from a scopes
policy; None: everything is visible) and answers from `ScopedCatalog` then: a
skill outside it is answered exactly as one that does not exist, and no disk
re-check or rebuild is ever started for it.

Two served skills may share a name (the spec tells them apart by path), but a
host that keys skills by name sees only one: each new such set is logged as a
warning when a catalog is adopted (`duplicate_name_warnings`).

    service = SkillService(FolderSource(["skills/"]))   # any `sources.port.SkillSource`
    result = await service.get_skill("skill://pdf-processing/SKILL.md", modern=True)
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
from mcp.shared.exceptions import MCPError

from skillwire.core import lint
from skillwire.core.catalog import Catalog, DirectoryChild, GeneratedContent, Refusal, ServedFile, StampedContent
from skillwire.core.digest import sha256_digest
from skillwire.core.errors import GenerationError, InvalidCursor, InvalidSkillUri
from skillwire.core.manifest import MAX_TOTAL_BYTES, Skill
from skillwire.core.scoped_catalog import ScopedCatalog
from skillwire.core.scopes import Visibility
from skillwire.core.uri import canonical_uri
from skillwire.core.wire import INTERNAL_ERROR, INVALID_PARAMS
from skillwire.server.defaults import (
    DEFAULT_CACHE_SCOPE,
    DEFAULT_PAGE_SIZE,
    DEFAULT_READ_CACHE_BYTES,
    DEFAULT_TTL_MS,
    CacheScope,
)
from skillwire.server.read_cache import ReadCache
from skillwire.sources.port import IncrementalSource, RestorableSource, SkillSource

logger = logging.getLogger(__name__)

Listing = Catalog | ScopedCatalog
"""A snapshot as one request sees it: the whole catalog, or the part a caller's scope allows."""
_MAX_VIEWS = 64  # scoped views kept for the current catalog (one per distinct set of grants in use)
_LOGGED_ONE_BY_ONE = 3  # new duplicate names logged each on its line; more are one line with their count


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """How results are shaped. Defaults follow the spec's own example.

    `page_size`: entries per page of skills/list, resources/list and
    resources/directory/read. `ttl_ms` / `cache_scope`: the CacheableResult hints
    on skills/list, skills/get, resources/list and resources/read (a folder's
    skills are the same for every user, hence "public"). `read_cache_bytes`: how
    much verified file content reads keep in memory (`read_cache.py`; 0: none).
    """

    page_size: int = DEFAULT_PAGE_SIZE
    ttl_ms: int = DEFAULT_TTL_MS
    cache_scope: CacheScope = DEFAULT_CACHE_SCOPE
    read_cache_bytes: int = DEFAULT_READ_CACHE_BYTES

    def __post_init__(self) -> None:
        if self.read_cache_bytes < 0:
            raise ValueError(f"read_cache_bytes must be >= 0, not {self.read_cache_bytes}")
        if not 1 <= self.page_size <= 10_000:
            raise ValueError(f"page_size must be between 1 and 10000, not {self.page_size}")
        if self.ttl_ms < 0:
            raise ValueError(f"ttl_ms must be >= 0, not {self.ttl_ms}")
        if self.cache_scope not in ("public", "private"):
            raise ValueError(f"cache_scope must be 'public' or 'private', not {self.cache_scope!r}")


@dataclass(slots=True)
class ServiceStats:
    """What operators watch (`service/ops.py` reads it): how the current catalog came to be, and drift found by reads.

    `verified`: the current catalog was built from the source, not only restored from a snapshot.
    `index_seconds`: how long the last scan, update or restore took. `rehash_mismatches`: reads whose bytes no
    longer matched the published digest (each one rebuilt the catalog). `since`: the Unix time from which the
    current catalog is served (for a scheduled switch, the time it was scheduled for).
    """

    verified: bool
    index_seconds: float
    rehash_mismatches: int = field(default=0)
    since: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True)
class Switch:
    """A catalog built ahead of time from `source`, served from `at` (Unix time) on (`SkillService.schedule`).

    Replicas given the same switch serve the old catalog to every request that arrives before `at` and the new one
    to every request after: on one clock, no client sees the new content on one replica and then the old on another.
    """

    source: SkillSource
    catalog: Catalog
    at: float


_READ_ATTEMPTS = 3
_INLINE_READ_BYTES = 64 * 1024  # files up to this size are read and hashed on the event loop


class SkillService:
    """Serves one source's skills; holds the current snapshot and swaps it whole on rebuild."""

    def __init__(
        self,
        source: SkillSource,
        options: ServeOptions | None = None,
        *,
        screen: Callable[[Catalog], Catalog] | None = None,
    ) -> None:
        """`screen`: applied to every catalog the source gives before it is served (`--strict-portable`'s
        `server.portability.PortabilityCheck.screen` refuses skills another host may read differently)."""
        self.source = source
        self.options = options or ServeOptions()
        self._screen = screen
        started = time.perf_counter()
        # Optional abilities, declared by the source (see `sources.port`): looked up once.
        self._incremental = source if isinstance(source, IncrementalSource) else None
        self._restorable = source if isinstance(source, RestorableSource) else None
        # A source with a snapshot can start without reading everything again.
        restored = self._restorable.restore(generation=0) if self._restorable is not None else None
        self.restored = restored is not None
        # True if the first catalog came from a snapshot: `rebuild()` soon (LiveReload does) to check the disk.
        self._catalog = self._screened(restored if restored is not None else source.scan(generation=0))
        self.stats = ServiceStats(verified=not self.restored, index_seconds=time.perf_counter() - started)
        self._rebuild_lock = anyio.Lock()
        self._listeners: list[Callable[[Catalog], None]] = []
        self._views: dict[tuple[str, ...], ScopedCatalog] = {}
        self._views_of: Catalog | None = None
        self._last_file: tuple[Listing, str, ServedFile | None] | None = None  # `file`'s last answer
        self._pending: Switch | None = None
        self._unannounced = False  # switched on a request's thread: listeners not told yet (`publish_due`)
        self.read_cache = ReadCache(self.options.read_cache_bytes)
        self._duplicates: tuple[str, ...] = ()
        self._named: Sequence[str] = ()  # the skill URIs `_duplicates` were found among
        self._adopted(self._catalog)

    @property
    def duplicate_warnings(self) -> tuple[str, ...]:
        """The current catalog's duplicate-name warnings (`duplicate_name_warnings`), each logged when it appeared."""
        return self._duplicates

    def _screened(self, catalog: Catalog) -> Catalog:
        return catalog if self._screen is None else self._screen(catalog)

    def _adopted(self, catalog: Catalog) -> None:
        """Log each duplicate-name set `catalog` brings that the catalog before it did not have (a few one by one,
        the rest as one count: a large collection changed at once does not flood the log)."""
        if catalog.skill_uris == self._named:
            return  # the same skills (a file edit): the same names, and finding them takes ~1 s per million skills
        self._named = catalog.skill_uris
        found = duplicate_name_warnings(catalog)
        new = [line for line in found if line not in self._duplicates]
        for line in new[:_LOGGED_ONE_BY_ONE]:
            logger.warning("%s", line)
        if len(new) > _LOGGED_ONE_BY_ONE:
            logger.warning("and %d more names used by several skills each", len(new) - _LOGGED_ONE_BY_ONE)
        self._duplicates = found

    def view(self, catalog: Catalog, scope: Visibility | None) -> Listing:
        """`catalog` as a caller with `scope` sees it (the catalog itself when `scope` is None)."""
        if scope is None:
            return catalog
        if self._views_of is not catalog:
            if catalog is not self.catalog:
                return ScopedCatalog(catalog, scope)  # an older snapshot a request still holds: not worth keeping
            self._views = {}
            self._views_of = catalog
        found = self._views.get(scope.key)
        if found is None:
            if len(self._views) >= _MAX_VIEWS:
                del self._views[next(iter(self._views))]
            found = self._views[scope.key] = ScopedCatalog(catalog, scope)
        return found

    def file(self, catalog: Catalog, scope: Visibility | None, uri: str) -> ServedFile | None:
        """The file served at canonical `uri` in `catalog` as a caller with `scope` sees it, or None. The last answer
        is kept: a read asks twice in a row (the read budget its size, then the read itself)."""
        view = self.view(catalog, scope)
        last = self._last_file
        if last is not None and last[0] is view and last[1] == uri:
            return last[2]
        found = view.file(uri)
        self._last_file = (view, uri, found)
        return found

    @property
    def catalog(self) -> Catalog:
        """The current snapshot. Take it once per request and use only it."""
        pending = self._pending
        if pending is not None and time.time() >= pending.at:
            self._switch(pending)
        return self._catalog

    @property
    def refusals(self) -> tuple[Refusal, ...]:
        """What the current snapshot left out, and why."""
        return self.catalog.refusals

    @property
    def pending(self) -> Switch | None:
        """The switch scheduled and not yet due, if any."""
        pending = self._pending
        return pending if pending is not None and time.time() < pending.at else None

    def schedule(self, switch: Switch | None) -> None:
        """Serve `switch.catalog` from `switch.at` on, and rebuild from `switch.source` after (None: cancel a
        switch not yet due). The first request at or after `at` makes the switch, whichever thread it runs on, so
        the instant is exact to the clock; `publish_due` (on the event loop) tells listeners."""
        if switch is not None and self._screen is not None:
            switch = Switch(switch.source, self._screen(switch.catalog), switch.at)
        self._pending = switch

    def publish_due(self) -> None:
        """Make a due switch, and tell listeners about a switch a request made (call it on the event loop)."""
        _ = self.catalog
        if self._unannounced:
            self._unannounced = False
            for listener in self._listeners:
                listener(self._catalog)

    def _switch(self, switch: Switch) -> None:
        """Serve `switch` now: its source and catalog, as from its `at` (listeners are told by `publish_due`)."""
        self.source = switch.source
        self._incremental = switch.source if isinstance(switch.source, IncrementalSource) else None
        self._restorable = switch.source if isinstance(switch.source, RestorableSource) else None
        self._catalog = switch.catalog
        self._last_file = None
        self._adopted(switch.catalog)
        self.stats.since = switch.at
        self._unannounced = True
        # Last: a request on another thread that finds no switch pending must find the new catalog in place.
        self._pending = None
        logger.info("switched to %s as scheduled", switch.source.revision or switch.source.label)

    def on_change(self, listener: Callable[[Catalog], None]) -> None:
        """Call `listener` with each new snapshot after a rebuild."""
        self._listeners.append(listener)

    def swap(self, catalog: Catalog) -> None:
        """Publish `catalog` as the current snapshot (one reference assignment: atomic for readers)."""
        self._catalog = catalog
        self._adopted(catalog)
        self.stats.since = time.time()
        self.read_cache.clear()  # verified against the previous snapshot only
        self._last_file = None  # nor keep the previous snapshot alive
        for listener in self._listeners:
            listener(catalog)

    async def rebuild(self, seen_generation: int | None = None, *, paths: Iterable[str] | None = None) -> Catalog:
        """Rescan the source and publish the result; concurrent callers share one rescan.

        With `paths` (where the source says things changed: `IncrementalSource.places_for`, or a watching
        source's report), an incremental source re-indexes only what they touch; any other source rescans.
        This is the rescan API: the watcher and SIGHUP (`service/watch.py`) call it too.
        """
        async with self._rebuild_lock:
            current = self.catalog
            if seen_generation is not None and current.generation != seen_generation:
                return current  # someone rebuilt while we waited
            started = time.perf_counter()
            incremental = self._incremental
            if paths is None or incremental is None:
                scan = self.source.scan
                catalog = await anyio.to_thread.run_sync(lambda: self._screened(scan(current.generation + 1)))
            else:
                changed = list(paths)
                update = incremental.update
                catalog = await anyio.to_thread.run_sync(
                    lambda: self._screened(update(changed, current.generation + 1))
                )
            self.stats.index_seconds = time.perf_counter() - started
            self.stats.verified = self._restorable.verified if self._restorable is not None else True
            self.swap(catalog)
            logger.info("catalog rebuilt: %d skills, %d refused", len(catalog), len(catalog.refusals))
            return catalog

    async def _fresh(self, catalog: Catalog, skills: tuple[Skill, ...]) -> Catalog:
        """`catalog`, or a rebuilt one if any of `skills` changed at its source since it was indexed (a source
        that cannot tell cheaply is not asked: its catalog changes when it rebuilds)."""
        incremental = self._incremental
        if incremental is None:
            return catalog
        for skill in skills:
            if await anyio.to_thread.run_sync(incremental.changed, skill.uri):
                where = incremental.places_for(skill.uri)
                return await self.rebuild(seen_generation=catalog.generation, paths=where or None)
        return catalog

    # -- results -----------------------------------------------------------------------------------------------------

    def _cacheable(self, result: dict[str, Any], modern: bool, scope: Visibility | None) -> dict[str, Any]:
        if modern:
            result["ttlMs"] = self.options.ttl_ms
            # A scoped answer depends on who asked: a shared cache must never hand it to someone else.
            result["cacheScope"] = self.options.cache_scope if scope is None else "private"
        return result

    def list_skills(self, cursor: object, *, modern: bool, scope: Visibility | None = None) -> dict[str, Any]:
        catalog = self.view(self.catalog, scope)
        page = _paged(lambda c: catalog.skills_page(c, self.options.page_size), cursor)
        result: dict[str, Any] = {"skills": [s.to_entry() for s in page.items]}
        if page.next_cursor is not None:
            result["nextCursor"] = page.next_cursor
        return self._cacheable(result, modern, scope)

    async def get_skill(self, uri: object, *, modern: bool, scope: Visibility | None = None) -> dict[str, Any]:
        """The current entry: the skill's folder is re-checked, so an added or edited file shows at once."""
        canonical = _require_uri(uri, what="skill")
        current = self.catalog
        skill = self.view(current, scope).skill(canonical)
        if skill is not None:  # only a skill the caller sees is re-checked: a hidden one costs what a missing one does
            skill = self.view(await self._fresh(current, (skill,)), scope).skill(canonical)
        if skill is None:
            raise MCPError(INVALID_PARAMS, f"No skill is served at {_show(uri)}", {"uri": _show(uri)})
        return self._cacheable({"skill": skill.to_entry()}, modern, scope)

    def list_resources(self, cursor: object, *, modern: bool, scope: Visibility | None = None) -> dict[str, Any]:
        catalog = self.view(self.catalog, scope)
        page = _paged(lambda c: catalog.files_page(c, self.options.page_size), cursor)
        result: dict[str, Any] = {"resources": [file_resource(served, catalog) for served in page.items]}
        if page.next_cursor is not None:
            result["nextCursor"] = page.next_cursor
        return self._cacheable(result, modern, scope)

    async def read_directory(
        self, uri: object, cursor: object, *, modern: bool, scope: Visibility | None = None
    ) -> dict[str, Any]:
        """A live view of a directory: the enclosing skill's folder is re-checked first, as for skills/get.

        Files carry the Resource metadata resources/list gives them (`file_resource`); on 2026-07-28 the result
        carries ttlMs and cacheScope too (the spec does not ask for them here, but the TS SDK and the Inspector
        reject a result without them).
        """
        canonical = _require_uri(uri, what="directory")
        current = self.catalog
        catalog = self.view(await self._fresh(current, self.view(current, scope).skills_enclosing(canonical)), scope)
        if not catalog.is_directory(canonical):
            if catalog.file(canonical) is not None:
                raise MCPError(INVALID_PARAMS, f"{canonical} is not a directory resource", {"uri": canonical})
            raise MCPError(INVALID_PARAMS, f"No directory is served at {_show(uri)}", {"uri": _show(uri)})
        page = _paged(lambda c: catalog.children_page(canonical, c, self.options.page_size), cursor)
        result: dict[str, Any] = {"resources": [_child_resource(k, catalog) for k in page.items]}
        if page.next_cursor is not None:
            result["nextCursor"] = page.next_cursor
        return self._cacheable(result, modern, scope)

    def serves(self, uri: object) -> bool:
        """True if `uri` is a skill:// URI (served or not): the requests this service answers."""
        return isinstance(uri, str) and uri.startswith("skill:")

    async def read_resource(self, uri: object, *, modern: bool, scope: Visibility | None = None) -> dict[str, Any]:
        """The exact bytes of a served file, verified against the current manifest before they leave."""
        asked = uri if scope is None and isinstance(uri, str) else None
        if asked is not None and (cached := self.read_cache.get(asked, self.catalog)) is not None:
            return self._cacheable({"contents": [cached]}, modern, scope)  # keys are canonical: nothing to parse
        canonical = _require_uri(uri, what="resource")
        for _ in range(_READ_ATTEMPTS):
            catalog = self.catalog
            if scope is None and canonical != asked and (cached := self.read_cache.get(canonical, catalog)) is not None:
                return self._cacheable({"contents": [cached]}, modern, scope)
            asked = None  # after a rebuild: look again
            served = self.file(catalog, scope, canonical)
            if served is None:
                if self.view(catalog, scope).is_directory(canonical):
                    raise MCPError(
                        INVALID_PARAMS,
                        f"{canonical} is a directory; read it with resources/directory/read",
                        {"uri": canonical},
                    )
                raise MCPError(INVALID_PARAMS, f"No resource is served at {_show(uri)}", {"uri": _show(uri)})
            content = served.content
            if isinstance(content, GeneratedContent):
                return await _generated(canonical, served.file.mime_type, content, modern)
            if scope is not None and (cached := self.read_cache.get(canonical, catalog)) is not None:
                return self._cacheable({"contents": [cached]}, modern, scope)  # a file this caller sees
            size = served.file.size
            stamped = content if isinstance(content, StampedContent) else None
            read = content.read if stamped is None else stamped.read_stamped
            if size <= _INLINE_READ_BYTES:
                got = read(size)  # from the page cache, quicker than a hop to a worker thread
            else:
                got = await anyio.to_thread.run_sync(read, size)
            data, stamp = got if isinstance(got, tuple) else (got, None)
            if data is not None and len(data) == served.file.size and sha256_digest(data) == served.file.digest:
                contents = _contents(canonical, served.file.mime_type, data)
                if stamped is not None and catalog is self.catalog:
                    self.read_cache.put(catalog, stamped, stamp, size, contents)
                return self._cacheable({"contents": [contents]}, modern, scope)
            logger.info("%s changed at its source since it was indexed; rebuilding the catalog", canonical)
            self.stats.rehash_mismatches += 1
            incremental = self._incremental
            where = incremental.places_for(canonical) if incremental is not None else None
            await self.rebuild(seen_generation=catalog.generation, paths=where or None)
        raise MCPError(INTERNAL_ERROR, f"{canonical} keeps changing on disk; try again", {"uri": canonical})


def duplicate_name_warnings(catalog: Catalog) -> tuple[str, ...]:
    """One line for each name two or more of `catalog`'s skills share, naming their SKILL.md URIs: the rule's
    messages (`core.lint.duplicate_name_warnings`). The service logs these as skills change."""
    return tuple(w.message for w in lint.duplicate_name_warnings(catalog))


async def _generated(uri: str, mime_type: str, content: GeneratedContent, modern: bool) -> dict[str, Any]:
    """A generated file's bytes, produced now and capped at the per-skill total (Limits: a host "applies the
    total-size limit to what it actually retrieves"); -32603 saying why when they cannot be produced. They are
    fresh on each read, so a client is told not to keep them (ttlMs 0, private)."""
    try:
        data = await content.generate(MAX_TOTAL_BYTES)
    except GenerationError as err:
        raise MCPError(INTERNAL_ERROR, str(err), {"uri": uri}) from None
    result: dict[str, Any] = {"contents": [_contents(uri, mime_type, data)]}
    if modern:
        result |= {"ttlMs": 0, "cacheScope": "private"}
    return result


def file_resource(served: ServedFile, catalog: Listing) -> dict[str, Any]:
    """A served file's Resource metadata, alike in resources/list and resources/directory/read.

    Spec, Resource Metadata: for each SKILL.md, "name SHOULD be set from the name field of the SKILL.md YAML
    frontmatter" and "description SHOULD be set from the description field". Spec, Directory Resources: in a
    directory read "Files carry their ordinary Resource metadata".
    """
    f = served.file
    item: dict[str, Any] = {"uri": f.uri, "name": f.rel_path.rsplit("/", 1)[-1], "mimeType": f.mime_type}
    skill = catalog.skill(f.uri) if served.is_skill_md else None
    if skill is not None:
        item["name"] = skill.frontmatter["name"]
        item["description"] = skill.frontmatter["description"]
    if not isinstance(served.content, GeneratedContent):  # a generated file has no size until it is produced
        item["size"] = f.size
    return item


def _child_resource(child: DirectoryChild, catalog: Listing) -> dict[str, Any]:
    """A directory read's entry: a subdirectory as a directory resource, a file as `file_resource` gives it."""
    served = None if child.is_directory else catalog.file(child.uri)
    if served is None:
        return {"uri": child.uri, "name": child.name, "mimeType": child.mime_type}
    return file_resource(served, catalog)


def _contents(uri: str, mime_type: str, data: bytes) -> dict[str, Any]:
    """Text when the bytes are strict UTF-8 (JSON carries them unchanged), else a base64 blob."""
    try:
        return {"uri": uri, "mimeType": mime_type, "text": data.decode("utf-8", errors="strict")}
    except UnicodeDecodeError:
        return {"uri": uri, "mimeType": mime_type, "blob": base64.b64encode(data).decode("ascii")}


def _require_uri(uri: object, *, what: str) -> str:
    """The canonical form of a request's uri; -32602 naming the problem if it is missing or malformed."""
    if uri is None:
        raise MCPError(INVALID_PARAMS, f"params.uri is required: the URI of the {what} to read")
    if not isinstance(uri, str):
        raise MCPError(INVALID_PARAMS, f"params.uri must be a string, not {type(uri).__name__}")
    try:
        return canonical_uri(uri)
    except InvalidSkillUri as err:
        raise MCPError(
            INVALID_PARAMS, f"No {what} is served at {_show(uri)}: {err.reason}", {"uri": _show(uri)}
        ) from None


def _paged(fetch: Callable[[str | None], Any], cursor: object) -> Any:
    if cursor is not None and not isinstance(cursor, str):
        raise MCPError(INVALID_PARAMS, f"params.cursor must be a string, not {type(cursor).__name__}")
    try:
        return fetch(cursor)
    except InvalidCursor as err:
        raise MCPError(INVALID_PARAMS, str(err)) from None


def _show(uri: object) -> str:
    text = uri if isinstance(uri, str) else repr(uri)
    clean = text.encode("unicode_escape").decode("ascii")
    return clean if len(clean) <= 200 else clean[:200] + "..."
