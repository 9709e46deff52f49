"""A gateway's skills are skills like any other (issue 21, point 6): beside a folder source in one server, behind
the same tokens and scopes, found by the same search, counted by the same metrics.

Real processes: an upstream `skillwire serve examples/skills` and a gateway `serve team=FOLDER vendor=mcp:URL`.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from skillwire.client.session import SkillsClient
from tests.support.servers import EXAMPLE_SKILLS, HttpServer, http_server, serve_command, stateless_post
from tests.support.skills import write_skill

pytestmark = pytest.mark.anyio

VENDOR, TEAM, OPERATOR = (secrets.token_urlsafe(24) for _ in range(3))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    work = tmp_path_factory.mktemp("mixed")
    write_skill(work / "team", "refund-notes", description="Notes on refunds our own team keeps")
    (work / "tokens.txt").write_text(
        f"{VENDOR} subject=vendor-reader\n{TEAM} subject=team-reader\n{OPERATOR} subject=ops "
        "scopes=skillwire:operator\n",
        encoding="utf-8",
    )
    (work / "scopes.toml").write_text(
        '[[grant]]\nsubject = "vendor-reader"\nskills = ["vendor/**"]\n\n'
        '[[grant]]\nsubject = "team-reader"\nskills = ["team/**"]\n',
        encoding="utf-8",
    )
    with http_server([EXAMPLE_SKILLS], "--no-watch") as upstream:
        specs = (f"team={work / 'team'}", f"vendor=mcp:{upstream.url}")
        options = ("--search-tool", "--token-file", str(work / "tokens.txt"), "--scopes", str(work / "scopes.toml"))
        command = serve_command([], *specs, "--http", "127.0.0.1:0", "--gateway-cache", str(work / "cache"), *options)
        with http_server([], command=command) as server:
            yield server
            server.assert_alive()


async def _listed(gateway: HttpServer, token: str) -> list[str]:
    async with SkillsClient.connect(gateway.url, headers={"Authorization": f"Bearer {token}"}) as client:
        return sorted(e.uri for e in (await client.list_entries()).entries)


def _search(gateway: HttpServer, token: str, query: str) -> list[str]:
    params = {"name": "search_skills", "arguments": {"query": query, "limit": 10}}
    response = stateless_post(gateway.url, "tools/call", params, token=token)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return [skill["uri"] for skill in result["structuredContent"]["skills"]]


async def test_scopes_give_each_caller_its_own_source_of_a_mixed_gateway(gateway: HttpServer) -> None:
    vendor = await _listed(gateway, VENDOR)
    assert len(vendor) == 5
    assert all(uri.startswith("skill://vendor/") for uri in vendor)
    assert await _listed(gateway, TEAM) == ["skill://team/refund-notes/SKILL.md"]


def test_search_finds_gateway_skills_within_the_callers_scope(gateway: HttpServer) -> None:
    assert _search(gateway, VENDOR, "refunds")[0] == "skill://vendor/acme/billing/refunds/SKILL.md"
    assert _search(gateway, TEAM, "refunds") == ["skill://team/refund-notes/SKILL.md"]


def test_metrics_count_the_gateways_skills_with_the_folders(gateway: HttpServer) -> None:
    base = gateway.url.removesuffix("/mcp")
    metrics = httpx2.get(f"{base}/metrics", headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=10)
    assert metrics.status_code == 200
    assert "skillwire_catalog_skills 6.0" in metrics.text
    ready = httpx2.get(f"{base}/readyz", headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=10).json()
    assert ready["skills"] == 6
