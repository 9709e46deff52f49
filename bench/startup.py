"""Starting `skillwire serve --http` on a generated catalog: spawn to first answer, beside the floors (issue 23).

python -m bench.startup --skills 10000 [--runs 3] [--catalog ROOT]

Each figure is the best and the median of `--runs` fresh processes (the page cache is warm for all of them):

  hash floor    a fresh process that walks, reads and sha256-hashes every file (`bench.index.floor`)
  floor server  the bare SDK server (`bench/peer_servers/bare_sdk.py`): spawn to its first answer
  imports       a fresh process that only imports what `skillwire serve --http` loads before it scans
  no-watch      `skillwire serve ROOT --http HOST:PORT --no-watch --quiet`: spawn to the first answer
  watching      the same without `--no-watch` (the watcher sets up after the first answer)
  warm cache    the same with `--digest-cache FILE` written by an earlier start (`--no-watch`)

The first answer is a `server/discover` sent as soon as the port accepts a connection. Beside each wall time, the
CPU seconds the server's processes had used by then (its own, its worker processes' and its watcher's): the machine
may be shared, and CPU time is what another load does not stretch. Targets (issue 23): watching <= 2x (hash floor +
floor server), no-watch <= 1.3x, warm cache <= 1.2x floor server + 0.5 s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.generate import generate

HOST = "127.0.0.1"
HERE = Path(__file__).resolve().parent
IMPORTS = (
    "import skillwire.cli.main, skillwire.service.run, skillwire.server.extension, skillwire.service.watch,"
    " skillwire.sources.folder.source, skillwire.sources.folder.watch"
)
DISCOVER = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
).encode()
HEADERS = (
    "POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
    "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
    "Mcp-Method: server/discover\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
)
_TICK = os.sysconf("SC_CLK_TCK")


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def discover(port: int) -> bool:
    """One `server/discover` over a fresh connection; True on a 200 answer (False: refused, reset, other)."""
    try:
        with socket.create_connection((HOST, port), timeout=60) as conn:
            conn.sendall(HEADERS.format(host=HOST, port=port, length=len(DISCOVER)).encode() + DISCOVER)
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
    except OSError:
        return False
    return answer.startswith(b"HTTP/1.1 200")


def accepts(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.05):
            return True
    except OSError:
        return False


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid: int) -> float:
    """CPU seconds of `pid`, of its children it waited for, and of its live descendants (a watcher process)."""
    total, pids = 0, [pid]
    for current in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
            for task in Path(f"/proc/{current}/task").glob("*/children"):
                pids.extend(int(child) for child in task.read_text().split())
    return total / _TICK


def first_answer(command: list[str], port: int) -> tuple[float, float, float]:
    """Spawn `command` (listening on `port`): seconds to its first answer, its CPU seconds then, its RSS (MiB)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not accepts(port):
            if proc.poll() is not None:
                raise SystemExit(f"bench.startup: {' '.join(command)} exited with {proc.returncode}")
            time.sleep(0.002)
        while not discover(port):
            time.sleep(0.002)
        return time.perf_counter() - start, cpu_s(proc.pid), rss_mib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(30)


def serve(root: Path, *options: str) -> tuple[float, float, float]:
    port = free_port()
    command = [sys.executable, "-m", "skillwire", "serve", str(root), "--http", f"{HOST}:{port}", "--quiet"]
    return first_answer([*command, *options], port)


def floor_server() -> tuple[float, float, float]:
    port = free_port()
    return first_answer([sys.executable, str(HERE / "peer_servers" / "bare_sdk.py"), HOST, str(port), "1000"], port)


def best_median(values: Sequence[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f}"


def run(root: Path, runs: int, cache: Path) -> list[tuple[str, str]]:
    hashing = [sys.executable, "-c", "import pathlib, sys, bench.index as b; b.floor(pathlib.Path(sys.argv[1]))"]
    floor = [timed([*hashing, str(root)]) for _ in range(runs)]
    bare = [floor_server() for _ in range(runs)]
    imports = [timed([sys.executable, "-c", IMPORTS]) for _ in range(runs)]
    cold = [serve(root, "--no-watch") for _ in range(runs)]
    watching = [serve(root) for _ in range(runs)]
    serve(root, "--no-watch", "--digest-cache", str(cache))  # writes the cache
    warm = [serve(root, "--no-watch", "--digest-cache", str(cache)) for _ in range(runs)]
    base = min(floor) + min(s for s, _, _ in bare)
    rows = [
        ("hash floor: walk + read + sha256, fresh process (s)", best_median(floor)),
        ("floor server (bare SDK): spawn to first answer (s)", best_median([s for s, _, _ in bare])),
        ("  its CPU (s) / RSS (MiB)", f"{min(c for _, c, _ in bare):.2f} / {max(r for _, _, r in bare):.0f}"),
        ("imports of `skillwire serve --http`, fresh process (s)", best_median(imports)),
    ]
    for label, results, target in (
        ("no-watch", cold, 1.3 * base),
        ("watching", watching, 2 * base),
        ("warm --digest-cache", warm, 1.2 * min(s for s, _, _ in bare) + 0.5),
    ):
        seconds = [s for s, _, _ in results]
        rows += [
            (f"{label}: spawn to first answer (s)", best_median(seconds)),
            (f"  target <= {target:.2f} s", f"{min(seconds) / target:.2f}x"),
            ("  its CPU then (s, best / median)", best_median([c for _, c, _ in results])),
            ("  RSS at first answer (MiB)", f"{max(r for _, _, r in results):.0f}"),
        ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--catalog", type=Path, help="an existing catalog made by bench.generate (default: generate)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.catalog or Path(tmp, "skills")
        if args.catalog is None:
            generate(root, skills=args.skills, files=args.files)
        load = os.getloadavg()[0]
        rows = run(root, args.runs, Path(tmp, "digests.json"))
        load_after = os.getloadavg()[0]
    print(f"startup, {args.skills:,} skills x {args.files} files, best / median of {args.runs} fresh processes")
    print(f"machine: {os.cpu_count()} cores; load average {load:.1f} before, {load_after:.1f} after")
    width = max(len(label) for label, _ in rows) + 2
    for label, value in rows:
        print(f"{label:<{width}}{value:>14}")


if __name__ == "__main__":
    main()
