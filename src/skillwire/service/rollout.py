"""Rolling a fleet of replicas from one git commit to another so that no verifying host sees a mismatch it cannot
recover from: every replica prepares the new commit, then all switch at one announced instant.

A rollout plan is a small JSON file every replica watches (`skillwire serve git:REPO@REF --rollout-plan FILE`):
`{"commit": "<full commit id>", "at": <Unix time>}`. On a new plan a replica builds the commit's catalog beside the
one it serves (a pinned `GitSource` sharing blob digests and unchanged skills), reports it on `/readyz` under
`next`, and schedules it (`SkillService.schedule`): a request that arrives before `at` is answered from the old
commit, one that arrives after from the new, whichever replica nginx picks. On one clock (one machine, or hosts
kept in step by NTP) a host that has seen the new commit never meets the old one again, so what it sees is one
ordinary change, A then B, exactly as from a single server: a read of a changed file fails verification, the
host's refresh (skills/get) finds B, and loading again recovers. Replicas that merely follow a branch switch
whenever each polls it, and for that mixed window a host may flip between A and B (see `bench/replicas.py`).

Why the fleet and not only the host: a host cannot tell a mixed fleet from a changed or tampered file, and its
refresh after a mismatch is itself routed to any replica, so while replicas disagree it may find A again, retry,
load B, then meet A: each flip revokes the approval and asks the user again. Retrying with backoff only waits the
window out. Switching together removes the window; the host's ordinary recovery then always reaches B, and a
bounded retry (as `bench/rollout.py`'s readers do) remains for a replica that prepared late.

A replica that starts while a plan is due serves the plan's commit from its first answer (`planned_source`);
one that cannot prepare in time switches as soon as it can (the controller, `deploy/rollout.py`, says so).
Replicas on different machines are as exact as their clocks agree (NTP: milliseconds).

    plan = parse_plan(b'{"commit": "3f2a...", "at": 1764612345.5}')
    async with anyio.create_task_group() as tg:
        tg.start_soon(follow_plan, service, "rollout.json")
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import time
from dataclasses import dataclass

import anyio
import anyio.to_thread

from skillwire.core.errors import SourceError
from skillwire.server.skill_service import SkillService, Switch
from skillwire.sources.git.source import GitSource
from skillwire.sources.safe_open import read_regular

logger = logging.getLogger(__name__)

MAX_PLAN_BYTES = 4096
POLL_S = 0.1  # how often the plan file is looked at (a stat; it is read only when it changed)
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1 or SHA-256 repositories


class BadPlan(ValueError):
    """The plan file is not `{"commit": "<full commit id>", "at": <Unix time>}`."""


@dataclass(frozen=True, slots=True)
class Plan:
    """Serve `commit` from `at` (Unix time, seconds) on."""

    commit: str
    at: float

    def __post_init__(self) -> None:
        if not _COMMIT.fullmatch(self.commit):
            raise BadPlan(f"commit {self.commit[:80]!r} is not a full commit id (40 or 64 lowercase hex digits)")
        if not (math.isfinite(self.at) and self.at >= 0):
            raise BadPlan(f"at {self.at!r} is not a Unix time in seconds")

    def to_json(self) -> bytes:
        return json.dumps({"commit": self.commit, "at": self.at}).encode()


def parse_plan(data: bytes) -> Plan:
    """The plan in `data`; BadPlan saying what is wrong (hostile input: size, JSON, fields all checked)."""
    if len(data) > MAX_PLAN_BYTES:
        raise BadPlan(f"larger than {MAX_PLAN_BYTES} bytes")
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BadPlan(f"not JSON ({exc})") from None
    if not isinstance(body, dict) or set(body) != {"commit", "at"}:
        raise BadPlan('want an object with exactly "commit" and "at"')
    commit, at = body["commit"], body["at"]
    if not isinstance(commit, str):
        raise BadPlan('"commit" must be a string: a full commit id')
    if isinstance(at, bool) or not isinstance(at, int | float) or not -(2**53) < at < 2**53:
        raise BadPlan('"at" must be a number: a Unix time in seconds')
    return Plan(commit, float(at))


def read_plan(path: str | os.PathLike[str]) -> Plan | None:
    """The plan at `path`, None if there is no file; BadPlan if it is unreadable or malformed."""
    try:
        # Links followed: a Kubernetes ConfigMap file is a link into a folder swapped whole at each update.
        return parse_plan(read_regular(os.fspath(path), limit=MAX_PLAN_BYTES, follow_links=True))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BadPlan(f"cannot read it ({exc.strerror or exc})") from None


def planned_source(source: GitSource, path: str | os.PathLike[str]) -> GitSource:
    """`source`, or the commit a plan already due names (a replica started mid-rollout serves what the rest do).

    SourceError / BadPlan: the plan cannot be followed (reported before serving)."""
    plan = read_plan(path)
    if plan is None or plan.at > time.time() or plan.commit == source.revision:
        return source
    return source.pinned_at(plan.commit)


async def follow_plan(service: SkillService, path: str | os.PathLike[str], *, poll_s: float = POLL_S) -> None:
    """Prepare and schedule each new plan found at `path` until cancelled; a bad plan is logged and ignored.

    The service's source must be a `GitSource` (it is replaced by a pinned one at each switch)."""
    stamp: tuple[int, int, int] | None = None
    wanted: Plan | None = None  # the plan in the file
    followed: Plan | None = None  # the plan prepared
    failed: Plan | None = None  # the plan that could not be prepared (said once; tried again at each look)
    while True:
        service.publish_due()
        try:
            st = os.stat(path)
            now = (st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            now = None
        if now is not None and now != stamp:
            stamp = now
            try:
                wanted = read_plan(path)
            except BadPlan as exc:
                logger.warning("rollout plan %s ignored: %s", path, exc)
        if wanted is not None and wanted != followed:
            if await _prepare(service, wanted, quiet=wanted == failed):
                followed = wanted
            else:
                failed = wanted
        await anyio.sleep(poll_s)


async def _prepare(service: SkillService, plan: Plan, *, quiet: bool = False) -> bool:
    """Build `plan`'s commit beside what is served and schedule it (or cancel a switch if it names the current
    one); False if it cannot be built now (a commit not fetched yet, say), logged unless `quiet`."""
    source = service.source
    if not isinstance(source, GitSource):
        if not quiet:
            logger.warning("rollout plan ignored: %s is not a git source", source.label)
        return False
    if plan.commit == source.revision:
        service.schedule(None)
        logger.info("rollout plan names %s, already served", plan.commit)
        return True
    generation = service.catalog.generation + 1
    started = time.perf_counter()

    def build() -> Switch:
        pinned = source.pinned_at(plan.commit)
        return Switch(pinned, pinned.scan(generation), plan.at)

    try:
        switch = await anyio.to_thread.run_sync(build)
    except SourceError as exc:
        if not quiet:
            logger.warning("rollout plan not followed yet (tried again until it can be): %s", exc)
        return False
    late = time.time() - plan.at
    if late > 0:  # prepared after the instant: switch now, and say so (the fleet is mixed until it does)
        switch = Switch(switch.source, switch.catalog, time.time())
        logger.warning("commit %s prepared %.3f s after its switch time; switching now", plan.commit, late)
    service.schedule(switch)
    logger.info("commit %s prepared in %.3f s; served from %.3f", plan.commit, time.perf_counter() - started, plan.at)
    return True
