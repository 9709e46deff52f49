"""What a pinned gateway serves of one upstream after a refresh (`serve --lock`, see `lock.py`).

`pin` serves the locked versions: the upstream's own when it still has them, else the version served before (its
content is in the gateway cache); it records every difference as pending (changed, added, removed), and names the
locked versions that are nowhere any more. An upstream the lock does not pin yet is pinned to what verified now.
`follow_lock` rescans when the lock file changes (`skillwire lock accept`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

from skillwire.core.hosting.entry import SkillEntry
from skillwire.core.uri import normal_uri
from skillwire.sources.mcp.kept import Kept, rel_paths, resources_of
from skillwire.sources.mcp.lock import LockedFile, LockedSkill, LockFile, PinnedState, changes_between

__all__ = ["Pinned", "follow_lock", "locked_skill", "pin"]

logger = logging.getLogger("skillwire.sources.mcp.source")


@dataclass(frozen=True, slots=True)
class Pinned:
    """What to serve, what a lock holds back (kept so eviction spares its content), and the locked versions that
    are nowhere any more: (upstream URI, why)."""

    served: list[Kept]
    held: list[Kept]
    missing: list[tuple[str, str]]


def pin(lock: LockFile, shown: str, label: str, kept: list[Kept], earlier: dict[str, Kept]) -> Pinned:
    """The locked versions of `shown`'s skills to serve after a refresh that verified `kept` (`earlier`: what was
    served before, by normal URI); see the module docstring."""
    now = {normal_uri(k.entry.uri): k for k in kept}
    now_locked = {uri: locked_skill(shown, k.entry) for uri, k in now.items()}
    with lock.guard:
        pinned = lock.load() or PinnedState(frozenset(), {})
        others = [p for p in lock.load_pending() if p.skill.upstream != shown]
        if shown not in pinned.upstreams:
            skills = {**pinned.skills, **{s.key: s for s in now_locked.values()}}
            lock.save(PinnedState(pinned.upstreams | {shown}, skills))
            lock.save_pending(others)
            logger.warning("%s: pinned %d skills in %s", label, len(now_locked), lock.path)
            return Pinned(kept, [], [])
        locked = pinned.of(shown)
        changes = changes_between(locked, now_locked)
        lock.save_pending([*others, *changes])
    served: list[Kept] = []
    missing: list[tuple[str, str]] = []
    for uri, record in sorted(locked.items()):
        current, old = now.get(uri), earlier.get(uri)
        if current is not None and sorted(now_locked[uri].files) == sorted(record.files):
            served.append(current)
        elif old is not None and sorted(locked_skill(shown, old.entry).files) == sorted(record.files):
            if current is None:
                logger.warning(
                    "%s: %s is locked but no longer offered upstream; serving the locked version from the "
                    "gateway cache",
                    label,
                    record.uri,
                )
            served.append(old)
        else:
            missing.append((record.uri, "the locked version is neither upstream nor in the gateway cache; not served"))
    if changes:
        logger.warning(
            "%s: %d upstream changes held by the lock %s (see skillwire lock show)",
            label,
            len(changes),
            lock.path,
        )
    held = [now[normal_uri(p.skill.uri)] for p in changes if p.change != "removed"]
    return Pinned(served, held, missing)


def locked_skill(shown: str, entry: SkillEntry) -> LockedSkill:
    """An entry as a lock records it: each file's path inside the skill (its URI when it does not decode)."""
    resources = resources_of(entry)
    rels = rel_paths(entry) or [r.uri for r in resources]
    files = tuple(LockedFile(p, r.digest, r.size) for p, r in zip(rels, resources, strict=True))
    return LockedSkill(shown, entry.uri, files)


async def follow_lock(lock: LockFile, rebuild: Callable[[], Awaitable[None]]) -> None:
    """Rescan when the lock file changes (`skillwire lock accept`): a stat a second, nothing read until then."""
    seen = lock.stamp()
    while True:
        await anyio.sleep(1.0)
        stamp = lock.stamp()
        if stamp != seen:
            seen = stamp
            await rebuild()
