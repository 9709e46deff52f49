"""Bounded under unauthenticated load: timeouts, caps and budgets of `skillwire serve --http`.

skillwire choices (issue 10, item 4), each checked against a real server process with small limits;
`bench/load.py` measures the same bounds at full size.
"""

from __future__ import annotations

import http.client
import io
import json
import logging
import os
import resource
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from skillwire.service.connections import throttled_resource_errors
from tests.support.servers import EXAMPLE_SKILLS, HttpServer, http_server, resources_read, skills_list

DEADLINE_S = 15.0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}},
}


def _address(server: HttpServer) -> tuple[str, int]:
    parts = urlsplit(server.url)
    assert parts.hostname is not None
    assert parts.port is not None
    return parts.hostname, parts.port


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """True if the server closes `sock` (EOF or reset) within `seconds`, without sending a response."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def _get(server: HttpServer, path: str = "/") -> int:
    host, port = _address(server)
    conn = http.client.HTTPConnection(host, port, timeout=DEADLINE_S)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


def _initialize(server: HttpServer) -> tuple[int, str | None]:
    host, port = _address(server)
    conn = http.client.HTTPConnection(host, port, timeout=DEADLINE_S)
    try:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        conn.request("POST", "/mcp", body=json.dumps(INITIALIZE), headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("mcp-session-id")
    finally:
        conn.close()


@pytest.fixture(scope="module")
def short_timeouts() -> Iterator[HttpServer]:
    with http_server([EXAMPLE_SKILLS], "--quiet", "--no-watch", "--idle-timeout", "1", "--header-timeout", "2") as s:
        yield s
        s.assert_alive()


def test_silent_connection_is_closed_after_the_idle_timeout(short_timeouts: HttpServer) -> None:
    """An attacker opening sockets and sending nothing held each one forever (19,990 of them hit the fd limit)."""
    with socket.create_connection(_address(short_timeouts)) as sock:
        assert _closed_within(sock, DEADLINE_S)


def test_request_sent_a_byte_at_a_time_is_cut_off_after_the_header_timeout(short_timeouts: HttpServer) -> None:
    """Slowloris: a request head dribbled out a byte at a time never completed and was never closed."""
    with socket.create_connection(_address(short_timeouts)) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\n")
        deadline = time.monotonic() + DEADLINE_S
        closed = False
        while time.monotonic() < deadline and not closed:
            try:
                sock.sendall(b"X")
            except OSError:
                closed = True
                break
            closed = _closed_within(sock, 0.3)
        assert closed, "the server kept a request that never finished"
    assert _get(short_timeouts) == 200  # the timeouts touch no request that arrives whole


def test_connections_past_the_cap_are_closed_at_once_and_logged_once(tmp_path: Path) -> None:
    """Excess connections were accepted and held (and queued behind limit_concurrency); now closed at accept."""
    with http_server([EXAMPLE_SKILLS], "--quiet", "--no-watch", "--max-connections", "8", "--idle-timeout", "60") as s:
        with ExitStack() as held:
            for _ in range(8):
                held.enter_context(socket.create_connection(_address(s)))
            refused = 0
            for _ in range(30):
                with socket.create_connection(_address(s)) as extra:
                    refused += _closed_within(extra, DEADLINE_S)
            assert refused == 30
        status = 0
        deadline = time.monotonic() + DEADLINE_S
        while status != 200 and time.monotonic() < deadline:  # the held ones close as the server reads their EOF
            try:
                status = _get(s)
            except (ConnectionError, http.client.RemoteDisconnected):
                time.sleep(0.1)
        assert status == 200
        s.assert_alive()
        assert s.stderr.count("refusing new ones") == 1, s.stderr


@pytest.mark.skipif(not hasattr(resource, "prlimit"), reason="lowers the server's fd limit with prlimit (Linux)")
def test_connection_flood_into_the_fd_limit_stays_quiet_and_serving() -> None:
    """299k "Too many open files" tracebacks (123 MB of stderr) came from a flood that reached the fd limit.

    The server's limit is lowered under it after start, so its connection cap no longer fits: accept() hits EMFILE.
    """
    with http_server([EXAMPLE_SKILLS], "--quiet", "--no-watch", "--idle-timeout", "60", fresh=True) as s:
        resource.prlimit(s.pid, resource.RLIMIT_NOFILE, (320, 320))
        with ExitStack() as held:
            for _ in range(400):  # more than the server has descriptors
                with suppress(OSError):
                    held.enter_context(socket.create_connection(_address(s), timeout=DEADLINE_S))
            time.sleep(2)
            s.assert_alive()
        deadline = time.monotonic() + DEADLINE_S
        status = 0
        while status != 200 and time.monotonic() < deadline:
            try:
                status = _get(s)
            except (ConnectionError, http.client.RemoteDisconnected):
                time.sleep(0.1)
        assert status == 200
        assert "Traceback" not in s.stderr
        assert len(s.stderr.splitlines()) <= 3, s.stderr


def test_burst_of_out_of_descriptor_errors_is_one_log_line() -> None:
    """asyncio, uvicorn and our reads each log EMFILE with a traceback, once per attempt: that is the storm."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with throttled_resource_errors():
            for name in ("asyncio", "uvicorn.error", "skillwire.server.skill_service") * 1000:
                try:
                    raise OSError(24, "Too many open files")
                except OSError:
                    logging.getLogger(name).error("socket.accept() out of system resource", exc_info=True)
            logging.getLogger("skillwire.server.skill_service").error("an unrelated error")
    finally:
        root.removeHandler(handler)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2, lines[:5]
    assert "Too many open files" in lines[0]
    assert "Traceback" not in out.getvalue()
    assert lines[1] == "an unrelated error"


