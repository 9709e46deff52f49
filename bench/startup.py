"""Starting `skillwire serve --http` on a generated catalog: spawn to first answer beside the hash floor plus imports,
and, with the watcher on, how long after the port opens the first request is answered.

python -m bench.startup --skills 10000 [--runs 3] [--catalog ROOT]

Each figure is the best and the median of `--runs` fresh processes (the page cache is warm for all of them):

  floor      a fresh process that walks, reads and sha256-hashes every file (`bench.index.floor`)
  imports    a fresh process that only imports what `skillwire serve --http` loads before it scans
  no-watch   `skillwire serve ROOT --http HOST:PORT --no-watch --quiet`: spawn to the first `server/discover` answer
  watching   the same without `--no-watch`: spawn to the port accepting a connection, and from then to the
             answer of a `server/discover` sent at once (what a client polling the port sees)

Targets (issue 13): no-watch spawn to first answer at most 1.3x (floor + imports); first answer within 0.1 s of
the port opening.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.generate import generate

HOST = "127.0.0.1"
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


def serve(root: Path, *, watch: bool) -> tuple[float, float, float]:
    """Spawn to port open, port open to first answer (a request sent at once), RSS then (MiB)."""
    port = free_port()
    command = [sys.executable, "-m", "skillwire", "serve", str(root), "--http", f"{HOST}:{port}", "--quiet"]
    if not watch:
        command.append("--no-watch")
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not accepts(port):
            if proc.poll() is not None:
                raise SystemExit(f"bench.startup: {' '.join(command)} exited with {proc.returncode}")
            time.sleep(0.002)
        opened = time.perf_counter()
        while not discover(port):
            time.sleep(0.002)
        answered = time.perf_counter()
        return opened - start, answered - opened, rss_mib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(30)


def best_median(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f}"


def run(root: Path, runs: int) -> list[tuple[str, str]]:
    hashing = [sys.executable, "-c", "import pathlib, sys, bench.index as b; b.floor(pathlib.Path(sys.argv[1]))"]
    floor = [timed([*hashing, str(root)]) for _ in range(runs)]
    imports = [timed([sys.executable, "-c", IMPORTS]) for _ in range(runs)]
    base = min(floor) + min(imports)
    cold = [serve(root, watch=False) for _ in range(runs)]
    watching = [serve(root, watch=True) for _ in range(runs)]
    spawn = [opened + answer for opened, answer, _ in cold]
    return [
        ("hash floor: walk + read + sha256, fresh process (s)", best_median(floor)),
        ("imports of `skillwire serve --http`, fresh process (s)", best_median(imports)),
        ("no-watch: spawn to first answer (s)", best_median(spawn)),
        ("  vs floor + imports (target <= 1.30x)", f"{min(spawn) / base:.2f}x"),
        ("  RSS at first answer (MiB)", f"{max(rss for _, _, rss in cold):.0f}"),
        ("watching: spawn to port open (s)", best_median([opened for opened, _, _ in watching])),
        ("  port open to first answer (s, target <= 0.10)", best_median([answer for _, answer, _ in watching])),
        ("  RSS at first answer (MiB)", f"{max(rss for _, _, rss in watching):.0f}"),
    ]


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
        rows = run(root, args.runs)
    print(f"startup, {args.skills:,} skills x {args.files} files, best / median of {args.runs} fresh processes")
    width = max(len(label) for label, _ in rows) + 2
    for label, value in rows:
        print(f"{label:<{width}}{value:>14}")


if __name__ == "__main__":
    main()
