"""A gateway's kept state: the verified entries of an upstream, as held in memory and in the gateway cache.

`Kept` is one verified entry and when its content was first verified; `KeptState` all of an upstream's, and when the
refresh that made it ended. `state_json` / `read_state` are its form on disk (`GatewayCache.save_state`), read back
with every entry checked again. The helpers here say where an upstream skill and its files are served.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote_to_bytes

from skillwire.core.errors import InvalidEntry
from skillwire.core.hosting.entry import EntryResource, SkillEntry, parse_entry
from skillwire.core.uri import SKILL_FILE, normal_uri

__all__ = [
    "STATE_FORMAT",
    "Kept",
    "KeptState",
    "identity",
    "read_state",
    "rel_paths",
    "resources_of",
    "skill_path",
    "state_json",
    "when",
]

logger = logging.getLogger("skillwire.sources.mcp.source")

STATE_FORMAT = "skillwire-gateway-state"
STATE_VERSION = 1


@dataclass(frozen=True, slots=True)
class Kept:
    """A verified entry, and when its content was first verified against the upstream."""

    entry: SkillEntry
    verified_at: float


@dataclass(frozen=True, slots=True)
class KeptState:
    """An upstream's last verified state: the skills served from it, and when the refresh that made it ended."""

    skills: tuple[Kept, ...]
    refreshed_at: float


def resources_of(entry: SkillEntry) -> tuple[EntryResource, ...]:
    resources = entry.resources
    return () if isinstance(resources, str) else resources


def identity(entry: SkillEntry) -> str:
    """The entry as canonical JSON: equal for the same uri, frontmatter and manifest."""
    return json.dumps(entry.to_wire(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def decoded(segment: str) -> str | None:
    """A URI path segment decoded (UTF-8 percent-encoding); None when it is not UTF-8 or holds a '/'."""
    try:
        name = unquote_to_bytes(segment).decode("utf-8") if "%" in segment else segment
    except UnicodeDecodeError:
        return None
    return None if "/" in name else name


def skill_path(uri: str) -> tuple[str, ...] | str:
    """The skill path an upstream skill is served at (see the module docstring), or why there is none."""
    scheme, _, rest = uri.partition("://")
    names = [decoded(s) for s in rest.split("/")[:-1]]
    if any(n is None for n in names):
        return f"{uri[:300]} has a segment that is not UTF-8 or holds an encoded '/'"
    path = tuple(n for n in names if n is not None)
    return path if scheme == "skill" else (scheme, *path)


def rel_paths(entry: SkillEntry) -> list[str] | None:
    """Each resource's path inside the skill, decoded, in the entry's order; None when one does not decode."""
    root = normal_uri(entry.uri[: -len(SKILL_FILE)])
    rels: list[str] = []
    for r in resources_of(entry):
        names = [decoded(s) for s in normal_uri(r.uri)[len(root) :].split("/")]
        if any(n is None for n in names):
            return None
        rels.append("/".join(n for n in names if n is not None))
    return rels


def state_json(state: KeptState, shown: str, held: Iterable[Kept] = ()) -> dict[str, Any]:
    """The state kept on disk; `held`: versions a lock holds back (listed so eviction keeps their content)."""
    return {
        "format": STATE_FORMAT,
        "version": STATE_VERSION,
        "upstream": shown,
        "refreshedAt": state.refreshed_at,
        "skills": [{"entry": k.entry.to_wire(), "verifiedAt": k.verified_at} for k in state.skills],
        "pending": [{"entry": k.entry.to_wire(), "verifiedAt": k.verified_at} for k in held],
    }


def read_state(raw: dict[str, Any], label: str) -> KeptState | None:
    """A state read from disk, its entries checked again (`parse_entry`); None (and a log line) when it is not one."""
    if raw.get("format") != STATE_FORMAT or raw.get("version") != STATE_VERSION:
        logger.warning("%s: the kept state is not one this version reads; ignored", label)
        return None
    kept = raw.get("skills")
    if not isinstance(kept, list):
        logger.warning("%s: the kept state lists no skills; ignored", label)
        return None
    skills: list[Kept] = []
    for item in kept:
        try:
            entry = parse_entry(item.get("entry") if isinstance(item, dict) else None)
        except InvalidEntry as err:
            logger.warning("%s: a kept entry is not valid (%s); left out", label, err)
            continue
        at = item.get("verifiedAt")
        skills.append(Kept(entry, float(at) if isinstance(at, int | float) else 0.0))
    at = raw.get("refreshedAt")
    return KeptState(tuple(skills), float(at) if isinstance(at, int | float) else 0.0)


def when(at: float) -> str:
    """A Unix time as people and JSON read it: ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
