"""The port every skill source plugs into: what a source is, and the abilities it may add.

A source turns skills kept somewhere (a folder, a git commit, installed packages, memory) into an immutable
`Catalog`: the skills it serves and what it refused, each served file carrying a `FileContent` that reads its
bytes back. The server (`SkillService`) knows sources only through these Protocols; it does no I/O of its own.
Every source builds skills with the same rules (the shared builder, `sources.building`, over `core.skill_rules`),
so the same files give the same skills and refusals wherever they come from.

Optional abilities are Protocols of their own, declared by the sources that have them (a class lists them as bases)
and looked up once with `isinstance`:

- `IncrementalSource`: knows when a skill changed and re-indexes only what a change touched (a folder);
- `WatchableSource`: tells the server when to rebuild (a folder watcher; a git branch being followed);
- `RestorableSource`: starts from a snapshot without reading everything again (a digest cache).

    source = MemorySource({"pdf/SKILL.md": b"---\\nname: pdf\\ndescription: PDFs\\n---\\n"})
    catalog = source.scan()
    catalog.file("skill://pdf/SKILL.md").content.read(limit=1 << 20)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from anyio.abc import TaskStatus

from skillwire.core.catalog import Catalog, FileContent, Refusal, ServedFile

__all__ = [
    "DEFAULT_DEBOUNCE_MS",
    "DEFAULT_PACE",
    "DEFAULT_STEP_MS",
    "Catalog",
    "FileContent",
    "IncrementalSource",
    "Rebuild",
    "Refusal",
    "RestorableSource",
    "ServedFile",
    "SkillSource",
    "SourceOpener",
    "SourceOptions",
    "StaleReportingSource",
    "Staleness",
    "WatchPace",
    "WatchableSource",
]


class SkillSource(Protocol):
    """Anything that produces catalog snapshots of skills.

    `label`: the source as a person names it in messages ("folder skills/", "git repo@1a2b3c4"), never holding a
    secret. `revision`: what the current catalog was built from, if the source has such a thing (a commit id), for
    health checks; None otherwise. `scan` may block (it runs on a worker thread) and never raises for bad skills:
    it refuses them in the catalog.
    """

    @property
    def label(self) -> str: ...

    @property
    def revision(self) -> str | None: ...

    def scan(self, generation: int = 0) -> Catalog:
        """Index everything now and return the snapshot, numbered `generation`."""
        ...


@runtime_checkable
class IncrementalSource(SkillSource, Protocol):
    """A source that can tell a changed skill cheaply and re-index only what changed.

    `places` are the source's own words for where a change happened (for a folder: file and folder paths); the
    server never looks inside them, it only hands back what `places_for` or a `WatchableSource` gave it.
    """

    def changed(self, skill_uri: str) -> bool:
        """True if the skill at `skill_uri` differs from what the last index saw (cheap: reads no content)."""
        ...

    def update(self, places: Iterable[str], generation: int) -> Catalog:
        """A catalog with the changes at `places` applied, re-indexing only what they touch; content at a place
        named is read again whatever the source remembers of it."""
        ...

    def places_for(self, uri: str) -> Sequence[str]:
        """Where to look again when the file at `uri` was read with bytes other than indexed, or the skill whose
        SKILL.md is at `uri` changed (empty: nothing this source serves)."""
        ...


DEFAULT_DEBOUNCE_MS = 1_600
"""Longest a burst of changes is gathered before one rebuild."""
DEFAULT_STEP_MS = 50
"""A burst ends after this long without a new change."""


@dataclass(frozen=True, slots=True)
class WatchPace:
    """How changes are gathered into rebuilds: a burst (changes closer together than `step_ms`, for at most
    `debounce_ms`) is one rebuild. A source that polls may poll every `step_ms`."""

    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    step_ms: int = DEFAULT_STEP_MS

    def __post_init__(self) -> None:
        if not 0 < self.step_ms <= self.debounce_ms:
            raise ValueError(f"need 0 < step_ms <= debounce_ms, not {self.step_ms} and {self.debounce_ms}")


DEFAULT_PACE = WatchPace()


Rebuild = Callable[[Sequence[str] | None], Awaitable[None]]
"""What a watching source calls after a change: with the places that changed (for `IncrementalSource.update`),
or None to rescan everything. It never raises; a failed rebuild keeps the previous catalog."""


@runtime_checkable
class WatchableSource(SkillSource, Protocol):
    """A source that notices its own changes (files written, a branch moved) and asks for a rebuild."""

    async def watch(self, rebuild: Rebuild, *, pace: WatchPace, task_status: TaskStatus[None]) -> None:
        """Call `rebuild` after each change until cancelled; `task_status.started()` once changes are being
        followed (after a catch-up `rebuild(None)` covering what changed before)."""
        ...


@runtime_checkable
class RestorableSource(SkillSource, Protocol):
    """A source that can start from a snapshot it kept (a warm restart) and check it afterwards."""

    def restore(self, generation: int = 0) -> Catalog | None:
        """The catalog of the kept snapshot, or None when there is none for this source; `scan` soon after checks
        it (until then `verified` is False)."""
        ...

    @property
    def verified(self) -> bool:
        """False while the catalog was only restored and not yet checked against what it came from."""
        ...


@dataclass(frozen=True, slots=True)
class Staleness:
    """A part of a source serving its last good state because it cannot be refreshed: which part (as people see
    it), since when (Unix time of the first failure), and why the last refresh failed."""

    part: str
    since: float
    reason: str


@runtime_checkable
class StaleReportingSource(SkillSource, Protocol):
    """A source that can serve an older state while what it reads from is away (an upstream server), and says so."""

    def staleness(self) -> tuple[Staleness, ...]:
        """Its parts serving an older state now; empty when all are current."""
        ...


@dataclass(frozen=True, slots=True)
class SourceOptions:
    """What the command line says about sources as a whole.

    `digest_cache`: for the plain folders (no prefix). `project_ignores`: pass over virtualenvs, node_modules
    and .gitignore'd folders while looking for skills (`validate`). `gateway_cache`, `gateway_cache_bytes`: where
    `mcp:` sources keep what they verified, and how much (None: their defaults); `lock`: the lock file that pins
    them (`sources/mcp/lock.py`; None: not pinned); `upstream_credentials`: the file of their credentials
    (`sources/mcp/credentials.py`).
    """

    digest_cache: str | None = None
    gateway_cache: str | None = None
    gateway_cache_bytes: int | None = None
    lock: str | None = None
    upstream_credentials: str | None = None
    progress: Callable[[int, int], None] | None = None  # a folder scan's (done, total), as it goes
    project_ignores: bool = False


SourceOpener = Callable[[str, SourceOptions], SkillSource]
"""Opens the source a kind's TARGET names; SpecError if it cannot."""
