"""An unauthenticated load on `skillwire serve --http` at its default limits (issue 10's acceptance figures).

Phase 1, against one server: while 5,000 idle connections are held open (each reopened when the server
closes it) and 10,000 handshake-era `initialize` calls are made, 50 well-behaved clients do 1,000
`resources/read` each on keep-alive connections; then a 2025-era SDK client arrives and lists skills.
Phase 2, against a fresh server: 20 concurrent reads of a 16 MiB file. The server's peak RSS is its
VmHWM from /proc. Loopback only, bounded in count and time (it stops by itself; at most `--timeout` s a phase).

    python -m bench.load
    python -m bench.load --idle 1000 --initialize 2000 --clients 10 --reads 200
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client
from tests.support.servers import skills_list

HOST = "127.0.0.1"
MODERN = "2026-07-28"
BIG_BYTES = 16 * 1024 * 1024 - 4096  # a skill's files may total 16 MiB: the file, plus room for its SKILL.md
_LISTENING = re.compile(rb"listening on http://127\.0\.0\.1:(\d+)/mcp")


@dataclass
class Counts:
    """What the load's clients saw (mutable: the tasks add to it)."""

    reads: int = 0
    read_errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    initialize: dict[str, int] = field(default_factory=dict)
    idle_open: int = 0
    idle_closed_by_server: int = 0
    idle_connect_failures: int = 0


# -- the server ----------------------------------------------------------------------------------------------------


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    port: int
    stderr_path: Path

    def peak_rss_mb(self) -> float:
        return _status_kb(self.process.pid, "VmHWM") / 1024

    def stderr_bytes(self) -> int:
        return self.stderr_path.stat().st_size


def _status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


@contextmanager
def serving(root: Path, workdir: Path, name: str, *options: str) -> Iterator[Server]:
    """`skillwire serve ROOT --http 127.0.0.1:0 OPTIONS` at its default limits, stderr to a file."""
    stderr_path = workdir / f"{name}.stderr"
    with stderr_path.open("wb") as err:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "skillwire",
                "serve",
                str(root),
                "--http",
                f"{HOST}:0",
                "--quiet",
                "--no-watch",
                *options,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + 60
        port = None
        while port is None and time.monotonic() < deadline and process.poll() is None:
            match = _LISTENING.search(stderr_path.read_bytes())
            port = int(match.group(1)) if match else None
            time.sleep(0.1)
        if port is None:
            raise SystemExit(f"the server did not start: {stderr_path.read_bytes()[-2000:]!r}")
        yield Server(process, port, stderr_path)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# -- a minimal HTTP/1.1 client (the load itself must not need the CPU of a full client library) --------------------


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> tuple[int, bytes]:
    writer.write(request)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    body = await reader.readexactly(length) if length else b""
    return status, body


def _post(port: int, body: dict[str, Any], headers: dict[str, str]) -> bytes:
    data = json.dumps(body, separators=(",", ":")).encode()
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: {HOST}:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {len(data)}",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def _read_request(port: int, uri: str, request_id: int) -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": request_id, "method": "resources/read", "params": {"uri": uri, "_meta": meta}}
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "resources/read", "Mcp-Name": uri}
    return _post(port, body, headers)


def _initialize_request(port: int) -> bytes:
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}}
    return _post(port, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}, {})


# -- the load ------------------------------------------------------------------------------------------------------


async def well_behaved(port: int, uris: list[str], expected: dict[str, str], reads: int, counts: Counts) -> None:
    """One client on one keep-alive connection, reading in turn; any failure is an error (and reconnects)."""
    connection: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    for n in range(reads):
        uri = uris[n % len(uris)]
        try:
            if connection is None:
                connection = await asyncio.open_connection(HOST, port)
            status, body = await asyncio.wait_for(_exchange(*connection, _read_request(port, uri, n + 1)), 30)
            text = json.loads(body)["result"]["contents"][0]["text"] if status == 200 else None
            if text != expected[uri]:
                raise ValueError(f"HTTP {status}: {body[:120]!r}")
            counts.reads += 1
        except Exception as err:
            counts.read_errors += 1
            if len(counts.error_samples) < 5:
                counts.error_samples.append(f"{type(err).__name__}: {err}"[:200])
            if connection is not None:
                connection[1].close()
            connection = None
    if connection is not None:
        connection[1].close()


