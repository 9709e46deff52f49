"""Generated skills through a real server over HTTP and stdio: listed as "dynamic", read fresh, browsed, failing
safely. The server is `tests/support/generated_server.py`, built on skillwire's public API."""

from __future__ import annotations

import sys
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from skillwire import ApproveLoads, Host
from skillwire.core.frontmatter import parse_skill_md
from tests.support.generated_server import SECRET
from tests.support.servers import (
    REPO_ROOT,
    REQUEST_TIMEOUT_S,
    Transport,
    directory_read,
    http_server,
    resources_read,
    skills_get,
    skills_list,
    wire,
)

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "generated_server.py"
DAILY = "skill://reports/daily/SKILL.md"
INTERNAL_ERROR = -32603

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with http_server([], command=[sys.executable, str(SCRIPT), "--http", "127.0.0.1:0"]) as server:
        yield server.url
        server.assert_alive()


@asynccontextmanager
async def connected(transport: Transport, url: str, log_dir: Path) -> AsyncIterator[Client]:
    """An SDK client of the generated-skills server: the shared HTTP one, or a stdio one spawned for this test
    (most tests use HTTP only; one goes through everything over stdio, where each connection starts a server)."""
    async with AsyncExitStack() as stack:
        target: Any = url
        if transport == "stdio":
            log = stack.enter_context((log_dir / "stdio-server.log").open("w", encoding="utf-8"))
            target = stdio_client(
                StdioServerParameters(command=sys.executable, args=[str(SCRIPT)], cwd=REPO_ROOT), errlog=log
            )
        yield await stack.enter_async_context(Client(target, cache=None, read_timeout_seconds=REQUEST_TIMEOUT_S))


async def test_a_generated_skill_is_listed_and_got_as_dynamic(http_url: str, tmp_path: Path) -> None:
    """Spec MUST (Resources, Getting a Skill): a generated skill's entry carries `"resources": "dynamic"`, whether
    reached through skills/list or skills/get, with the frontmatter its author declared."""
    async with connected("http", http_url, tmp_path) as client:
        listed = {e["uri"]: e for e in wire(await skills_list(client))["skills"]}
        got = wire(await skills_get(client, DAILY))["skill"]
    assert listed[DAILY] == got
    assert got["resources"] == "dynamic"
    assert got["frontmatter"] == {
        "name": "daily",
        "description": "Assemble today's operational report from live data",
        "license": "MIT",
    }


async def test_a_generated_file_is_made_at_each_read_and_skill_md_matches_its_entry(
    http_url: str, tmp_path: Path
) -> None:
    """Spec MUST (Frontmatter): the SKILL.md served has the entry's frontmatter, read after read; skillwire choice:
    content is produced at each read (never cached: ttlMs 0) and served as the generator made it."""
    async with connected("http", http_url, tmp_path) as client:
        entry = wire(await skills_get(client, DAILY))["skill"]
        first = wire(await resources_read(client, DAILY))
        second = wire(await resources_read(client, DAILY))
        csv = wire(await resources_read(client, "skill://reports/daily/data/today.csv"))
    texts = [first["contents"][0]["text"], second["contents"][0]["text"]]
    assert texts[0] != texts[1]  # each read ran the generator again
    for text in texts:
        assert parse_skill_md(text.encode("utf-8")).frontmatter == entry["frontmatter"]
        assert "Read `data/today.csv`" in text
    assert first["contents"][0]["mimeType"] == "text/markdown"
    assert csv["contents"][0]["mimeType"] == "text/csv"
    assert csv["contents"][0]["text"].startswith("region,read\nnorth,")
    assert (first["ttlMs"], first["cacheScope"]) == (0, "private")


