"""`McpSource`: another MCP server's skills, verified and kept on disk, served as a source like any other (a gateway).

`skillwire serve vendor=mcp:https://tools.example/mcp` serves every skill that server lists under
`skill://vendor/...` (the composite puts the prefix in front), with the same files, bytes, digests, sizes and
frontmatter: a skill's files are exactly the entry's resources, each at its path under the skill's root, so the
relative references inside SKILL.md still hold. Each entry carries its provenance in `_meta` under
`PROVENANCE_KEY`: the upstream as shown, the upstream's own URI of the skill, and when its content was verified.

A scan refreshes (`fetch.refresh`: list, fetch what the cache lacks, verify every byte) and serves what verified;
each skill is all or nothing, and each refusal names the upstream and the rule. What a scan served is kept as the
upstream's state (`GatewayCache`), and that state is what is served when the upstream cannot be refreshed: down,
out of time, or a listing cut short (the log says which upstream is stale, since when, and why). A skill whose new
version cannot be read (not a mismatch: an error answer, a timeout) keeps its last verified version. A restart
serves the kept state at once (`restore`) and refreshes in the background; a first start with nothing kept waits
for the first refresh (bounded by `Settings.refresh_timeout_s`).

Rules of the skills themselves are the same as for every source (`core.skill_rules.build_skill`: names, limits,
frontmatter), so an upstream skill skillwire would not serve from a folder is not served through a gateway either.
An upstream URI of another scheme than `skill://` (`github://owner/repo/x/SKILL.md`) is served with the scheme as
its first segment (`skill://github/owner/repo/x/SKILL.md`).

    source = McpSource(parse_upstream("https://tools.example/mcp"), cache=GatewayCache("/var/cache/gateway"))
    catalog = source.scan()
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskStatus

from skillwire.core.catalog import Catalog, FileContent, Refusal
from skillwire.core.display import clip, terminal_safe
from skillwire.core.errors import SkillError
from skillwire.core.hosting.entry import EntryResource
from skillwire.core.manifest import Skill
from skillwire.core.skill_rules import SNIFF_BYTES, FileFacts, build_skill, looks_like_text, mime_type_given, refusal_of
from skillwire.core.uri import SKILL_FILE, normal_uri
from skillwire.sources.building import CatalogBuilder
from skillwire.sources.mcp.fetch import UNREADABLE_RULE, Failed, Refreshed, Settings, refresh
from skillwire.sources.mcp.follow import follow
from skillwire.sources.mcp.kept import (
    Kept,
    KeptState,
    identity,
    read_state,
    rel_paths,
    resources_of,
    skill_path,
    state_json,
    when,
)
from skillwire.sources.mcp.lock import LockFile
from skillwire.sources.mcp.pinning import follow_lock, pin
from skillwire.sources.mcp.store import GatewayCache
from skillwire.sources.mcp.upstream import Upstream
from skillwire.sources.port import (
    DEFAULT_PACE,
    Rebuild,
    RestorableSource,
    Staleness,
    StaleReportingSource,
    WatchableSource,
    WatchPace,
)

__all__ = ["PROVENANCE_KEY", "UNAVAILABLE_RULE", "CachedContent", "McpSource", "UpstreamHealth"]

logger = logging.getLogger(__name__)

PROVENANCE_KEY = "skillwire/upstream"
"""The `_meta` key of a gateway's entries: {"server", "uri", "verifiedAt"}. skillwire's own prefix (Security
Considerations: intermediaries annotate under a prefix of their own, never io.modelcontextprotocol.skills/)."""
UNAVAILABLE_RULE = "upstream-unavailable"
"""The upstream could not be refreshed (said once per scan, for the upstream), or a kept skill's files are no
longer all in the cache while it cannot give them again (said for the skill)."""
LOCKED_RULE = "upstream-locked-missing"
"""A locked version that the upstream no longer offers and the gateway cache no longer holds."""
PATH_RULE = "path-invalid"
"""An upstream URI whose segments do not decode to names (not UTF-8, or an encoded '/')."""

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class UpstreamHealth:
    """How an upstream's refreshes go (Unix times): the last that succeeded, the first of the failures since then
    (None: the last refresh succeeded), and why the last one failed."""

    refreshed_at: float | None
    failing_since: float | None
    reason: str | None

    @property
    def stale(self) -> bool:
        return self.failing_since is not None


@dataclass(frozen=True, slots=True)
class CachedContent:
    """A served file read back from the gateway cache, re-hashed on every read (None when it is no longer there)."""

    cache: GatewayCache
    digest: str
    size: int

    def read(self, limit: int) -> bytes | None:
        data = self.cache.read(self.digest, self.size)
        return None if data is None else data[: limit + 1]


class McpSource(RestorableSource, WatchableSource, StaleReportingSource):
    """The skills of one upstream MCP server (see the module docstring)."""

    def __init__(
        self,
        upstream: Upstream,
        *,
        cache: GatewayCache | None = None,
        settings: Settings | None = None,
        lock: LockFile | None = None,
    ):
        self.upstream = upstream
        self.lock = lock
        self.cache = cache if cache is not None else GatewayCache()
        self.settings = settings if settings is not None else Settings()
        self._lock = threading.Lock()
        self._state: KeptState | None = None
        self._verified = False
        self._failing_since: float | None = None
        self._reason: str | None = None
        self._built: dict[tuple[str, float], tuple[Skill | Refusal, dict[str, FileContent]]] = {}
        self._text: dict[str, bool] = {}  # digest -> whether its content looks like text (for a MIME type)
        self._ttl_ms: int | None = None  # the last listing's freshness hint: how often to poll without events

    @property
    def label(self) -> str:
        return f"mcp {self.upstream.shown}"

    @property
    def revision(self) -> str | None:
        """A fingerprint of the state served (the same on every gateway serving the same upstream state)."""
        state = self._state
        if state is None:
            return None
        text = "\n".join(sorted(identity(k.entry) for k in state.skills))
        return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    @property
    def verified(self) -> bool:
        """False while the catalog was only restored from disk and no refresh was tried since."""
        return self._verified

    @property
    def health(self) -> UpstreamHealth:
        state = self._state
        return UpstreamHealth(state.refreshed_at if state else None, self._failing_since, self._reason)

    def staleness(self) -> tuple[Staleness, ...]:
        """This upstream, when its last refresh failed: since the first failure in a row, and why."""
        since, reason = self._failing_since, self._reason
        return () if since is None else (Staleness(self.label, since, reason or "unknown"),)

    # -- the port ------------------------------------------------------------------------------------------------

    def restore(self, generation: int = 0) -> Catalog | None:
        """The state kept on disk, served without asking the upstream; None when none is kept."""
        with self._lock:
            state = self._state if self._state is not None else self._load()
            if state is None:
                return None
            self._state = state
            catalog, _ = self._catalog(state, (), generation)
            logger.info("%s: restored %d skills verified before", self.label, len(catalog))
            return catalog

    def scan(self, generation: int = 0) -> Catalog:
        """Refresh from the upstream and serve what verified; the last verified state when it cannot be refreshed."""
        with self._lock:
            started = time.time()
            outcome = _run(lambda: refresh(self.upstream, self.cache, self.settings, label=self.label))
            self._verified = True
            if isinstance(outcome, Failed):
                return self._stale(outcome.reason, started, generation)
            return self._refreshed(outcome, generation)

    async def watch(
        self,
        rebuild: Rebuild,
        *,
        pace: WatchPace = DEFAULT_PACE,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Follow the upstream (`follow.follow`): each change it announces, or every `ttlMs` when it announces none,
        is a rescan (a refresh). Followed from the start: the first refresh needs no wait for the connection."""
        task_status.started()

        async def again() -> None:
            await rebuild(None)

        interval = lambda: self.settings.poll_interval(self._ttl_ms)  # noqa: E731 - read anew after each refresh
        async with anyio.create_task_group() as tasks:
            if self.lock is not None:
                tasks.start_soon(follow_lock, self.lock, again)
            await follow(
                self.upstream, self.settings, again, interval=interval, label=self.label, checked=self._verified
            )

    # -- states --------------------------------------------------------------------------------------------------

    def _refreshed(self, outcome: Refreshed, generation: int) -> Catalog:
        now = time.time()
        before = self._state if self._state is not None else self._load()
        earlier = {normal_uri(k.entry.uri): k for k in before.skills} if before is not None else {}
        kept: list[Kept] = []
        for entry in outcome.verified:
            old = earlier.get(normal_uri(entry.uri))
            same = old is not None and identity(old.entry) == identity(entry)
            kept.append(Kept(entry, old.verified_at if old is not None and same else now))
        refusals = list(outcome.refusals)
        held: list[Kept] = []
        for entry, why in outcome.unreadable:
            old = earlier.get(normal_uri(entry.uri))
            if old is not None:
                logger.warning(
                    "%s: %s could not be read (%s); serving the version verified at %s",
                    self.label,
                    entry.uri,
                    why,
                    when(old.verified_at),
                )
                kept.append(old)
            else:
                refusals.append(
                    Refusal(self._where(entry.uri), UNREADABLE_RULE, f"{self.label}: {why}; the skill is not served")
                )
        if self.lock is not None:
            pinned = pin(self.lock, self.upstream.shown, self.label, kept, earlier)
            kept, held = pinned.served, pinned.held
            refusals += [Refusal(self._where(uri), LOCKED_RULE, f"{self.label}: {why}") for uri, why in pinned.missing]
        state = KeptState(tuple(kept), now)
        catalog, served = self._catalog(state, refusals, generation)
        state = KeptState(tuple(k for k in state.skills if normal_uri(k.entry.uri) in served), now)
        try:
            self.cache.save_state(self.upstream.key, state_json(state, self.upstream.shown, held))
            self.cache.evict()
        except OSError as err:  # what verified is served all the same; only a restart cannot start from it
            logger.error("%s: the verified state could not be kept in %s: %s", self.label, self.cache.root, err)
        if self._failing_since is not None:
            logger.warning("%s: refreshed again; it was stale since %s", self.label, when(self._failing_since))
        self._state, self._failing_since, self._reason = state, None, None
        self._ttl_ms = outcome.ttl_ms
        logger.info(
            "%s: %d skills verified (%d files, %d bytes fetched; the rest from the cache), %d refused",
            self.label,
            len(catalog),
            outcome.fetched,
            outcome.fetched_bytes,
            sum(1 for r in catalog.refusals if r.skill),
        )
        return catalog

    def _stale(self, reason: str, started: float, generation: int) -> Catalog:
        """The last verified state (from memory, else from disk), said to be stale; nothing when none is kept."""
        if self._failing_since is None:
            self._failing_since = started
        self._reason = reason
        state = self._state if self._state is not None else self._load()
        self._state = state
        if state is None:
            logger.warning("%s cannot be refreshed (%s) and no verified state of it is kept", self.label, reason)
            said = f"cannot be refreshed ({reason}); nothing of it is verified yet, so nothing is served"
            return Catalog((), {}, (Refusal(self.label, UNAVAILABLE_RULE, said, skill=False),), generation)
        self.cache.touch_state(self.upstream.key)
        logger.warning(
            "%s is stale since %s: %s; serving its last verified state (%d skills, refreshed at %s)",
            self.label,
            when(self._failing_since),
            reason,
            len(state.skills),
            when(state.refreshed_at),
        )
        said = (
            f"cannot be refreshed ({reason}); serving its last verified state, refreshed at {when(state.refreshed_at)}"
        )
        catalog, _ = self._catalog(state, (Refusal(self.label, UNAVAILABLE_RULE, said, skill=False),), generation)
        return catalog

    def _load(self) -> KeptState | None:
        """The state kept on disk for this upstream, its entries checked again (`parse_entry`); None if none."""
        raw = self.cache.load_state(self.upstream.key)
        return None if raw is None else read_state(raw, self.label)

    # -- building ------------------------------------------------------------------------------------------------

    def _catalog(self, state: KeptState, refusals: Iterable[Refusal], generation: int) -> tuple[Catalog, set[str]]:
        """The catalog of `state`'s skills (and `refusals`), and the normal URIs of the upstream skills served."""
        builder = CatalogBuilder()
        builder.refuse(*refusals)
        served: set[str] = set()
        built: dict[tuple[str, float], tuple[Skill | Refusal, dict[str, FileContent]]] = {}
        for kept in state.skills:
            where = self._where(kept.entry.uri)
            missing = next((r for r in resources_of(kept.entry) if not self.cache.has(r.digest, r.size)), None)
            if missing is not None:
                said = f"{missing.uri} is no longer in the gateway cache and the upstream did not give it again"
                builder.refuse(Refusal(where, UNAVAILABLE_RULE, said))
                continue
            key = (identity(kept.entry), kept.verified_at)
            made = self._built.get(key) or self._build(kept, where)
            built[key] = made
            skill, contents = made
            if isinstance(skill, Refusal):
                builder.refuse(skill)
            elif builder.add(skill, contents, where=where):
                served.add(normal_uri(kept.entry.uri))
        self._built = built
        digests = {r.digest for kept in state.skills for r in resources_of(kept.entry)}
        self._text = {d: text for d, text in self._text.items() if d in digests}
        return builder.build(generation), served

    def _build(self, kept: Kept, where: str) -> tuple[Skill | Refusal, dict[str, FileContent]]:
        """The skill one verified entry makes by the rules every source applies, its provenance in `_meta`."""
        entry = kept.entry
        path = skill_path(entry.uri)
        rels = rel_paths(entry)
        if isinstance(path, str) or rels is None:
            why = path if isinstance(path, str) else "a file's uri does not decode to a path of names"
            return Refusal(where, PATH_RULE, f"{self.label}: {why}; not served"), {}
        resources = resources_of(entry)
        facts = [
            FileFacts(rel, r.size, r.digest, mime_type_given(rel, partial(self._looks_like_text, r)))
            for rel, r in zip(rels, resources, strict=True)
        ]
        record = entry.skill_md
        assert record is not None
        data = self.cache.read(record.digest, record.size)
        skill_md: bytes | SkillError = (
            data if data is not None else SkillError("cannot be read", rule="unreadable", path=SKILL_FILE)
        )
        try:
            skill = build_skill(path, facts, skill_md)
        except SkillError as err:
            refusal = refusal_of(err, entry.uri[: -len(SKILL_FILE)].rstrip("/"))
            return replace(refusal, path=f"{self.label}: {refusal.path}"), {}
        origin = {"server": self.upstream.shown, "uri": entry.uri, "verifiedAt": when(kept.verified_at)}
        skill = replace(skill, meta={PROVENANCE_KEY: origin})
        by_rel = dict(zip(rels, resources, strict=True))
        contents: dict[str, FileContent] = {}
        for f in skill.files:
            r = by_rel[f.rel_path]
            contents[f.uri] = CachedContent(self.cache, r.digest, r.size)
        return skill, contents

    def _where(self, uri: str) -> str:
        """How a refusal names an upstream skill: the upstream, and its URI there (made safe to print)."""
        return f"{self.label}: {clip(terminal_safe(uri), 300)}"

    def _looks_like_text(self, resource: EntryResource) -> bool:
        found = self._text.get(resource.digest)
        if found is None:
            data = self.cache.read(resource.digest, resource.size)
            found = self._text[resource.digest] = data is not None and looks_like_text(data[:SNIFF_BYTES])
        return found


def _run(make: Callable[[], Awaitable[_T]]) -> _T:
    """Run the coroutine `make` gives on an event loop of its own, on a thread of its own: `scan` is called from a
    worker thread or from a program's event loop thread, and neither may run the upstream's connection."""
    box: dict[str, Any] = {}

    def main() -> None:
        try:
            box["value"] = anyio.run(make)
        except BaseException as err:  # handed to the caller's thread, raised there
            box["error"] = err

    worker = threading.Thread(target=main, name="skillwire-mcp-refresh", daemon=True)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    value: _T = box["value"]
    return value