async def initialize_flood(port: int, calls: int, connections: int, counts: Counts) -> None:
    """`calls` handshake-era initialize requests over `connections` keep-alive connections, no session reused."""
    remaining = calls

    async def worker() -> None:
        nonlocal remaining
        connection: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        while remaining > 0:
            remaining -= 1
            try:
                if connection is None:
                    connection = await asyncio.open_connection(HOST, port)
                status, _ = await asyncio.wait_for(_exchange(*connection, _initialize_request(port)), 30)
                key = str(status)
            except Exception as err:
                key = type(err).__name__
                if connection is not None:
                    connection[1].close()
                connection = None
            counts.initialize[key] = counts.initialize.get(key, 0) + 1
        if connection is not None:
            connection[1].close()

    await asyncio.gather(*(worker() for _ in range(connections)))


async def idle_holder(port: int, count: int, stop: asyncio.Event, counts: Counts) -> None:
    """Keep `count` connections open that never send a byte; reopen each one the server closes."""

    async def hold() -> None:
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection(HOST, port)
            except OSError:
                counts.idle_connect_failures += 1
                await asyncio.sleep(0.5)
                continue
            counts.idle_open += 1
            try:
                read = asyncio.ensure_future(reader.read(1))
                stopped = asyncio.ensure_future(stop.wait())
                await asyncio.wait({read, stopped}, return_when=asyncio.FIRST_COMPLETED)
                if read.done():
                    counts.idle_closed_by_server += 1
                else:
                    read.cancel()
                stopped.cancel()
            finally:
                counts.idle_open -= 1
                writer.close()

    await asyncio.gather(*(hold() for _ in range(count)))


async def load_phase(server: Server, args: argparse.Namespace, uris: list[str], expected: dict[str, str]) -> Counts:
    counts = Counts()
    stop = asyncio.Event()
    holder = asyncio.ensure_future(idle_holder(server.port, args.idle, stop, counts))
    for _ in range(100):  # let the idle connections pile up before the rest begins
        if counts.idle_open >= args.idle:
            break
        await asyncio.sleep(0.1)
    work = asyncio.gather(
        initialize_flood(server.port, args.initialize, 20, counts),
        *(well_behaved(server.port, uris, expected, args.reads, counts) for _ in range(args.clients)),
    )
    try:
        await asyncio.wait_for(work, args.timeout)
    finally:
        stop.set()
        await asyncio.wait_for(holder, 60)
    return counts


async def late_client(port: int) -> str:
    """A 2025-era (initialize handshake) SDK client arriving after the flood: does it get served?"""
    try:
        async with Client(f"http://{HOST}:{port}/mcp", mode="legacy", cache=None) as client:
            listing = await skills_list(client)
            return f"served ({len(listing.skills)} skills)"
    except Exception as err:
        return f"REFUSED: {type(err).__name__}: {err}"[:120]


async def big_reads(port: int, uri: str, concurrent: int, timeout: float) -> tuple[int, int]:
    """`concurrent` reads of the big file at once; (complete, failed)."""

    async def one(n: int) -> bool:
        try:
            reader, writer = await asyncio.open_connection(HOST, port, limit=64 * 1024 * 1024)
            try:
                status, body = await _exchange(reader, writer, _read_request(port, uri, n))
                return status == 200 and len(json.loads(body)["result"]["contents"][0]["text"]) == BIG_BYTES
            finally:
                writer.close()
        except Exception:
            return False

    results = await asyncio.wait_for(asyncio.gather(*(one(n) for n in range(concurrent))), timeout)
    return sum(results), len(results) - sum(results)


# -- the skills and the report -------------------------------------------------------------------------------------