async def test_directory_reads_discover_a_generated_skills_files(http_url: str, tmp_path: Path) -> None:
    """Spec (Reading Directories): "For a dynamically generated skill, a directory read is the only way to discover
    the skill's files": every level answers, and a file lists no size (none exists until it is made)."""
    async with connected("http", http_url, tmp_path) as client:
        root = wire(await directory_read(client, "skill://reports/daily"))["resources"]
        data = wire(await directory_read(client, "skill://reports/daily/data"))["resources"]
        with pytest.raises(MCPError) as not_dir:
            await directory_read(client, "skill://reports/daily/data/today.csv")
    assert [(r["name"], r["mimeType"]) for r in root] == [
        ("daily", "text/markdown"),
        ("data", "inode/directory"),
        ("templates", "inode/directory"),
    ]
    assert data == [{"uri": "skill://reports/daily/data/today.csv", "name": "today.csv", "mimeType": "text/csv"}]
    assert not_dir.value.error.code == -32602


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("raises.txt", "could not generate"),
        ("hangs.txt", "longer than 1 s"),
        ("too-large.bin", "over the limit of 16,777,216"),
        ("not-content.txt", "could not generate"),
    ],
)
async def test_a_failing_generator_is_an_internal_error_that_leaks_nothing(
    http_url: str, tmp_path: Path, name: str, says: str
) -> None:
    """Spec (Error Handling): internal errors are -32603; skillwire choice: the message says which file and why in
    general terms, never the generator's exception, and the server goes on serving."""
    uri = f"skill://broken/{name}"
    async with connected("http", http_url, tmp_path) as client:
        with pytest.raises(MCPError) as caught:
            await resources_read(client, uri)
        after = wire(await resources_read(client, "skill://broken/SKILL.md"))
    error = caught.value.error
    assert error.code == INTERNAL_ERROR
    assert uri in error.message
    assert says in error.message
    shown = f"{error.message} {error.data}"
    for leak in (SECRET, "hunter2", "ConnectionError", "Traceback", "rows"):
        assert leak not in shown
    assert "Each file fails differently." in after["contents"][0]["text"]


async def test_skillwires_host_loads_a_generated_skill_it_allows(http_url: str) -> None:
    """A real host that allows dynamic skills loads the generated one and reads its files (its frontmatter checked
    against the entry, its size against the 16 MiB limit); by default it declines it."""
    async with Host(prompt=ApproveLoads(), allow_dynamic=True) as host:
        await host.add_server("gen", http_url)
        loaded = await host.load_skill("gen:daily")
        csv = await host.read_skill_text("gen:daily", "data/today.csv")
    assert "# Daily report" in loaded.text
    assert "region,read" in csv
    async with Host(prompt=ApproveLoads()) as host:
        await host.add_server("gen", http_url)
        declined = {item.handle: item.declined for item in host.catalog()}
    assert "dynamic" in (declined["gen:daily"] or "")


async def test_over_stdio_a_generated_skill_is_listed_read_browsed_and_fails_safely(tmp_path: Path) -> None:
    """The same behaviour over stdio (one connection, one server process): entry "dynamic", fresh reads with the
    entry's frontmatter, directory reads, and -32603 without internals for a generator that raises."""
    async with connected("stdio", "", tmp_path) as client:
        entry = wire(await skills_get(client, DAILY))["skill"]
        listed = [e for e in wire(await skills_list(client))["skills"] if e["uri"] == DAILY]
        reads = [wire(await resources_read(client, DAILY))["contents"][0]["text"] for _ in range(2)]
        data = wire(await directory_read(client, "skill://reports/daily/data"))["resources"]
        with pytest.raises(MCPError) as caught:
            await resources_read(client, "skill://broken/raises.txt")
    assert listed == [entry]
    assert entry["resources"] == "dynamic"
    assert reads[0] != reads[1]
    assert all(parse_skill_md(t.encode("utf-8")).frontmatter == entry["frontmatter"] for t in reads)
    assert [r["name"] for r in data] == ["today.csv"]
    assert caught.value.error.code == INTERNAL_ERROR
    assert SECRET not in f"{caught.value.error.message} {caught.value.error.data}"


def test_the_catalog_page_shows_a_generated_skill_as_generated(http_url: str) -> None:
    """skillwire choice: the catalog page lists a generated skill's files without sizes or digests (they have
    none until read) and renders its SKILL.md as generated now."""
    base = http_url.removesuffix("/mcp")
    with urllib.request.urlopen(base + "/", timeout=REQUEST_TIMEOUT_S) as response:
        index = response.read().decode("utf-8")
    with urllib.request.urlopen(base + "/skills/reports/daily", timeout=REQUEST_TIMEOUT_S) as response:
        page = response.read().decode("utf-8")
    assert "3 files · generated" in index
    assert "<td>none (made at each read)</td>" in page
    assert "sha256:" not in page
    assert "0 B" not in page
    assert "Read <code>data/today.csv</code>" in page
