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
import json
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeVar
from urllib.parse import unquote_to_bytes

import anyio
from anyio.abc import TaskStatus

from skillwire.core.catalog import Catalog, FileContent, Refusal
from skillwire.core.display import clip, terminal_safe
from skillwire.core.errors import InvalidEntry, SkillError
from skillwire.core.hosting.entry import EntryResource, SkillEntry, parse_entry
from skillwire.core.manifest import Skill
from skillwire.core.skill_rules import SNIFF_BYTES, FileFacts, build_skill, looks_like_text, mime_type_given, refusal_of
from skillwire.core.uri import SKILL_FILE, normal_uri
from skillwire.sources.building import CatalogBuilder
from skillwire.sources.mcp.fetch import UNREADABLE_RULE, Failed, Refreshed, Settings, refresh
from skillwire.sources.mcp.follow import follow
from skillwire.sources.mcp.lock import LockedFile, LockedSkill, LockFile, PinnedState, changes_between
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
_STATE_FORMAT = "skillwire-gateway-state"
_STATE_VERSION = 1

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
class _Kept:
    """A verified entry, and when its content was first verified against the upstream."""

    entry: SkillEntry
    verified_at: float


@dataclass(frozen=True, slots=True)
class _State:
    """An upstream's last verified state: the skills served from it, and when the refresh that made it ended."""

    skills: tuple[_Kept, ...]
    refreshed_at: float


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
        self._state: _State | None = None
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
        text = "\n".join(sorted(_identity(k.entry) for k in state.skills))
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
                tasks.start_soon(_follow_lock, self.lock, again)
            await follow(
                self.upstream, self.settings, again, interval=interval, label=self.label, checked=self._verified
            )

    # -- states --------------------------------------------------------------------------------------------------

    def _refreshed(self, outcome: Refreshed, generation: int) -> Catalog:
        now = time.time()
        before = self._state if self._state is not None else self._load()
        earlier = {normal_uri(k.entry.uri): k for k in before.skills} if before is not None else {}
        kept: list[_Kept] = []
        for entry in outcome.verified:
            old = earlier.get(normal_uri(entry.uri))
            same = old is not None and _identity(old.entry) == _identity(entry)
            kept.append(_Kept(entry, old.verified_at if old is not None and same else now))
        refusals = list(outcome.refusals)
        held: list[_Kept] = []
        for entry, why in outcome.unreadable:
            old = earlier.get(normal_uri(entry.uri))
            if old is not None:
                logger.warning(
                    "%s: %s could not be read (%s); serving the version verified at %s",
                    self.label,
                    entry.uri,
                    why,
                    _when(old.verified_at),
                )
                kept.append(old)
            else:
                refusals.append(
                    Refusal(self._where(entry.uri), UNREADABLE_RULE, f"{self.label}: {why}; the skill is not served")
                )
        if self.lock is not None:
            kept, held, missing = self._pinned(kept, earlier)
            refusals += missing
        state = _State(tuple(kept), now)
        catalog, served = self._catalog(state, refusals, generation)
        state = _State(tuple(k for k in state.skills if normal_uri(k.entry.uri) in served), now)
        try:
            self.cache.save_state(self.upstream.key, _state_json(state, self.upstream.shown, held))
            self.cache.evict()
        except OSError as err:  # what verified is served all the same; only a restart cannot start from it
            logger.error("%s: the verified state could not be kept in %s: %s", self.label, self.cache.root, err)
        if self._failing_since is not None:
            logger.warning("%s: refreshed again; it was stale since %s", self.label, _when(self._failing_since))
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

    def _pinned(self, kept: list[_Kept], earlier: dict[str, _Kept]) -> tuple[list[_Kept], list[_Kept], list[Refusal]]:
        """With a lock: the locked versions to serve, the upstream's other versions held back (kept in the cache
        for `skillwire lock accept`), and refusals of locked versions that are nowhere any more. An upstream the
        lock does not pin yet is pinned to what verified now."""
        assert self.lock is not None
        shown = self.upstream.shown
        now = {normal_uri(k.entry.uri): k for k in kept}
        now_locked = {uri: _locked(shown, k.entry) for uri, k in now.items()}
        with self.lock.guard:
            pinned = self.lock.load() or PinnedState(frozenset(), {})
            others = [p for p in self.lock.load_pending() if p.skill.upstream != shown]
            if shown not in pinned.upstreams:
                skills = {**pinned.skills, **{s.key: s for s in now_locked.values()}}
                self.lock.save(PinnedState(pinned.upstreams | {shown}, skills))
                self.lock.save_pending(others)
                logger.warning("%s: pinned %d skills in %s", self.label, len(now_locked), self.lock.path)
                return kept, [], []
            locked = pinned.of(shown)
            changes = changes_between(locked, now_locked)
            self.lock.save_pending([*others, *changes])
        served: list[_Kept] = []
        missing: list[Refusal] = []
        for uri, record in sorted(locked.items()):
            current, old = now.get(uri), earlier.get(uri)
            if current is not None and sorted(now_locked[uri].files) == sorted(record.files):
                served.append(current)
            elif old is not None and sorted(_locked(shown, old.entry).files) == sorted(record.files):
                if current is None:
                    logger.warning(
                        "%s: %s is locked but no longer offered upstream; serving the locked version from the "
                        "gateway cache",
                        self.label,
                        record.uri,
                    )
                served.append(old)
            else:
                said = (
                    f"{self.label}: the locked version of {clip(terminal_safe(record.uri), 200)} is neither upstream "
                    "nor in the gateway cache; not served"
                )
                missing.append(Refusal(self._where(record.uri), LOCKED_RULE, said))
        if changes:
            logger.warning(
                "%s: %d upstream changes held by the lock %s (see skillwire lock show)",
                self.label,
                len(changes),
                self.lock.path,
            )
        held = [now[normal_uri(p.skill.uri)] for p in changes if p.change != "removed"]
        return served, held, missing

    def _stale(self, reason: str, started: float, generation: int) -> Catalog:
        """The last verified state (from memory, else from disk), said to be stale; nothing when none is kept."""
        if self._failing_since is None:
            self._failing_since = started
        self._reason = reason
        state = self._state if self._state is not None else self._load()
        self._state = state
        if state is None:
            logger.warning("%s cannot be refreshed (%s) and no verified state of it is kept", self.label, reason)
            said = f"{self.label} cannot be refreshed ({reason}); nothing of it is verified yet, so nothing is served"
            return Catalog((), {}, (Refusal(self.label, UNAVAILABLE_RULE, said, skill=False),), generation)
        self.cache.touch_state(self.upstream.key)
        logger.warning(
            "%s is stale since %s: %s; serving its last verified state (%d skills, refreshed at %s)",
            self.label,
            _when(self._failing_since),
            reason,
            len(state.skills),
            _when(state.refreshed_at),
        )
        said = (
            f"{self.label} cannot be refreshed ({reason}); serving its last verified state, refreshed at "
            f"{_when(state.refreshed_at)}"
        )
        catalog, _ = self._catalog(state, (Refusal(self.label, UNAVAILABLE_RULE, said, skill=False),), generation)
        return catalog

    def _load(self) -> _State | None:
        """The state kept on disk for this upstream, its entries checked again (`parse_entry`); None if none."""
        raw = self.cache.load_state(self.upstream.key)
        if raw is None:
            return None
        if raw.get("format") != _STATE_FORMAT or raw.get("version") != _STATE_VERSION:
            logger.warning("%s: the kept state is not one this version reads; ignored", self.label)
            return None
        kept = raw.get("skills")
        if not isinstance(kept, list):
            logger.warning("%s: the kept state lists no skills; ignored", self.label)
            return None
        skills: list[_Kept] = []
        for item in kept:
            try:
                entry = parse_entry(item.get("entry") if isinstance(item, dict) else None)
            except InvalidEntry as err:
                logger.warning("%s: a kept entry is not valid (%s); left out", self.label, err)
                continue
            at = item.get("verifiedAt")
            skills.append(_Kept(entry, float(at) if isinstance(at, int | float) else 0.0))
        at = raw.get("refreshedAt")
        return _State(tuple(skills), float(at) if isinstance(at, int | float) else 0.0)

    # -- building ------------------------------------------------------------------------------------------------

    def _catalog(self, state: _State, refusals: Iterable[Refusal], generation: int) -> tuple[Catalog, set[str]]:
        """The catalog of `state`'s skills (and `refusals`), and the normal URIs of the upstream skills served."""
        builder = CatalogBuilder()
        builder.refuse(*refusals)
        served: set[str] = set()
        built: dict[tuple[str, float], tuple[Skill | Refusal, dict[str, FileContent]]] = {}
        for kept in state.skills:
            where = self._where(kept.entry.uri)
            missing = next((r for r in _resources(kept.entry) if not self.cache.has(r.digest, r.size)), None)
            if missing is not None:
                said = (
                    f"{self.label}: {missing.uri} is no longer in the gateway cache and the upstream did not give "
                    "it again; not served"
                )
                builder.refuse(Refusal(where, UNAVAILABLE_RULE, said))
                continue
            key = (_identity(kept.entry), kept.verified_at)
            made = self._built.get(key) or self._build(kept, where)
            built[key] = made
            skill, contents = made
            if isinstance(skill, Refusal):
                builder.refuse(skill)
            elif builder.add(skill, contents, where=where):
                served.add(normal_uri(kept.entry.uri))
        self._built = built
        digests = {r.digest for kept in state.skills for r in _resources(kept.entry)}
        self._text = {d: text for d, text in self._text.items() if d in digests}
        return builder.build(generation), served

    def _build(self, kept: _Kept, where: str) -> tuple[Skill | Refusal, dict[str, FileContent]]:
        """The skill one verified entry makes by the rules every source applies, its provenance in `_meta`."""
        entry = kept.entry
        path = _skill_path(entry.uri)
        rels = _rel_paths(entry)
        if isinstance(path, str) or rels is None:
            why = path if isinstance(path, str) else "a file's uri does not decode to a path of names"
            return Refusal(where, PATH_RULE, f"{self.label}: {why}; not served"), {}
        resources = _resources(entry)
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
        origin = {"server": self.upstream.shown, "uri": entry.uri, "verifiedAt": _when(kept.verified_at)}
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


