"""A gateway follows its upstream (issue 21, point 3): an edit upstream reaches the gateway's own clients within 5 s,
announced by `list_changed`, swapped in whole; an upstream that announces nothing is refreshed at its `ttlMs`.

Real processes: a watched `skillwire serve` upstream and a gateway `skillwire serve vendor=mcp:URL` in front of it.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from skillwire.client.session import SkillsClient
from skillwire.core.hosting.entry import SkillEntry
from skillwire.core.hosting.verify import verify_bytes, verify_frontmatter
from skillwire.sources.mcp import Settings
from tests.support.servers import http_server, serve_command
from tests.support.skills import write_skill

pytestmark = pytest.mark.anyio

FOLLOW_WITHIN_S = 5.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _entry(client: SkillsClient, uri: str) -> SkillEntry:
    listing = await client.list_entries()
    assert listing.complete
    return next(e for e in listing.entries if e.uri == uri)


async def _verified_whole(client: SkillsClient, entry: SkillEntry) -> dict[str, bytes]:
    """Every file of `entry` read through the gateway and verified against that one entry: never a mix."""
    files: dict[str, bytes] = {}
    assert not isinstance(entry.resources, str)
    for resource in entry.resources:
        data = await client.read(resource.uri, size=resource.size)
        verify_bytes(resource, data)
        if resource.uri == entry.uri:
            verify_frontmatter(entry, data)
        files[resource.uri] = data
    return files


async def test_an_upstream_edit_reaches_the_gateways_clients_within_5_s(tmp_path: Path) -> None:
    """The upstream (watching its folder) announces the edit on its listen stream; the gateway refreshes, swaps the
    skill whole and announces it on its own: a client listening to the gateway sees the new version within 5 s."""
    root = tmp_path / "skills"
    skill = write_skill(root, "pdf", description="Fill PDF forms")
    (skill / "forms.md").write_text("# Forms, first edition\n", encoding="utf-8")
    cache = tmp_path / "gateway"
    with http_server([root], "--quiet") as upstream:
        vendor = f"vendor=mcp:{upstream.url}"
        command = serve_command([], vendor, "--http", "127.0.0.1:0", "--gateway-cache", str(cache))
        with http_server([], command=command) as gateway:
            async with SkillsClient.connect(gateway.url) as client, client.changes() as events:
                before = await _entry(client, "skill://vendor/pdf/SKILL.md")
                assert before.frontmatter["description"] == "Fill PDF forms"

                write_skill(root, "pdf", description="Fill and sign PDF forms")
                (skill / "forms.md").write_text("# Forms, second edition\n", encoding="utf-8")
                edited = time.monotonic()
                after = before
                with anyio.fail_after(FOLLOW_WITHIN_S):
                    async for _ in events:
                        after = await _entry(client, "skill://vendor/pdf/SKILL.md")
                        files = await _verified_whole(client, after)
                        if files["skill://vendor/pdf/forms.md"] == b"# Forms, second edition\n":
                            break
                took = time.monotonic() - edited
            gateway.assert_alive()
    assert after.frontmatter["description"] == "Fill and sign PDF forms"
    assert took < FOLLOW_WITHIN_S


def test_an_upstream_that_announces_nothing_is_polled_at_its_ttl_within_bounds() -> None:
    settings = Settings(poll_s=60, poll_min_s=5, poll_max_s=3600)
    assert settings.poll_interval(None) == 60
    assert settings.poll_interval(300_000) == 300
    assert settings.poll_interval(0) == 5  # "do not cache" is not "ask without pause"
    assert settings.poll_interval(86_400_000) == 3600
    with pytest.raises(ValueError, match="poll_min_s"):
        Settings(poll_min_s=0)


def test_readyz_names_an_upstream_that_went_away_and_since_when(tmp_path: Path) -> None:
    """Upstream stopped: the gateway stays ready (it serves the last verified state), and `/readyz` and the log say
    which upstream is stale, since when and why; once the upstream is back, it is no longer listed."""
    root = tmp_path / "skills"
    write_skill(root, "pdf", description="Fill PDF forms")
    cache = tmp_path / "gateway"
    with http_server([root], "--quiet", "--no-watch") as upstream:
        url = upstream.url
        address = url.removeprefix("http://").split("/", 1)[0]
        vendor = f"vendor=mcp:{url}"
        command = serve_command([], vendor, "--http", "127.0.0.1:0", "--gateway-cache", str(cache), "--no-watch")
        with http_server([], command=command) as gateway:
            ready = httpx2.get(gateway.url.removesuffix("/mcp") + "/readyz", timeout=10)
            assert ready.status_code == 200
            assert "stale" not in ready.json()
            upstream.process.terminate()
            upstream.process.wait(timeout=10)
            stopped = time.time()
            gateway.process.send_signal(signal.SIGHUP)  # a rescan now: the refresh fails
            body: dict[str, Any] = {}
            deadline = time.monotonic() + 10
            while "stale" not in body and time.monotonic() < deadline:
                time.sleep(0.1)
                ready = httpx2.get(gateway.url.removesuffix("/mcp") + "/readyz", timeout=10)
                body = ready.json()
            assert ready.status_code == 200
            assert body["skills"] == 1
            (stale,) = body["stale"]
            assert stale["source"] == f"vendor=mcp {url}"
            assert stopped - 1 <= stale["since"] <= time.time()
            assert stale["reason"]
            assert f"mcp {url} is stale since " in gateway.stderr

            with http_server([root], "--quiet", "--no-watch", address=address):
                gateway.process.send_signal(signal.SIGHUP)
                deadline = time.monotonic() + 10
                while "stale" in body and time.monotonic() < deadline:
                    time.sleep(0.1)
                    body = httpx2.get(gateway.url.removesuffix("/mcp") + "/readyz", timeout=10).json()
                assert "stale" not in body
