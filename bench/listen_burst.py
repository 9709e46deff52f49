"""A burst of `subscriptions/listen` requests from one token, and how long an ordinary request waits meanwhile.

python -m bench.listen_burst [--burst 1500] [--runs 3] [--kind listen|discover|no-token] [-- SERVE OPTIONS]

A fresh `skillwire serve examples/skills --http 127.0.0.1:PORT --token-file F --quiet` per run. A child process
opens `--burst` connections at once, each sending one request with the attacker's token, and holds every accepted
listen stream open until the run ends. Meanwhile this process sends `server/discover` with another token on a
fresh connection, one after another, and times each answer (connect to last byte). Printed per run: how the
burst's requests were answered, the server's CPU time (user + system, from /proc) while it was answered, and the
ordinary request's wait before the burst (median) and during it (median and worst).

`--kind` chooses what the burst sends, to compare a listen burst with what any client can send: `listen`;
`discover` (as many ordinary requests); `no-token` (listen requests without a token, answered 401 before
anything else: the least a request can cost). Issue 19: one token held all 256 listen slots, and an ordinary
request waited 5-7 s during a 1,500-listen burst.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
MODERN = "2026-07-28"
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "skills"
_LISTENING = re.compile(rb"listening on http://127\.0\.0\.1:(\d+)/mcp")
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
LISTEN_PARAMS = {"notifications": {"resourcesListChanged": True}}


def _request(port: int, token: str | None, method: str, params: dict[str, Any], *, close: bool = False) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
        + (f"Authorization: Bearer {token}\r\n" if token is not None else "")
        + "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {MODERN}\r\nMcp-Method: {method}\r\nContent-Length: {len(body)}\r\n"
        + ("Connection: close\r\n" if close else "")
        + "\r\n"
    )
    return head.encode() + body


# -- the burst (in a child process, so its own event loop does not slow the timed client) ---------------------------


@dataclass(frozen=True)
class Burst:
    """What the child process sends, and the events and queue it reports through."""

    port: int
    request: bytes
    count: int
    done: Any  # multiprocessing.Event: every request answered
    outcome: Any  # multiprocessing.Queue: (seconds, {answer: count})
    release: Any  # multiprocessing.Event: close the held streams and exit


def _burst(burst: Burst) -> None:
    asyncio.run(_burst_async(burst))


async def _burst_async(burst: Burst) -> None:
    held: list[asyncio.StreamWriter] = []
    tally: dict[str, int] = {}

    async def one() -> None:
        try:
            reader, writer = await asyncio.open_connection(HOST, burst.port)
            writer.write(burst.request)
            await writer.drain()
            answer = b""
            while b"\r\n\r\n" not in answer or not _complete(answer):
                chunk = await asyncio.wait_for(reader.read(65536), 60)
                if not chunk:
                    break
                answer += chunk
        except (OSError, TimeoutError) as error:
            key = type(error).__name__
        else:
            key = _classify(answer)
            if key == "accepted":
                held.append(writer)
            else:
                writer.close()
        tally[key] = tally.get(key, 0) + 1

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(burst.count)))
    burst.outcome.put((time.perf_counter() - start, tally))
    burst.done.set()
    await asyncio.get_running_loop().run_in_executor(None, burst.release.wait)
    for writer in held:
        writer.close()


def _complete(answer: bytes) -> bool:
    head, _, body = answer.partition(b"\r\n\r\n")
    if b"text/event-stream" in head:
        return b"acknowledged" in body or b'"error"' in body
    match = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
    return match is None or len(body) >= int(match.group(1))


def _classify(answer: bytes) -> str:
    head, _, body = answer.partition(b"\r\n\r\n")
    status = head.split(b" ", 2)[1].decode() if head.startswith(b"HTTP/") else "?"
    if b"acknowledged" in body:
        return "accepted"
    if b'"result"' in body:
        return f"HTTP {status} result"
    message = re.search(rb'"message":"([^"]{0,80})', body)
    return f"HTTP {status} " + (message.group(1).decode() if message else body[:40].decode(errors="replace"))


# -- the timed ordinary request and the server -------------------------------------------------------------------


def ordinary(port: int, token: str) -> float:
    """Seconds from connecting to the whole answer of one `server/discover` (it must be a 200)."""
    start = time.perf_counter()
    with socket.create_connection((HOST, port), timeout=120) as conn:
        conn.sendall(_request(port, token, "server/discover", {}, close=True))
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    if not answer.startswith(b"HTTP/1.1 200"):
        raise SystemExit(f"bench.listen_burst: the ordinary request was answered {answer[:80]!r}")
    return time.perf_counter() - start


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (from /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _burst_request(kind: str, port: int, attacker: str) -> bytes:
    if kind == "listen":
        return _request(port, attacker, "subscriptions/listen", LISTEN_PARAMS)
    if kind == "no-token":
        return _request(port, None, "subscriptions/listen", LISTEN_PARAMS)
    return _request(port, attacker, "server/discover", {})


def run_once(count: int, kind: str, extra: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        attacker, victim = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        tokens = Path(tmp, "tokens")
        tokens.write_text(f"{attacker} subject=attacker\n{victim} subject=victim\n", encoding="utf-8")
        tokens.chmod(0o600)
        log = Path(tmp, "server.log")
        command = [sys.executable, "-m", "skillwire", "serve", str(EXAMPLES), "--http", f"{HOST}:0"]
        command += ["--token-file", str(tokens), "--quiet", *extra]
        with log.open("wb") as sink:
            server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=sink, cwd=ROOT)
        try:
            port = _wait_for_port(server, log)
            before = [ordinary(port, victim) for _ in range(10)]
            burst = Burst(
                port,
                _burst_request(kind, port, attacker),
                count,
                multiprocessing.Event(),
                multiprocessing.Queue(),
                multiprocessing.Event(),
            )
            child = multiprocessing.Process(target=_burst, args=(burst,))
            cpu_start = cpu_seconds(server.pid)
            child.start()
            time.sleep(0.05)  # the burst's connections are being opened and sent
            during: list[float] = []
            while not burst.done.is_set() or not during:
                during.append(ordinary(port, victim))
            took, tally = burst.outcome.get(timeout=300)
            cpu = cpu_seconds(server.pid) - cpu_start
            burst.release.set()
            child.join(60)
            return {"before": before, "during": during, "took": took, "tally": tally, "cpu": cpu}
        finally:
            server.terminate()
            server.wait(30)


def _wait_for_port(server: subprocess.Popen[bytes], log: Path) -> int:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        match = _LISTENING.search(log.read_bytes())
        if match:
            return int(match.group(1))
        if server.poll() is not None:
            raise SystemExit(f"bench.listen_burst: the server exited: {log.read_text()[-500:]}")
        time.sleep(0.05)
    raise SystemExit("bench.listen_burst: the server did not listen within 60 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--burst", type=int, default=1_500, help="requests sent at once (default 1500)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kind", choices=("listen", "discover", "no-token"), default="listen")
    parser.add_argument("serve_options", nargs="*", help="more `skillwire serve` options (after --)")
    args = parser.parse_args()
    print(f"burst: {args.burst:,} requests at once ({args.kind}); the timed ordinary one: server/discover")
    for n in range(args.runs):
        result = run_once(args.burst, args.kind, args.serve_options)
        before, during = result["before"], result["during"]
        tally = ", ".join(f"{count} {key}" for key, count in sorted(result["tally"].items(), key=lambda kv: -kv[1]))
        print(f"run {n + 1}: answered in {result['took']:.2f} s, server CPU {result['cpu']:.2f} s: {tally}")
        print(
            f"  ordinary request: before {statistics.median(before) * 1000:.0f} ms (median of {len(before)}); "
            f"during the burst median {statistics.median(during) * 1000:.0f} ms, "
            f"worst {max(during) * 1000:.0f} ms ({len(during)} requests)"
        )


if __name__ == "__main__":
    main()