def test_session_flood_does_not_lock_out_a_later_handshake_client() -> None:
    """10,000 `initialize` calls filled the SDK's session table; every later 2025-era client got 503 for 30 min."""
    with http_server([EXAMPLE_SKILLS], "--quiet", "--no-watch", "--max-sessions", "5") as s:
        statuses = [_initialize(s) for _ in range(30)]
        assert {status for status, _ in statuses} == {200}
        first = statuses[0][1]
        assert first is not None

        async def late_client() -> int:
            async with Client(s.url, mode="legacy", cache=None) as client:
                return len((await skills_list(client)).skills)

        assert anyio.run(late_client) > 0
        host, port = _address(s)
        conn = http.client.HTTPConnection(host, port, timeout=DEADLINE_S)
        headers = {"Content-Type": "application/json", "Accept": "application/json", "Mcp-Session-Id": first}
        conn.request("POST", "/mcp", body=json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}), headers=headers)
        assert conn.getresponse().status == 404  # the oldest idle flood session was ended to make room
        conn.close()
        s.assert_alive()


def test_listen_streams_past_the_cap_are_refused() -> None:
    """3,000 `subscriptions/listen` streams were all accepted, each holding a connection and a task."""

    async def main(url: str) -> list[str]:
        outcomes: list[str] = []
        async with Client(url, mode="auto", cache=None) as client:
            async with client.listen(resources_list_changed=True), client.listen(resources_list_changed=True):
                try:
                    async with client.listen(resources_list_changed=True):
                        outcomes.append("accepted")
                except MCPError as err:
                    outcomes.append(err.error.message)
            # Room again once the streams close: the server sees a close a moment after the client does.
            with anyio.fail_after(10):
                while "accepted after" not in outcomes:
                    try:
                        async with client.listen(resources_list_changed=True):
                            outcomes.append("accepted after")
                    except MCPError as err:
                        if err.error.message != "Subscription limit reached":
                            raise
                        await anyio.sleep(0.05)
        return outcomes

    with http_server([EXAMPLE_SKILLS], "--quiet", "--max-listen-streams", "2") as s:
        assert anyio.run(main, s.url) == ["Subscription limit reached", "accepted after"]
        s.assert_alive()


def _peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads peak RSS from /proc")
def test_concurrent_big_reads_stay_within_the_read_budget(tmp_path: Path) -> None:
    """20 concurrent reads of a 16 MiB file peaked at 697 MB: every read held its whole file at once."""
    skill = tmp_path / "skills" / "big"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: big\ndescription: A big file\n---\nBig.\n", encoding="utf-8")
    (skill / "data.txt").write_bytes(b"0123456789abcdef" * (12 * 1024 * 1024 // 16))  # 12 MiB of text
    uri = "skill://big/data.txt"

    async def main(url: str) -> list[int]:
        sizes: list[int] = []
        go = anyio.Event()
        ready = 0

        async def read() -> None:
            nonlocal ready
            async with Client(url, mode="auto", cache=None) as client:
                ready += 1
                await go.wait()  # every client connected first: the reads arrive together
                result = await resources_read(client, uri)
                sizes.append(len(result.contents[0]["text"]))

        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                for _ in range(12):
                    tg.start_soon(read)
                while ready < 12:
                    await anyio.sleep(0.05)
                go.set()
        return sizes

    with http_server([tmp_path / "skills"], "--quiet", "--no-watch", "--read-budget-mb", "16", fresh=True) as s:
        baseline = _peak_rss_mb(s.pid)
        sizes = anyio.run(main, s.url)
        assert sizes == [12 * 1024 * 1024] * 12
        peak = _peak_rss_mb(s.pid)
        s.assert_alive()
    # One 12 MiB read in flight costs about 3x its size; twelve at once cost over 300 MB.
    assert peak - baseline < 120, (baseline, peak)
