"""One refresh of an upstream: connect, list every skill, fetch what the cache lacks, and verify it all.

The host's rules, applied by a gateway: every entry is checked (`parse_entry`, in `SkillsClient.list_entries`), every
byte fetched is checked against the entry's size and digest before it is kept (`verify_bytes`), and each SKILL.md's
frontmatter against the entry's (`verify_frontmatter`). Content already in the cache under a listed digest is not
fetched again (a digest names its bytes). Everything is prefetched at refresh time, so a read never waits on the
upstream and an upstream that goes away takes nothing with it.

Time and memory are bounded: the whole refresh by `Settings.refresh_timeout_s`, each request by `request_timeout_s`,
each answer and the listing by the client's `ClientLimits` (a read may take only what its entry's size allows), and
at most `concurrent_reads` reads are in flight, each file written to disk and dropped once verified.

    outcome = await refresh(upstream, cache, Settings())
    if isinstance(outcome, Failed): ...          # nothing usable came back: keep serving the last state
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio
import anyio.to_thread

from skillwire.client.session import SkillsClient
from skillwire.core.catalog import Refusal
from skillwire.core.display import clip, terminal_safe
from skillwire.core.errors import InvalidEntry, SkillError, VerificationError
from skillwire.core.hosting.entry import EntryResource, SkillEntry
from skillwire.core.hosting.limits import DEFAULT_LIMITS, ClientLimits
from skillwire.core.hosting.verify import verify_bytes, verify_frontmatter
from skillwire.core.manifest import check_limits
from skillwire.sources.mcp.store import GatewayCache
from skillwire.sources.mcp.upstream import Upstream

__all__ = [
    "CACHE_FULL_RULE",
    "DYNAMIC_RULE",
    "INVALID_RULE",
    "MISMATCH_RULE",
    "UNREADABLE_RULE",
    "Failed",
    "Refreshed",
    "Settings",
    "refresh",
]

MISMATCH_RULE = "upstream-mismatch"
"""A byte the upstream served does not match its own manifest (size, digest, or SKILL.md's frontmatter)."""
UNREADABLE_RULE = "upstream-unreadable"
"""A file the upstream lists could not be read from it (an error answer, a timeout, a dropped connection)."""
INVALID_RULE = "upstream-entry-invalid"
"""An entry the upstream listed breaks the entry rules (`parse_entry`)."""
DYNAMIC_RULE = "upstream-dynamic"
"""A dynamic skill: no manifest to verify its bytes against, so a gateway cannot serve it."""
CACHE_FULL_RULE = "gateway-cache-full"
"""The gateway cache's byte cap leaves no room for the skill's files."""

_SHOWN = 300  # characters of an upstream's own text (an error message, a URI) shown in a refusal


@dataclass(frozen=True, slots=True)
class Settings:
    """How long and how hard one refresh may work: seconds for each request and for the whole refresh, reads in
    flight at once, and the caps on what the upstream may send (`ClientLimits`)."""

    request_timeout_s: float = 30.0
    refresh_timeout_s: float = 600.0
    concurrent_reads: int = 8
    limits: ClientLimits = DEFAULT_LIMITS
    poll_s: float = 60.0
    """How often an upstream that sends no change events is refreshed when its listing gives no `ttlMs`."""
    poll_min_s: float = 5.0
    poll_max_s: float = 3600.0
    """The bounds a listing's `ttlMs` is held to as a polling interval (and a reconnect's back-off)."""
    event_min_s: float = 1.0
    """The least time between two refreshes asked for by change events: events in between are one refresh."""

    def __post_init__(self) -> None:
        if not self.request_timeout_s > 0 or not self.refresh_timeout_s > 0:
            raise ValueError("request_timeout_s and refresh_timeout_s must be positive")
        if not 0 < self.poll_min_s <= self.poll_max_s or not self.poll_s > 0 or self.event_min_s < 0:
            raise ValueError("polling needs 0 < poll_min_s <= poll_max_s, poll_s > 0 and event_min_s >= 0")
        if self.concurrent_reads < 1:
            raise ValueError(f"concurrent_reads must be at least 1, not {self.concurrent_reads}")

    def poll_interval(self, ttl_ms: int | None) -> float:
        """Seconds until the next refresh of an upstream that does not say when it changes: its `ttlMs`, bounded."""
        wanted = self.poll_s if ttl_ms is None else ttl_ms / 1000
        return min(max(wanted, self.poll_min_s), self.poll_max_s)


@dataclass(frozen=True, slots=True)
class Failed:
    """The refresh gave nothing usable (no connection, no complete listing, out of time): `reason`, for people."""

    reason: str


@dataclass(frozen=True, slots=True)
class Refreshed:
    """What one refresh found.

    `verified`: entries whose every file is in the cache, verified, SKILL.md's frontmatter equal to the entry's;
    `unreadable`: entries with a file that could not be read (not a mismatch), and why; `refusals`: the rest,
    each naming the upstream and the rule.
    """

    verified: tuple[SkillEntry, ...]
    unreadable: tuple[tuple[SkillEntry, str], ...]
    refusals: tuple[Refusal, ...]
    fetched: int = 0
    fetched_bytes: int = 0
    ttl_ms: int | None = None


@dataclass(frozen=True, slots=True)
class _Problem:
    """Why a skill cannot be served from this refresh: the rule, and the reason naming the file."""

    rule: str
    reason: str


@dataclass(slots=True)
class _Fetch:
    """The fetches of one refresh: what failed, by digest, and what was kept."""

    failed: dict[str, _Problem] = field(default_factory=dict)
    count: int = 0
    size: int = 0


async def refresh(upstream: Upstream, cache: GatewayCache, settings: Settings, *, label: str) -> Refreshed | Failed:
    """List and verify every skill of `upstream` now (see the module docstring); `label` names it in refusals."""
    try:
        with anyio.fail_after(settings.refresh_timeout_s):
            async with SkillsClient.connect(
                upstream.target,
                read_timeout_seconds=settings.request_timeout_s,
                limits=settings.limits,
                auth=upstream.connection_auth(),
            ) as client:
                return await _refresh(client, cache, settings, label)
    except TimeoutError:
        return Failed(f"no complete answer within {settings.refresh_timeout_s:g} s")
    except Exception as err:  # no connection, no handshake, no listing: whatever it was, nothing came back
        return Failed(problem_of(err))


async def _refresh(client: SkillsClient, cache: GatewayCache, settings: Settings, label: str) -> Refreshed | Failed:
    listing = await client.list_entries()
    if not listing.complete:
        return Failed(f"its skills/list stopped early: {listing.cutoff}")
    refusals = [_invalid(problem, label) for problem in listing.problems]
    wanted: list[SkillEntry] = []
    for entry in listing.entries:
        refusal = _refused_at_sight(entry, label)
        if refusal is None:
            wanted.append(entry)
        else:
            refusals.append(refusal)
    needed: dict[str, EntryResource] = {}
    for entry in wanted:
        for resource in _resources(entry):
            if resource.digest not in needed:
                needed[resource.digest] = resource
    missing = [r for r in needed.values() if not cache.has(r.digest, r.size)]
    fetch = _Fetch()
    limiter = anyio.CapacityLimiter(settings.concurrent_reads)
    with cache.pinned(needed):
        async with anyio.create_task_group() as tasks:
            for resource in missing:
                tasks.start_soon(_fetch_one, client, cache, resource, limiter, fetch)
    verified: list[SkillEntry] = []
    unreadable: list[tuple[SkillEntry, str]] = []
    for entry in wanted:
        bad = next((fetch.failed[r.digest] for r in _resources(entry) if r.digest in fetch.failed), None)
        if bad is None:
            bad = _frontmatter_problem(entry, cache)
        if bad is None:
            verified.append(entry)
        elif bad.rule == UNREADABLE_RULE:
            unreadable.append((entry, bad.reason))
        else:
            refusals.append(_refusal(entry, label, bad.rule, _said(bad, label)))
    return Refreshed(tuple(verified), tuple(unreadable), tuple(refusals), fetch.count, fetch.size, listing.ttl_ms)


async def _fetch_one(
    client: SkillsClient, cache: GatewayCache, resource: EntryResource, limiter: anyio.CapacityLimiter, fetch: _Fetch
) -> None:
    """Read one file, verify it against its record and keep it; a failure is recorded by digest, never raised."""
    async with limiter:
        try:
            data = await client.read(resource.uri, size=resource.size)
            verify_bytes(resource, data)
        except VerificationError as err:  # a wrong size or digest, or an answer past the size listed
            fetch.failed[resource.digest] = _Problem(MISMATCH_RULE, problem_of(err))
            return
        except Exception as err:  # an error answer, a timeout, the connection gone
            fetch.failed[resource.digest] = _Problem(UNREADABLE_RULE, _about(resource.uri, err))
            return
        kept = await anyio.to_thread.run_sync(cache.put, resource.digest, data)
        if not kept:
            fetch.failed[resource.digest] = _Problem(
                CACHE_FULL_RULE,
                f"{_shown(resource.uri)} ({resource.size:,} bytes) does not fit under the cache's cap of "
                f"{cache.max_bytes:,} bytes",
            )
            return
        fetch.count += 1
        fetch.size += len(data)


def _frontmatter_problem(entry: SkillEntry, cache: GatewayCache) -> _Problem | None:
    """Why the entry's frontmatter is not its SKILL.md's, or None when they are equal."""
    record = entry.skill_md
    assert record is not None  # parse_entry: a listed entry lists its SKILL.md
    data = cache.read(record.digest, record.size)
    if data is None:
        return _Problem(UNREADABLE_RULE, f"{_shown(record.uri)} is no longer in the gateway cache")
    try:
        verify_frontmatter(entry, data)
    except VerificationError as err:
        return _Problem(MISMATCH_RULE, problem_of(err))
    return None


def _refused_at_sight(entry: SkillEntry, label: str) -> Refusal | None:
    """The refusal of an entry that is not fetched at all (dynamic, or over the per-skill limits), or None."""
    if entry.is_dynamic:
        return _refusal(
            entry,
            label,
            DYNAMIC_RULE,
            f"{label} lists its resources as 'dynamic': no manifest to verify them against, and a gateway serves "
            "verified content only",
        )
    try:
        check_limits((r.size for r in _resources(entry)), path=entry.uri)
    except SkillError as err:
        return Refusal(_where(entry, label), err.rule, f"{label} lists it, but {err.message}")
    return None


def _resources(entry: SkillEntry) -> Sequence[EntryResource]:
    resources = entry.resources
    return () if isinstance(resources, str) else resources


def _invalid(problem: InvalidEntry, label: str) -> Refusal:
    shown = _shown(problem.uri) if problem.uri else "an entry without a usable uri"
    return Refusal(f"{label}: {shown}", INVALID_RULE, f"{label} lists an invalid entry: {_shown(problem.reason)}")


def _refusal(entry: SkillEntry, label: str, rule: str, said: str) -> Refusal:
    return Refusal(_where(entry, label), rule, f"{said}; the skill is not served")


def _said(problem: _Problem, label: str) -> str:
    """A fetch problem as a sentence naming the upstream."""
    if problem.rule == MISMATCH_RULE:
        return f"{label} served bytes its own manifest does not list ({problem.reason})"
    if problem.rule == CACHE_FULL_RULE:
        return problem.reason
    return f"{label}: {problem.reason}"


def _about(uri: str, err: BaseException) -> str:
    """What went wrong reading `uri`, naming it once."""
    text = problem_of(err)
    return text if uri[:_SHOWN] in text else f"{_shown(uri)}: {text}"


def _where(entry: SkillEntry, label: str) -> str:
    return f"{label}: {_shown(entry.uri)}"


def _shown(text: str) -> str:
    """An upstream's text, safe on a terminal and cut short."""
    return clip(terminal_safe(text), _SHOWN)


def problem_of(err: BaseException) -> str:
    """One line saying what went wrong: the exception (unwrapped from a task group's group of one) and its text."""
    while isinstance(err, BaseExceptionGroup) and len(err.exceptions) == 1:
        err = err.exceptions[0]
    text = str(err) or type(err).__name__
    if not isinstance(err, VerificationError | InvalidEntry) and type(err).__module__.split(".")[0] != "skillwire":
        text = f"{type(err).__name__}: {text}"
    return _shown(text)
