"""Roll replicas started with `skillwire serve git:REPO@REF --rollout-plan FILE` to a commit, all at one instant.

    python -m deploy.rollout --plan rollout.json --commit 3f2a... --lead 5 http://127.0.0.1:8001 http://127.0.0.1:8002

Writes the plan (`skillwire.service.rollout`: the commit and a switch time `--lead` seconds ahead) atomically, waits
until every replica's `/readyz` says it prepared the commit (`next`), then until each serves it, and reports when
each began (`since`): the mixed window is the spread of those times (0 when all prepared in time). On Kubernetes the
plan is a ConfigMap mounted into every pod: allow a lead longer than the kubelet's sync (a minute or more).
Replicas started with authentication show `/readyz`'s detail only to an operator: pass `--token-file FILE` holding
a token with the `skillwire:operator` scope (the one Prometheus scrapes with will do).
`wait_for_commit` alone measures a fleet that merely follows a branch (`bench/replicas.py --rollout`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillwire.client.credentials import first_token
from skillwire.core.errors import SkillwireError
from skillwire.service.rollout import Plan

POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class Rollout:
    """What a rollout did: the plan, how long after writing it each replica reported it prepared, and since when
    (Unix time) each serves the commit."""

    plan: Plan
    prepared_s: dict[str, float]
    since: dict[str, float]

    @property
    def mixed_window_s(self) -> float:
        """How long replicas served different commits (the spread of their switch times)."""
        return max(self.since.values()) - min(self.since.values())

    @property
    def late(self) -> list[str]:
        """Replicas that began serving the commit after the planned instant (not prepared in time)."""
        return [name for name, since in self.since.items() if since > self.plan.at]


def write_plan(path: Path, plan: Plan) -> None:
    """Replace the plan file at once (a replica never reads half a plan)."""
    scratch = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    scratch.write_bytes(plan.to_json())
    os.replace(scratch, path)


def readiness(replica: str, *, token: str | None = None) -> dict[str, Any]:
    """The `/readyz` body of the replica at `replica` (its base URL or its /mcp URL), whatever the status, with its
    detail (`token`: an operator's, for a replica with authentication on)."""
    url = replica.removesuffix("/mcp").rstrip("/") + "/readyz"
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as response:
            body = response.read()
    except urllib.error.HTTPError as error:
        body = error.read()
    found = json.loads(body)
    if not isinstance(found, dict):
        raise RuntimeError(f"{url} answered {body[:200]!r}")
    if "generation" not in found:
        raise RuntimeError(
            f"{url} shows its detail only to an operator: pass --token-file FILE with a token scoped skillwire:operator"
        )
    return found


def wait_for_commit(
    replicas: Sequence[str], commit: str, *, timeout_s: float = 60.0, token: str | None = None
) -> dict[str, float]:
    """Since when each replica serves `commit` (its `/readyz` revision), once all do; RuntimeError after
    `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    since: dict[str, float] = {}
    while len(since) < len(replicas):
        for replica in replicas:
            if replica not in since:
                ready = readiness(replica, token=token)
                if ready.get("revision") == commit:
                    since[replica] = float(ready["since"])
        if len(since) < len(replicas):
            if time.monotonic() > deadline:
                behind = [r for r in replicas if r not in since]
                raise RuntimeError(f"{', '.join(behind)} did not serve {commit} within {timeout_s:.0f} s")
            time.sleep(POLL_S)
    return since


def roll_out(
    plan_path: Path,
    commit: str,
    replicas: Sequence[str],
    *,
    lead_s: float = 2.0,
    timeout_s: float = 60.0,
    token: str | None = None,
) -> Rollout:
    """Plan `commit` for `lead_s` seconds from now, note when each replica prepared it (until then), and wait (at
    most `timeout_s` after that) until every one serves it (`token`: an operator's, see `readiness`)."""
    written = time.time()
    plan = Plan(commit, written + lead_s)
    write_plan(plan_path, plan)
    prepared: dict[str, float] = {}
    while len(prepared) < len(replicas) and time.time() < plan.at:  # prepared later: late, reported by `since`
        for replica in replicas:
            if replica not in prepared:
                ready = readiness(replica, token=token)
                upcoming = ready.get("next") or {}
                if ready.get("revision") == commit or upcoming.get("revision") == commit:
                    prepared[replica] = time.time() - written
        time.sleep(POLL_S)
    since = wait_for_commit(replicas, commit, timeout_s=timeout_s, token=token)
    return Rollout(plan, prepared, since)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.rollout", description=__doc__.split("\n\n")[0])
    parser.add_argument("replicas", nargs="+", metavar="URL", help="each replica's own URL (not the balancer's)")
    parser.add_argument("--plan", required=True, type=Path, help="the plan file every replica watches")
    parser.add_argument("--commit", required=True, help="the full id of the commit to serve")
    parser.add_argument("--lead", type=float, default=5.0, help="seconds from now to switch (default 5)")
    parser.add_argument(
        "--token-file", metavar="FILE", help="an operator's token (scope skillwire:operator), for replicas with auth"
    )
    args = parser.parse_args(argv)
    try:
        token = None if args.token_file is None else first_token(args.token_file)
        done = roll_out(args.plan, args.commit, args.replicas, lead_s=args.lead, token=token)
    except (OSError, RuntimeError, ValueError, SkillwireError) as error:
        print(f"deploy.rollout: {error}", file=sys.stderr)
        return 1
    for replica in args.replicas:
        took = done.prepared_s.get(replica)
        prepared = f"prepared after {took:.2f} s" if took is not None else "not prepared in time"
        print(f"{replica}: {prepared}; serves {args.commit[:12]} since {done.since[replica]:.3f}", file=sys.stderr)
    print(f"mixed window {done.mixed_window_s * 1000:.1f} ms; late: {', '.join(done.late) or 'none'}", file=sys.stderr)
    return 1 if done.late else 0


if __name__ == "__main__":
    sys.exit(main())
