"""Starting to serve (skillwire choice, issue 23): the port opens and answers once the catalog is built, without
waiting for the file watcher to set itself up (watchfiles walks every folder, about 0.7 s per 10,000 skills), and
a change made after the first answer is served all the same: the watcher catches up with one rescan once it is up.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import time
from pathlib import Path

import anyio
import pytest
from anyio.abc import TaskStatus
from bench.startup import DISCOVER
from mcp import Client

from skillwire.server.extension import SkillsExtension
from skillwire.server.skill_service import SkillService
from skillwire.service.run import bind, build_server, serve_http
from skillwire.service.watch import LiveReload
from skillwire.sources.memory.source import MemorySource
from skillwire.sources.port import Rebuild, WatchableSource, WatchPace
from tests.sources.contract.cases import skill_md
from tests.support.polling import eventually
from tests.support.servers import all_skills, http_server

BULK = 100  # the watcher walks BULK x BULK folders the index passes over: a set-up of a few tenths of a second


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class NotUpYet(MemorySource, WatchableSource):
    """Skills in memory whose watcher is not set up until the test says so."""

    def __init__(self, files: dict[str, bytes]) -> None:
        super().__init__(files)
        self.go = anyio.Event()
        self.up = False

    async def watch(self, rebuild: Rebuild, *, pace: WatchPace, task_status: TaskStatus[None]) -> None:
        await self.go.wait()
        self.up = True
        task_status.started()
        await anyio.sleep_forever()


def _discover_at_once(port: int) -> tuple[int, dict[str, object]]:
    """Connect the moment the port accepts, send `server/discover`: status and body."""
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.05).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "the port never opened"
            time.sleep(0.005)
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
        return response.status, json.loads(response.read())
    finally:
        client.close()


def test_the_port_answers_before_the_watcher_is_set_up() -> None:
    """`LiveReload` starts the watcher without waiting for it: a request sent the moment the port opens is answered
    while the watcher is not up (before, the port opened only once it was)."""
    source = NotUpYet({"pdf/SKILL.md": skill_md("pdf")})
    service = SkillService(source)
    server = build_server(SkillsExtension(service))
    live = LiveReload(service)
    live.install(server)
    sock = bind("127.0.0.1", 0)

    async def main() -> tuple[int, dict[str, object], bool]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: serve_http(server, sock, live=live))
            with anyio.fail_after(30):
                status, body = await anyio.to_thread.run_sync(_discover_at_once, sock.getsockname()[1])
            up = source.up
            source.go.set()
            tg.cancel_scope.cancel()
        return status, body, up

    status, body, up = anyio.run(main)
    assert status == 200, body
    result = body["result"]
    assert isinstance(result, dict)
    assert "2026-07-28" in result["supportedVersions"]
    assert not up


def write_skill(folder: Path, description: str) -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {folder.name}\ndescription: {description}\n---\n# Hi\n")


@pytest.mark.anyio
async def test_a_skill_added_right_after_the_first_answer_is_served(tmp_path: Path) -> None:
    """A real `skillwire serve --http` whose watcher takes a while to set up (a `.git` folder of 10,000 folders:
    passed over by the index, walked by the watcher). The first answer comes before the watcher is up; a skill
    added right after it is found by the watcher's catch-up rescan and served."""
    root = tmp_path / "skills"
    write_skill(root / "alpha", "The first")
    for i in range(BULK):
        for j in range(BULK):
            os.makedirs(root / ".git" / f"{i:02}" / f"{j:02}")
    with http_server([root], "-v") as server:
        async with Client(server.url, mode="auto", cache=None) as client:
            first = await all_skills(client)
            write_skill(root / "beta", "Added right after the first answer")

            async def beta_listed() -> bool:
                return any(s["uri"] == "skill://beta/SKILL.md" for s in await all_skills(client))

            await eventually(beta_listed, "the skill added after the first answer is listed", deadline_s=30)

        async def rebuild_logged() -> bool:  # the server's stderr reaches this test a little after the fact
            log = server.stderr
            up = re.search(r"watching \S+ \(set up in [\d.]+ s\)", log)
            return up is not None and "catalog rebuilt: " in log[up.end() :]

        await eventually(rebuild_logged, "the catch-up rebuild is logged", deadline_s=30)
        server.assert_alive()
        log = server.stderr
    assert [s["uri"] for s in first] == ["skill://alpha/SKILL.md"]
    listening = log.index("listening on")
    up = re.search(r"watching \S+ \(set up in [\d.]+ s\)", log)
    assert up is not None, log
    assert listening < up.start(), "the port opened only once the watcher was up"
    # The catch-up rescan, the first rebuild once the watcher is up, found beta: it was added before that rescan.
    rebuilt = re.search(r"catalog rebuilt: (\d+) skills", log[up.end() :])
    assert rebuilt is not None, log
    assert rebuilt.group(1) == "2", log
