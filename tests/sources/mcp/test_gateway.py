"""A gateway in front of a real `skillwire serve` (issue 21, points 1 and 2): the same skills, files, bytes, digests,
sizes and frontmatter under the gateway's prefix, through the service in-process and through a real gateway
process to a verifying client in both eras; and what stays served when the upstream stops, across a restart.

Three processes in all: the upstream for the module, the gateway process, and an upstream that is stopped.
"""

from __future__ import annotations

import base64
import hashlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from skillwire.client.session import SkillsClient
from skillwire.core.hosting.verify import verify_bytes, verify_frontmatter
from skillwire.core.uri import normal_uri
from skillwire.server.skill_service import SkillService
from skillwire.sources.composite import CompositeSource, Member
from skillwire.sources.mcp import PROVENANCE_KEY, GatewayCache, McpSource, parse_upstream
from skillwire.sources.memory.source import MemorySource
from tests.interop.fixture import expected_files, write_edge_skills
from tests.sources.contract.cases import skill_md
from tests.support.servers import MODERN_VERSION, HttpServer, http_server, serve_command
from tests.support.skills import write_skill

pytestmark = pytest.mark.anyio

VENDOR = "skill://vendor/"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def upstream_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The interop edge cases: a nested skill, a binary file, names beyond ASCII, CRLF and a BOM, deep folders."""
    return write_edge_skills(tmp_path_factory.mktemp("upstream") / "skills")


@pytest.fixture(scope="module")
def upstream(upstream_root: Path) -> Iterator[HttpServer]:
    """`skillwire serve` over HTTP, two skills a page (so the gateway pages through the listing)."""
    with http_server([upstream_root], "--page-size", "2", "--no-watch") as server:
        yield server
        server.assert_alive()


def on_disk(root: Path) -> dict[str, str]:
    """Every upstream file as the gateway serves it: {normal URI under the prefix: sha256 hex of its bytes}."""
    return {normal_uri(VENDOR + uri.removeprefix("skill://")): hexed for uri, hexed in expected_files([root]).items()}


def under_prefix(uri: str) -> str:
    return VENDOR + uri.removeprefix("skill://")


async def read_bytes(service: SkillService, uri: str) -> bytes:
    content = (await service.read_resource(uri, modern=True))["contents"][0]
    return base64.b64decode(content["blob"]) if "blob" in content else content["text"].encode()


def every_entry(service: SkillService) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = service.list_skills(cursor, modern=True)
        entries += page["skills"]
        cursor = page.get("nextCursor")
        if cursor is None:
            return entries


async def test_the_gateway_serves_every_upstream_skill_under_its_prefix_byte_for_byte(
    upstream: HttpServer, upstream_root: Path, tmp_path: Path
) -> None:
    """Beside a local source, every upstream entry is served at skill://vendor/...: the same frontmatter, the same
    digests and sizes at the re-rooted URIs, provenance in `_meta`, and every read returns the bytes on disk."""
    async with SkillsClient.connect(upstream.url) as direct:
        listing = await direct.list_entries()
    assert listing.complete
    local = MemorySource({"local/SKILL.md": skill_md("local")})
    gateway = McpSource(parse_upstream(upstream.url), cache=GatewayCache(tmp_path))
    service = SkillService(CompositeSource([Member(local), Member(gateway, ("vendor",))]))
    served = {e["uri"]: e for e in every_entry(service)}
    assert set(served) == {"skill://local/SKILL.md", *(under_prefix(e.uri) for e in listing.entries)}
    assert service.refusals == ()
    expected = on_disk(upstream_root)
    read: dict[str, str] = {}
    for entry in listing.entries:
        mine = served[under_prefix(entry.uri)]
        assert mine["frontmatter"] == dict(entry.frontmatter)
        resources = entry.resources
        assert not isinstance(resources, str)
        assert sorted((normal_uri(r["uri"]), r["digest"], r["size"]) for r in mine["resources"]) == sorted(
            (normal_uri(under_prefix(r.uri)), r.digest, r.size) for r in resources
        )
        provenance = mine["_meta"][PROVENANCE_KEY]
        assert (provenance["server"], provenance["uri"]) == (upstream.url, entry.uri)
        assert provenance["verifiedAt"].endswith("Z")
        for r in mine["resources"]:
            data = await read_bytes(service, r["uri"])
            assert ("sha256:" + hashlib.sha256(data).hexdigest(), len(data)) == (r["digest"], r["size"])
            read[normal_uri(r["uri"])] = hashlib.sha256(data).hexdigest()
    assert read == expected
    assert "_meta" not in served["skill://local/SKILL.md"]


@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_a_gateway_process_serves_a_verifying_client_in_both_eras(
    gateway_process: HttpServer, upstream_root: Path, era: str
) -> None:
    """`skillwire serve vendor=mcp:URL --http`: a client that verifies every byte against the gateway's manifest
    (size, digest, SKILL.md's frontmatter) reads every upstream file, with the bytes on disk."""
    expected = on_disk(upstream_root)
    read: dict[str, str] = {}
    async with SkillsClient.connect(gateway_process.url, mode=era) as client:
        if era == "auto":
            assert client.protocol_version == MODERN_VERSION
        else:
            assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
        listing = await client.list_entries()
        assert listing.complete
        assert listing.problems == ()
        for entry in listing.entries:
            resources = entry.resources
            assert not isinstance(resources, str)
            for resource in resources:
                data = await client.read(resource.uri, size=resource.size)
                verify_bytes(resource, data)
                if resource.uri == entry.uri:
                    verify_frontmatter(entry, data)
                read[normal_uri(resource.uri)] = hashlib.sha256(data).hexdigest()
    assert read == expected


@pytest.fixture(scope="module")
def gateway_process(upstream: HttpServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    cache = tmp_path_factory.mktemp("gateway-cache")
    command = serve_command([], f"vendor=mcp:{upstream.url}", "--http", "127.0.0.1:0", "--gateway-cache", str(cache))
    with http_server([], command=[*command, "--no-watch"]) as server:
        yield server
        server.assert_alive()


async def test_an_upstream_that_stops_keeps_its_verified_state_served_across_a_restart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Upstream stopped: a rebuild still serves every file verified before, and the log says the upstream is stale
    and since when. A restart (a new source over the same cache) with the upstream still down serves the same at
    once, and after its own failed refresh."""
    root = tmp_path / "skills"
    write_skill(root, "pdf", description="Fill PDF forms")
    (root / "pdf" / "forms" / "w9.md").parent.mkdir()
    (root / "pdf" / "forms" / "w9.md").write_bytes(b"# W-9\r\n")
    write_skill(root, "notes")
    cache = tmp_path / "gateway"
    with http_server([root], "--no-watch") as up:
        url = up.url
        service = SkillService(McpSource(parse_upstream(url), cache=GatewayCache(cache)))
        before = every_entry(service)
    assert len(before) == 2
    with caplog.at_level(logging.WARNING, logger="skillwire.sources.mcp.source"):
        await service.rebuild()
    assert every_entry(service) == before
    assert [(r.rule, r.skill) for r in service.refusals] == [("upstream-unavailable", False)]
    assert f"mcp {url} is stale since " in caplog.text

    restarted = SkillService(McpSource(parse_upstream(url), cache=GatewayCache(cache)))
    assert restarted.restored
    assert not restarted.stats.verified
    for service_now in (restarted, None):
        if service_now is None:
            await restarted.rebuild()  # the refresh fails: the kept state stays
            assert restarted.stats.verified
        assert every_entry(restarted) == before
        for entry in before:
            for r in entry["resources"]:
                data = await read_bytes(restarted, r["uri"])
                assert ("sha256:" + hashlib.sha256(data).hexdigest(), len(data)) == (r["digest"], r["size"])
    assert await read_bytes(restarted, "skill://pdf/forms/w9.md") == b"# W-9\r\n"