def _resources(entry: SkillEntry) -> tuple[EntryResource, ...]:
    resources = entry.resources
    return () if isinstance(resources, str) else resources


def _identity(entry: SkillEntry) -> str:
    """The entry as canonical JSON: equal for the same uri, frontmatter and manifest."""
    return json.dumps(entry.to_wire(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _decoded(segment: str) -> str | None:
    """A URI path segment decoded (UTF-8 percent-encoding); None when it is not UTF-8 or holds a '/'."""
    try:
        name = unquote_to_bytes(segment).decode("utf-8") if "%" in segment else segment
    except UnicodeDecodeError:
        return None
    return None if "/" in name else name


def _skill_path(uri: str) -> tuple[str, ...] | str:
    """The skill path an upstream skill is served at (see the module docstring), or why there is none."""
    scheme, _, rest = uri.partition("://")
    names = [_decoded(s) for s in rest.split("/")[:-1]]
    if any(n is None for n in names):
        return f"{uri[:300]} has a segment that is not UTF-8 or holds an encoded '/'"
    path = tuple(n for n in names if n is not None)
    return path if scheme == "skill" else (scheme, *path)


def _rel_paths(entry: SkillEntry) -> list[str] | None:
    """Each resource's path inside the skill, decoded, in the entry's order; None when one does not decode."""
    root = normal_uri(entry.uri[: -len(SKILL_FILE)])
    rels: list[str] = []
    for r in _resources(entry):
        names = [_decoded(s) for s in normal_uri(r.uri)[len(root) :].split("/")]
        if any(n is None for n in names):
            return None
        rels.append("/".join(n for n in names if n is not None))
    return rels


def _state_json(state: _State, shown: str, held: Iterable[_Kept] = ()) -> dict[str, Any]:
    """The state kept on disk; `held`: versions a lock holds back (listed so eviction keeps their content)."""
    return {
        "format": _STATE_FORMAT,
        "version": _STATE_VERSION,
        "upstream": shown,
        "refreshedAt": state.refreshed_at,
        "skills": [{"entry": k.entry.to_wire(), "verifiedAt": k.verified_at} for k in state.skills],
        "pending": [{"entry": k.entry.to_wire(), "verifiedAt": k.verified_at} for k in held],
    }


def _locked(shown: str, entry: SkillEntry) -> LockedSkill:
    """An entry as a lock records it: each file's path inside the skill (its URI when it does not decode)."""
    resources = _resources(entry)
    rels = _rel_paths(entry) or [r.uri for r in resources]
    files = tuple(LockedFile(p, r.digest, r.size) for p, r in zip(rels, resources, strict=True))
    return LockedSkill(shown, entry.uri, files)


async def _follow_lock(lock: LockFile, rebuild: Callable[[], Awaitable[None]]) -> None:
    """Rescan when the lock file changes (`skillwire lock accept`): a stat a second, nothing read until then."""
    seen = lock.stamp()
    while True:
        await anyio.sleep(1.0)
        stamp = lock.stamp()
        if stamp != seen:
            seen = stamp
            await rebuild()


def _when(at: float) -> str:
    """A Unix time as people and JSON read it: ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


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
