"""A live server's memory over one run: when ready, after listing, verifying and reading, and at its peak.

python -m bench.memory [--skills 10000 | --catalog DIR] [--no-watch] [--verify 5000] [--tracemalloc DIR]

Starts `skillwire serve ROOT --http` on a generated (or given) catalog and, from one client over streamable HTTP:
waits for the first answer, then for /readyz; lists every skill (`skills/list` until no `nextCursor`), keeping
each file's digest; reads `--verify` files chosen at random (seeded) with 8 clients and checks every answer's
bytes against the digest the listing published; then reads random SKILL.md files with 1, 8 and 32 clients for
`--duration` s each. The server's RSS (VmRSS, the process and any children) is printed after each phase, and its
peak (VmHWM) at the end. Memory, unlike time, does not depend on the machine's load, so this runs anywhere.

With `--tracemalloc DIR` the server runs under `tracemalloc` and writes a snapshot into DIR after each phase
(`python -m bench.memory --top DIR/ready.snap` prints where the bytes are, by file and line); its RSS is then
tracemalloc's too, so the figures printed are not the server's own.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

from bench.generate import generate
from bench.peers import HOST, Session, free_port, memory_mib, new_session, read_load, stop, wait_ready

SNAPSHOT_SIGNAL = signal.SIGUSR1


async def list_files(session: Session) -> tuple[int, dict[str, tuple[str, int]]]:
    """Every skill's files from `skills/list`: (skills, {uri: (digest, size)})."""
    files: dict[str, tuple[str, int]] = {}
    skills, cursor = 0, None
    while True:
        page = await session.call("skills/list", {"cursor": cursor} if cursor else {})
        for entry in page.get("skills", []):
            skills += 1
            for res in entry.get("resources", []):
                files[res["uri"]] = (res["digest"], res["size"])
        cursor = page.get("nextCursor")
        if not cursor:
            return skills, files


async def verify(sessions: list[Session], files: dict[str, tuple[str, int]], count: int, seed: int) -> tuple[int, int]:
    """Read `count` random files (each once) over `sessions`; (matching the published digest, not matching)."""
    uris = random.Random(seed).sample(sorted(files), min(count, len(files)))
    good = bad = 0

    async def client(mine: list[str], session: Session) -> None:
        nonlocal good, bad
        for uri in mine:
            first = (await session.call("resources/read", {"uri": uri}))["contents"][0]
            data = first["text"].encode() if "text" in first else base64.b64decode(first["blob"])
            if "sha256:" + hashlib.sha256(data).hexdigest() == files[uri][0]:
                good += 1
            else:
                bad += 1

    await asyncio.gather(*(client(uris[i :: len(sessions)], s) for i, s in enumerate(sessions)))
    return good, bad


def _rss(pid: int) -> str:
    return f"{memory_mib(pid, 'VmRSS'):.0f}"


async def measure(root: Path, args: argparse.Namespace, log: Path) -> list[tuple[str, str]]:
    port = free_port()
    url = f"http://{HOST}:{port}/mcp"
    serve = ["serve", str(root), "--http", f"{HOST}:{port}", "--quiet", *(["--no-watch"] if args.no_watch else [])]
    if args.tracemalloc is not None:
        args.tracemalloc.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "bench.memory", "--traced-child", str(args.tracemalloc), *serve]
    else:
        argv = [str(Path(sys.executable).parent / "skillwire"), *serve]
    rows: list[tuple[str, str]] = []
    with open(log, "wb") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def phase(label: str, name: str) -> None:
        rows.append((label, _rss(proc.pid)))
        if args.tracemalloc is not None:
            target = args.tracemalloc / f"{name}.snap"
            proc.send_signal(SNAPSHOT_SIGNAL)
            while not target.exists():
                time.sleep(0.1)

    try:
        limits = httpx2.Limits(max_connections=64, max_keepalive_connections=64)
        async with httpx2.AsyncClient(limits=limits, timeout=httpx2.Timeout(600), trust_env=False) as http:
            session = await wait_ready(proc, http, url, 600)
            rows.append(("spawn to first answer (s)", f"{time.perf_counter() - started:.2f}"))
            phase("RSS at the first answer (MiB)", "first")
            while (await http.get(f"http://{HOST}:{port}/readyz")).status_code != 200:
                await asyncio.sleep(0.1)
            await asyncio.sleep(args.settle)
            phase("RSS when ready, /readyz 200 (MiB)", "ready")
            skills, files = await list_files(session)
            phase(f"RSS after skills/list of {skills:,} skills (MiB)", "listed")
            sessions = [session] + [await new_session(session) for _ in range(7)]
            good, bad = await verify(sessions, files, args.verify, seed=23)
            phase(f"RSS after verifying {good + bad:,} reads, {bad} mismatched (MiB)", "verified")
            targets = [(uri, size) for uri, (_, size) in files.items() if uri.endswith("/SKILL.md")]
            for clients in (1, 8, 32):
                while len(sessions) < clients:
                    sessions.append(await new_session(session))
                load = await read_load(
                    sessions[:clients], targets, duration=args.duration, warmup=0.2, seed=clients, server_cpu=lambda: 0
                )
                if load.errors or load.wrong:
                    rows.append((f"read load, {clients} clients", f"{load.errors} errors, {load.wrong} wrong"))
            phase("RSS after the read load, 1/8/32 clients (MiB)", "loaded")
            rows.append(("peak RSS over the run, VmHWM (MiB)", f"{memory_mib(proc.pid, 'VmHWM'):.0f}"))
    finally:
        stop(proc)
    return rows