def make_skills(root: Path, count: int) -> dict[str, str]:
    """`count` small skills (a SKILL.md and a reference each) and one with a 16 MiB file; uri -> text."""
    expected: dict[str, str] = {}
    for n in range(count):
        folder = root / f"skill-{n:03d}"
        (folder / "references").mkdir(parents=True)
        skill_md = f"---\nname: skill-{n:03d}\ndescription: Skill number {n} of the load bench\n---\n# Skill {n}\n"
        (folder / "SKILL.md").write_text(skill_md, encoding="utf-8")
        reference = f"Reference {n}.\n" + "Some guidance that a client reads.\n" * 40
        (folder / "references" / "guide.md").write_text(reference, encoding="utf-8")
        expected[f"skill://skill-{n:03d}/SKILL.md"] = skill_md
        expected[f"skill://skill-{n:03d}/references/guide.md"] = reference
    big = root / "big"
    big.mkdir()
    (big / "SKILL.md").write_text("---\nname: big\ndescription: One large file\n---\nBig.\n", encoding="utf-8")
    (big / "data.txt").write_bytes(b"0123456789abcde\n" * (BIG_BYTES // 16))
    return expected


def _row(what: str, value: str, bound: str = "", ok: bool | None = None) -> None:
    verdict = "" if ok is None else ("ok" if ok else "FAIL")
    print(f"| {what:<46} | {value:>22} | {bound:>12} | {verdict:<4} |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=5_000, help="idle connections held open (default 5000)")
    parser.add_argument("--initialize", type=int, default=10_000, help="initialize calls (default 10000)")
    parser.add_argument("--clients", type=int, default=50, help="well-behaved clients (default 50)")
    parser.add_argument("--reads", type=int, default=1_000, help="reads per client (default 1000)")
    parser.add_argument("--big-reads", type=int, default=20, help="concurrent reads of the 16 MiB file (default 20)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds a phase may take (default 600)")
    args = parser.parse_args(argv)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = args.idle + args.clients + args.big_reads + 512
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    with tempfile.TemporaryDirectory(prefix="skillwire-load-") as tmp:
        workdir = Path(tmp)
        root = workdir / "skills"
        expected = make_skills(root, 20)
        uris = sorted(expected)
        failed = False
        print(
            f"phase 1: {args.idle:,} idle connections held, {args.initialize:,} initialize calls, "
            f"{args.clients} clients x {args.reads:,} reads"
        )
        with serving(root, workdir, "load") as server:
            baseline = server.peak_rss_mb()
            started = time.monotonic()
            counts = asyncio.run(load_phase(server, args, uris, expected))
            elapsed = time.monotonic() - started
            late = asyncio.run(late_client(server.port))
            peak = server.peak_rss_mb()
            stderr_bytes = server.stderr_bytes()
            alive = server.process.poll() is None
        print(f"| {'measure':<46} | {'value':>22} | {'bound':>12} | {'':<4} |")
        print(f"|{'-' * 48}|{'-' * 24}|{'-' * 14}|{'-' * 6}|")
        total = args.clients * args.reads
        _row("well-behaved reads completed", f"{counts.reads:,} / {total:,}", str(total), counts.reads == total)
        _row("well-behaved read errors", f"{counts.read_errors:,}", "0", counts.read_errors == 0)
        initialize = ", ".join(f"{k}: {v:,}" for k, v in sorted(counts.initialize.items()))
        _row("initialize calls (by HTTP status)", initialize[:22], "", None)
        _row("idle connections closed by the server", f"{counts.idle_closed_by_server:,}", "", None)
        _row("server RSS at start (MB)", f"{baseline:.0f}", "", None)
        _row("server peak RSS during the load (MB)", f"{peak:.0f}", "< 250", peak < 250)
        _row("server stderr (bytes)", f"{stderr_bytes:,}", "< 1,000,000", stderr_bytes < 1_000_000)
        _row("2025-era client after the flood", late[:22], "served", late.startswith("served"))
        _row("phase 1 wall time (s)", f"{elapsed:.0f}", "", None)
        failed |= not (counts.read_errors == 0 and counts.reads == total and peak < 250)
        failed |= not (stderr_bytes < 1_000_000 and late.startswith("served") and alive)
        for sample in counts.error_samples:
            print(f"  read error: {sample}")
        with serving(root, workdir, "big") as server:
            baseline = server.peak_rss_mb()
            done, bad = asyncio.run(big_reads(server.port, "skill://big/data.txt", args.big_reads, args.timeout))
            peak = server.peak_rss_mb()
        _row(f"{args.big_reads} concurrent 16 MiB reads completed", f"{done} / {args.big_reads}", "", bad == 0)
        _row("server peak RSS, big reads (MB)", f"{peak:.0f} (start {baseline:.0f})", "< 250", peak < 250)
        failed |= bad != 0 or peak >= 250
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
