"""A gateway in front of a large upstream (issue 21): `skillwire serve vendor=mcp:URL` over `skillwire serve ROOT`.

Measured, one server process each, over HTTP on loopback:
  - the gateway's first start (empty cache): spawn to the first answer (it lists, fetches and verifies every file
    first) and to a complete `skills/list` enumeration through it;
  - a restart over the filled cache, the upstream still up: spawn to the first answer;
  - `resources/read` of random SKILL.md files at 8 concurrent clients, straight to the upstream and through the
    gateway (its cache is on disk, re-hashed on every read): reads/s, the ratio (target >= 0.8), server CPU per read;
  - the gateway's RSS when ready and its peak, and the disk its cache uses.

    python -m bench.gateway --skills 10000          # bench's default catalog: 5 files a skill
    python -m bench.gateway --skills 1000 --files 3 --duration 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import httpx2

from bench.generate import generate
from bench.peers import (
    Catalog,
    Load,
    Session,
    connect,
    cpu_seconds,
    enumerate_catalog,
    free_port,
    load_catalog,
    memory_mib,
    new_session,
    read_load,
    stop,
    wait_ready,
)

TARGET_RATIO = 0.8


def _serve(*args: str, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "skillwire", "serve", *args, "--quiet", "--no-watch"]
    with open(log, "ab") as err:
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)


def _disk_mib(folder: Path) -> float:
    total = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            total += os.lstat(os.path.join(parent, name)).st_blocks * 512
    return total / (1 << 20)


async def _start(args: Sequence[str], log: Path, timeout: float) -> tuple[subprocess.Popen[bytes], str, float]:
    """Start a server on a free port; the process, its URL, and seconds from spawn to its first answer."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    began = time.perf_counter()
    proc = _serve(*args, "--http", f"127.0.0.1:{port}", log=log)
    async with httpx2.AsyncClient(timeout=60) as http:
        await wait_ready(proc, http, url, timeout)
    return proc, url, time.perf_counter() - began


async def _reads(url: str, catalog: Catalog, prefix: str, *, clients: int, duration: float, pid: int) -> Load:
    targets = [(f"skill://{prefix}{uri.removeprefix('skill://')}", size) for uri, size in catalog.uris.items()]
    async with httpx2.AsyncClient(timeout=60, limits=httpx2.Limits(max_connections=clients * 2)) as http:
        first = await connect(http, url)
        sessions = [first] + [await new_session(first) for _ in range(clients - 1)]
        return await read_load(
            sessions, targets, duration=duration, warmup=1.0, seed=clients, server_cpu=lambda: cpu_seconds(pid)
        )


async def run(args: argparse.Namespace, work: Path) -> int:
    root = work / "skills"
    if not root.exists():
        print(f"generating {args.skills:,} skills of {args.files} files ...", flush=True)
        generate(root, skills=args.skills, files=args.files)
    catalog = load_catalog(root)
    print(f"catalog: {len(catalog.skills):,} skills, {catalog.files:,} files, {catalog.total_bytes / 1e6:,.0f} MB")
    cache = work / "gateway-cache"
    shutil.rmtree(cache, ignore_errors=True)
    log = work / "servers.log"
    rows: list[tuple[str, str]] = []
    upstream, up_url, up_ready = await _start([str(root)], log, args.timeout)
    rows.append(("upstream: spawn to first answer", f"{up_ready:.2f} s"))
    try:
        gateway, gw_url, gw_ready = await _start(
            [f"vendor=mcp:{up_url}", "--gateway-cache", str(cache)], log, args.timeout
        )
        try:
            rss_ready = memory_mib(gateway.pid, "VmRSS")
            async with httpx2.AsyncClient(timeout=60) as http:
                session: Session = await connect(http, gw_url)
                prefixed = Catalog(root, [(f"vendor/{p}", s) for p, s in catalog.skills], catalog.files, 0)
                listed = await enumerate_catalog(session, prefixed, args.files, args.timeout)
            rows.append(("gateway, empty cache: spawn to first answer", f"{gw_ready:.2f} s"))
            rows.append(
                (
                    "gateway: spawn to a complete skills/list",
                    f"{gw_ready + listed.seconds:.2f} s ({listed.pages} pages, {listed.found:,} found, "
                    f"{listed.missing} missing)",
                )
            )
            direct = await _reads(up_url, catalog, "", clients=args.clients, duration=args.duration, pid=upstream.pid)
            through = await _reads(
                gw_url, catalog, "vendor/", clients=args.clients, duration=args.duration, pid=gateway.pid
            )
            ratio = through.rps / direct.rps if direct.rps else 0.0
            for name, load in (("direct", direct), ("through the gateway", through)):
                cpu = f"{load.server_cpu_ms_per_read:.2f} ms" if load.server_cpu_ms_per_read is not None else "n/a"
                rows.append(
                    (
                        f"reads/s at {args.clients} clients, {name}",
                        f"{load.rps:,.0f} (p50 {load.p50_ms:.1f} ms, p99 {load.p99_ms:.1f} ms, server CPU/read "
                        f"{cpu}, {load.errors} errors, {load.wrong} wrong)",
                    )
                )
            verdict = "meets" if ratio >= TARGET_RATIO else "misses"
            rows.append(("gateway / direct", f"{ratio:.2f}x ({verdict} the {TARGET_RATIO}x target)"))
            rows.append(("gateway RSS ready / peak", f"{rss_ready:.0f} / {memory_mib(gateway.pid, 'VmHWM'):.0f} MiB"))
            rows.append(("gateway cache on disk", f"{_disk_mib(cache):,.0f} MiB"))
        finally:
            stop(gateway)
        gateway, _, restart = await _start([f"vendor=mcp:{up_url}", "--gateway-cache", str(cache)], log, args.timeout)
        stop(gateway)
        rows.append(("gateway restart over its cache: spawn to first answer", f"{restart:.2f} s"))
    finally:
        stop(upstream)
    width = max(len(k) for k, _ in rows)
    print(f"\n{'':{width}}  (machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f})")
    for key, value in rows:
        print(f"{key:{width}}  {value}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gateway", description=__doc__)
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=5, help="files per skill, SKILL.md included")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of counted reads per server")
    parser.add_argument("--timeout", type=float, default=900.0, help="longest wait for a server or a listing (s)")
    parser.add_argument("--work", type=Path, help="keep the catalog here between runs (default: a temporary folder)")
    args = parser.parse_args(argv)
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
        return asyncio.run(run(args, args.work))
    with tempfile.TemporaryDirectory(prefix="skillwire-bench-gateway-") as work:
        return asyncio.run(run(args, Path(work)))


if __name__ == "__main__":
    sys.exit(main())
