"""Reads per second through nginx with 1, 2 and 3 replicas, beside one replica reached directly.

    python -m bench.replicas --skills 2000 --clients 8,32 --seconds 8
    python -m bench.replicas --only rollout     # the rollout table alone

Every configuration serves the same generated catalog (bench/generate.py) and is loaded by the same client:
N concurrent 2026-07-28 clients doing `resources/read` of random files, each answer checked against the file's
size (bench.peers.read_load). "direct" is one replica without the balancer: the difference is nginx's cost. On the
2-core machine the replicas, nginx and the load generator share two cores, so more replicas add processes,
not cores: the figures show the balancer's overhead and that nothing breaks, not horizontal speed-up.

The rollout table (bench/rollout.py): 3 replicas serving a git repository of `--skills` generated skills move from
commit A to commit B, which changes 100 of them, while 8 verifying `Host`s load those skills and read their files
through nginx. Once with each replica following the branch on its own, once with a planned switch
(`--rollout-plan`, `deploy/rollout.py`): verification failures (each made the host refresh with skills/get), what
the refresh found (a change: loaded again; from a single server once per host and changed skill, 800 here; the
content the host held: replicas disagreed, tried again),
regressions (a skill seen at B, then at A), unrecovered errors, hosts that ended on B, and the mixed window (how
long replicas served different commits, from each one's `/readyz` `since`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx2
from deploy.fleet import Fleet, running_fleet

from bench import rollout
from bench.generate import generate
from bench.peers import Catalog, Load, connect, cpu_seconds, load_catalog, new_session, read_load


@dataclass(frozen=True)
class Row:
    setup: str
    clients: int
    load: Load


def _targets(catalog: Catalog) -> list[tuple[str, int]]:
    targets: list[tuple[str, int]] = []
    for folder in sorted({path for path, _ in catalog.skills}):
        for file in sorted((catalog.root / folder).rglob("*")):
            if file.is_file():
                targets.append(
                    (f"skill://{folder}/{file.relative_to(catalog.root / folder).as_posix()}", file.stat().st_size)
                )
    return targets


async def _measure(url: str, fleet: Fleet, clients: int, targets: Sequence[tuple[str, int]], seconds: float) -> Load:
    limits = httpx2.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx2.AsyncClient(timeout=30, limits=limits) as http:
        first = await connect(http, url)
        sessions = [first] + [await new_session(first) for _ in range(clients - 1)]
        pids = [r.popen.pid for r in fleet.replicas] + [fleet.nginx.pid]
        return await read_load(
            sessions, targets, duration=seconds, warmup=1.0, seed=2640, server_cpu=lambda: sum(map(cpu_seconds, pids))
        )


def run(root: Path, clients: Sequence[int], seconds: float) -> list[Row]:
    catalog = load_catalog(root)
    targets = _targets(catalog)
    rows: list[Row] = []
    for replicas in (1, 2, 3):
        with running_fleet([root], replicas=replicas) as fleet:
            setups = [("direct, 1 replica", fleet.replica_url(0))] if replicas == 1 else []
            setups.append((f"nginx, {replicas} replica{'s' if replicas > 1 else ''}", fleet.url))
            for setup, url in setups:
                for n in clients:
                    rows.append(Row(setup, n, asyncio.run(_measure(url, fleet, n, targets, seconds))))
    return rows


def table(rows: Sequence[Row]) -> str:
    lines = [
        "| setup              | clients | verified reads/s | p50 ms | p99 ms | errors | wrong |",
        "|--------------------|--------:|-----------------:|-------:|-------:|-------:|------:|",
    ]
    for row in rows:
        load = row.load
        lines.append(
            f"| {row.setup:<18} | {row.clients:>7} | {load.rps:>16,.0f} | {load.p50_ms:>6.1f} | {load.p99_ms:>6.1f} "
            f"| {load.errors:>6} | {load.wrong:>5} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replicas", description=__doc__.split("\n\n")[0])
    parser.add_argument("--skills", type=int, default=2000, help="generated skills (default 2000)")
    parser.add_argument("--clients", default="8,32", help="concurrent clients, comma separated (default 8,32)")
    parser.add_argument("--seconds", type=float, default=8.0, help="counted seconds per measurement (default 8)")
    parser.add_argument("--only", choices=("reads", "rollout"), help="print one table (default: both)")
    args = parser.parse_args(argv)
    clients = [int(part) for part in args.clients.split(",")]
    failed = False
    if args.only != "rollout":
        with tempfile.TemporaryDirectory(prefix="skillwire-replicas-") as work:
            root = Path(work) / "skills"
            generate(root, skills=args.skills, files=5)
            rows = run(root, clients, args.seconds)
        print(f"{args.skills} generated skills x 5 files, {args.seconds:.0f} s per row, loopback, resources/read")
        print(table(rows))
        failed = any(row.load.errors or row.load.wrong for row in rows)
    if args.only != "reads":
        failed = _rollout(args.skills, args.seconds) or failed
    return 1 if failed else 0


def _rollout(skills: int, seconds: float) -> bool:
    """Print the rollout table; True if the planned switch left an unrecovered error or a host off B."""
    logging.getLogger("skillwire").setLevel(logging.ERROR)  # each verification failure is counted, not logged
    with tempfile.TemporaryDirectory(prefix="skillwire-rollout-") as work:
        repo, first, second = rollout.make_repo(Path(work) / "repo", skills=skills, files=5, changed=100)
        rows = [
            rollout.measure(how, repo, first, second, replicas=3, hosts=8, seconds=seconds)
            for how in ("follow", "plan")
        ]
    print(f"\n{skills} generated skills x 5 files in git; commit B changes 100 (SKILL.md and a file each);")
    print(f"8 hosts read the changed skills through nginx for {seconds:.0f} s around the rollout")
    print(rollout.table(rows))
    planned = rows[-1]
    return bool(planned.total.unrecovered or planned.on_b < planned.hosts)


if __name__ == "__main__":
    raise SystemExit(main())
