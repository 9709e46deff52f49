"""A burst of `subscriptions/listen` requests from one token, and how long an ordinary request waits meanwhile.

python -m bench.listen_burst [--burst 1500] [--runs 3]

A fresh `skillwire serve examples/skills --http 127.0.0.1:PORT --token-file F` per run. A child process opens
`--burst` connections at once, each sending one listen request with the attacker's token, and holds every
accepted stream open until the run ends. Meanwhile this process sends `server/discover` with another token on a
fresh connection, one after another, and times each answer (connect to the last byte). Printed per run: how many
listen requests were accepted and refused (and the refusal seen), how long the burst took to be answered, and the
ordinary request's wait before the burst (median) and during it (median and worst).

Issue 19: one token held all 256 slots, and an ordinary request waited 5-7 s during a 1,500-listen burst.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
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


def _request(port: int, token: str, method: str, params: dict[str, Any], *, close: bool = False) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {HOST}:{port}\r\nAuthorization: Bearer {token}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {MODERN}\r\nMcp-Method: {method}\r\nContent-Length: {len(body)}\r\n"
        + ("Connection: close\r\n" if close else "")
        + "\r\n"
    )
    return head.encode() + body


# -- the burst (in a child process, so its own event loop does not slow the timed client) ---------------------------


def _burst(port: int, token: str, count: int, kind: str, done: Any, outcome: Any, release: Any) -> None:
    asyncio.run(_burst_async(port, token, count, kind, done, outcome, release))


async def _burst_async(port: int, token: str, count: int, kind: str, done: Any, outcome: Any, release: Any) -> None:
    if kind == "listen":
        request = _request(port, token, "subscriptions/listen", {"notifications": {"resourcesListChanged": True}})
    else:
        request = _request(port, token, "server/discover", {})
    held: list[asyncio.StreamWriter] = []
    tally: dict[str, int] = {}

    async def one() -> None:
        try:
            reader, writer = await asyncio.open_connection(HOST, port)
            writer.write(request)
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
    await asyncio.gather(*(one() for _ in range(count)))
    outcome.put((time.perf_counter() - start, tally))
    done.set()
    await asyncio.get_running_loop().run_in_executor(None, release.wait)
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
    return f"HTTP {status} " + (message.group(1).decode() if message else body[:60].decode(errors="replace"))


# -- the timed ordinary request -------------------------------------------------------------------------------------


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


def run_once(burst: int, kind: str, extra: list[str]) -> dict[str, Any]:
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
            done, release = multiprocessing.Event(), multiprocessing.Event()
            outcome: Any = multiprocessing.Queue()
            child = multiprocessing.Process(target=_burst, args=(port, attacker, burst, kind, done, outcome, release))
            child.start()
            time.sleep(0.05)  # the burst's connections are being opened and sent
            during: list[float] = []
            while not done.is_set() or not during:
                during.append(ordinary(port, victim))
            took, tally = outcome.get(timeout=300)
            release.set()
            child.join(60)
            return {"before": before, "during": during, "took": took, "tally": tally}
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
    parser.add_argument("--burst", type=int, default=1_500, help="listen requests sent at once (default 1500)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--kind",
        choices=("listen", "discover"),
        default="listen",
        help="what the burst sends: listen requests, or (to compare) as many ordinary server/discover requests",
    )
    parser.add_argument("serve_options", nargs="*", help="more `skillwire serve` options (after --)")
    args = parser.parse_args()
    what = "listen" if args.kind == "listen" else "server/discover"
    print(f"burst: {args.burst:,} {what} requests from one token at once; the timed ordinary one: server/discover")
    for n in range(args.runs):
        result = run_once(args.burst, args.kind, args.serve_options)
        before, during = result["before"], result["during"]
        tally = ", ".join(f"{count} {key}" for key, count in sorted(result["tally"].items(), key=lambda kv: -kv[1]))
        print(f"run {n + 1}: burst answered in {result['took']:.2f} s: {tally}")
        print(
            f"  ordinary request: before {statistics.median(before) * 1000:.0f} ms (median of {len(before)}); "
            f"during the burst median {statistics.median(during) * 1000:.0f} ms, "
            f"worst {max(during) * 1000:.0f} ms ({len(during)} requests)"
        )


if __name__ == "__main__":
    main()
