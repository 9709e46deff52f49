"""Raw HTTP clients for `skillwire serve --http`: ones that ask and never read, ones that read everything.

No client library: a stalled reader is a real socket with a small receive buffer that sends one complete,
valid 2026-07-28 `resources/read` and then reads nothing, so the server's answer has nowhere to go.
`status_kb` reads a process's memory figures (VmRSS, VmHWM) from /proc, `wait_until_idle` waits until a
process has done all the work it is going to do (its CPU time stops growing).

    sock = stalled_socket(port, read_request(port, "skill://big/data.bin"))
    status, body = exchange(port, read_request(port, "skill://big/SKILL.md", token="..."))
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import time

HOST = "127.0.0.1"
MODERN = "2026-07-28"
RECEIVE_BUFFER = 4096


def read_request(
    port: int, uri: str, *, request_id: int = 1, token: str | None = None, tool: str | None = None
) -> bytes:
    """A complete HTTP/1.1 POST carrying a stateless 2026-07-28 `resources/read` of `uri` (with `tool`: a
    `tools/call` of that tool, `serve --tools`'s read_skill or read_skill_file, with `uri` as its argument)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    method, name = ("resources/read", uri) if tool is None else ("tools/call", tool)
    params = {"uri": uri} if tool is None else {"name": tool, "arguments": {"uri": uri}}
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}
    data = json.dumps(body, separators=(",", ":")).encode()
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: {HOST}:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {len(data)}",
        f"MCP-Protocol-Version: {MODERN}",
        f"Mcp-Method: {method}",
        f"Mcp-Name: {name}",
        *([f"Authorization: Bearer {token}"] if token else []),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def stalled_socket(port: int, request: bytes) -> socket.socket:
    """A connection that sends `request` and never reads: its 4 KiB receive buffer fills and the server must wait."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)  # before connect: sets the window scale
    sock.connect((HOST, port))
    sock.sendall(request)
    return sock


def exchange(port: int, request: bytes, *, timeout: float = 60.0) -> tuple[int, dict[str, str], bytes]:
    """Send `request` on a fresh connection and read the whole response: (status, headers, body)."""
    with socket.create_connection((HOST, port), timeout=timeout) as sock:
        sock.sendall(request)
        response = http.client.HTTPResponse(sock)
        response.begin()
        headers = {name.lower(): value for name, value in response.getheaders()}
        return response.status, headers, response.read()


def status_kb(pid: int, key: str) -> int:
    """A `/proc/PID/status` figure in KiB (`VmRSS`: now, `VmHWM`: the peak); an error if the process has none."""
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise LookupError(f"no {key} for process {pid}")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process `pid` so far, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_idle(pid: int, *, quiet: float = 0.5, timeout: float = 15.0) -> float:
    """Wait until process `pid` uses under 5% of a CPU over `quiet` seconds (at most `timeout` s); the seconds waited.

    A server given work it cannot finish (answers nobody reads) does what it will do and then waits: this says
    when, without guessing a fixed delay."""
    started = time.monotonic()
    before = cpu_seconds(pid)
    while time.monotonic() - started < timeout:
        time.sleep(quiet)
        now = cpu_seconds(pid)
        if now - before < 0.05 * quiet:
            break
        before = now
    return time.monotonic() - started