def traced_child(folder: Path, argv: list[str]) -> None:
    """Run `skillwire` with `argv` under tracemalloc, dumping a snapshot on each SNAPSHOT_SIGNAL (named in order)."""
    import tracemalloc

    from skillwire.cli.main import main as skillwire_main

    names = iter(("first", "ready", "listed", "verified", "loaded"))
    tracemalloc.start(1)

    def dump(signum: int, frame: Any) -> None:
        name = next(names, "later")
        tmp = folder / f".{name}.tmp"
        tracemalloc.take_snapshot().dump(str(tmp))
        tmp.rename(folder / f"{name}.snap")

    signal.signal(SNAPSHOT_SIGNAL, dump)
    raise SystemExit(skillwire_main(argv))


def top(path: Path, limit: int = 25) -> None:
    """Where a snapshot's bytes are, by file and line, largest first."""
    import tracemalloc

    snapshot = tracemalloc.Snapshot.load(str(path)).filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    stats = snapshot.statistics("lineno")
    total = sum(s.size for s in stats)
    print(f"{path.name}: {total / 2**20:.1f} MiB traced in {sum(s.count for s in stats):,} blocks")
    for s in stats[:limit]:
        where = s.traceback[0]
        name = where.filename.split("site-packages/")[-1].split("/src/")[-1]
        print(f"{s.size / 2**20:8.2f} MiB {s.count:>9,}  {name}:{where.lineno}")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--traced-child":
        traced_child(Path(sys.argv[2]), sys.argv[3:])
    if len(sys.argv) > 2 and sys.argv[1] == "--top":
        for name in sys.argv[2:]:
            top(Path(name))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--catalog", type=Path, help="serve this catalog (generated there once if it does not exist)")
    parser.add_argument("--no-watch", action="store_true", help="serve with --no-watch")
    parser.add_argument("--verify", type=int, default=5000, help="files read and checked (default 5000)")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds of read load per client count")
    parser.add_argument("--settle", type=float, default=1.0, help="seconds waited after /readyz")
    parser.add_argument("--tracemalloc", type=Path, help="write tracemalloc snapshots of the server here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.catalog or Path(tmp) / "catalog"
        if not root.exists():
            generate(root, skills=args.skills, files=args.files)
        rows = asyncio.run(measure(root, args, Path(tmp) / "server.log"))
    watch = "--no-watch" if args.no_watch else "watching"
    print(f"skillwire serve --http ({watch}) on {root}; load average {os.getloadavg()[0]:.1f}")
    at_10k = any("of 10,000 skills" in label for label, _ in rows)  # the size the targets are set for
    for label, value in rows:
        target = TARGETS.get(label.split(",")[0], "") if at_10k else ""
        print(f"{label:<56}{value:>10}   {target}".rstrip())


TARGETS = {  # issue 23, for 10,000 skills (MiB, as measured here)
    "RSS when ready": "target < 120",
    "peak RSS over the run": "target < 150",
}


if __name__ == "__main__":
    main()
