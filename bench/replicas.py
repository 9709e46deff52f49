"""Reads per second through nginx with 1, 2 and 3 replicas, beside one replica reached directly.

    python -m bench.replicas --skills 2000 --clients 8,32 --seconds 8

Every configuration serves the same generated catalog (bench/generate.py) and is loaded by the same client:
N concurrent 2026-07-28 clients doing `resources/read` of random files, each answer checked against the file's
size (bench.peers.read_load). "direct" is one replica without the balancer: the difference is nginx's cost. On the
2-core machine the replicas, nginx and the load generator share two cores, so more replicas add processes,
not cores: the figures show the balancer's overhead and that nothing breaks, not horizontal speed-up.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx2
from deploy.fleet import Fleet, running_fleet

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
    args = parser.parse_args(argv)
    clients = [int(part) for part in args.clients.split(",")]
    with tempfile.TemporaryDirectory(prefix="skillwire-replicas-") as work:
        root = Path(work) / "skills"
        generate(root, skills=args.skills, files=5)
        rows = run(root, clients, args.seconds)
    print(f"{args.skills} generated skills x 5 files, {args.seconds:.0f} s per row, loopback, resources/read")
    print(table(rows))
    return 1 if any(row.load.errors or row.load.wrong for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
