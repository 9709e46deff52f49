"""Starting to serve over HTTP (skillwire choice, issue 13): the port opens only once requests are answered, so
set-up work that holds the event loop (a watcher walking every folder) never keeps a client that connects at once
waiting for its first answer."""

from __future__ import annotations

import http.client
import json
import socket
import time

import anyio
from anyio.abc import TaskStatus
from bench.startup import DISCOVER

from skillwire.server.extension import SkillsExtension
from skillwire.server.skill_service import SkillService
from skillwire.service.run import bind, build_server, serve_http
from skillwire.service.watch import LiveReload
from skillwire.sources.memory.source import MemorySource
from skillwire.sources.port import Rebuild, WatchableSource, WatchPace
from tests.sources.contract.cases import skill_md

SETUP_S = 2.0  # how long the watcher's set-up holds the event loop


class SlowToWatch(MemorySource, WatchableSource):
    """Skills in memory whose watcher blocks the event loop while it sets up, as watchfiles does while it walks
    every folder under a large root (it holds the interpreter's lock: a worker thread would not help)."""

    set_up_at: float | None = None

    async def watch(self, rebuild: Rebuild, *, pace: WatchPace, task_status: TaskStatus[None]) -> None:
        time.sleep(SETUP_S)  # blocking on purpose: the start work that must not meet a waiting request
        self.set_up_at = time.monotonic()
        task_status.started()
        await anyio.sleep_forever()


def _first_connection(port: int, deadline: float) -> tuple[socket.socket, float]:
    """A connection made as soon as the port accepts one, and when that was."""
    while time.monotonic() < deadline:
        try:
            conn = socket.create_connection(("127.0.0.1", port), timeout=0.05)
        except OSError:
            time.sleep(0.005)
            continue
        return conn, time.monotonic()
    raise AssertionError("the port never opened")


def _discover_at_once(port: int) -> tuple[int, dict[str, object], float, float]:
    """Connect the moment the port accepts, send `server/discover`: status, body, when it opened, when answered."""
    conn, opened = _first_connection(port, time.monotonic() + 30)
    conn.close()
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "server/discover",
    }
    try:
        client.request("POST", "/mcp", DISCOVER, headers)
        response = client.getresponse()
        body = json.loads(response.read())
    finally:
        client.close()
    return response.status, body, opened, time.monotonic()


def test_a_request_sent_as_soon_as_the_port_opens_is_answered_at_once() -> None:
    """The port opens after the watcher's blocking set-up, not before it: a `server/discover` sent the moment a
    connection succeeds is answered well within the set-up's length (before, it waited for all of it)."""
    source = SlowToWatch({"pdf/SKILL.md": skill_md("pdf")})
    service = SkillService(source)
    server = build_server(SkillsExtension(service))
    live = LiveReload(service)
    live.install(server)
    sock = bind("127.0.0.1", 0)

    async def main() -> tuple[int, dict[str, object], float, float]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: serve_http(server, sock, live=live))
            # The client runs on its own thread: the server's event loop is the one being blocked.
            found = await anyio.to_thread.run_sync(_discover_at_once, sock.getsockname()[1])
            tg.cancel_scope.cancel()
        return found

    status, body, opened, answered = anyio.run(main)
    assert status == 200, body
    result = body["result"]
    assert isinstance(result, dict)
    assert "2026-07-28" in result["supportedVersions"]
    assert source.set_up_at is not None
    assert source.set_up_at <= opened
    assert answered - opened < SETUP_S / 2, "the first request waited for the watcher's set-up"
