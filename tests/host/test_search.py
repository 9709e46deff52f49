"""Host-side search over every origin, the search_skills tool and the catalog prompt, against real servers.

Two `skillwire serve --http` processes (labels `docs` and `tools`) serve folders made here, one skill name on both
(a collision), and the host has a local skill; the folders change while served to check the index follows.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillwire import Host, LocalSkill, skill_tools
from skillwire.core.hosting.catalog_text import HEADER, catalog_text
from tests.support.servers import HttpServer, http_server

pytestmark = pytest.mark.anyio

DOCS = {
    "pdf-processing": "Extract text and tables from PDF files, fill forms, merge documents",
    "invoice-generator": "Create an invoice for a customer from an order",
    "report-writer": "Write a weekly status report from notes",
}
TOOLS = {
    "pdf-processing": "Compress and split PDF files on the command line",
    "chart-maker": "Plot data as bar, line and pie charts",
    "git-workflow": "Branches, commits and pull requests the team's way",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write_skill(root: Path, name: str, description: str) -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, HttpServer, HttpServer]]:
    base = tmp_path_factory.mktemp("search")
    for label, skills in (("docs", DOCS), ("tools", TOOLS)):
        for name, description in skills.items():
            write_skill(base / label, name, description)
    with http_server([base / "docs"]) as docs, http_server([base / "tools"]) as tools:
        yield base, docs, tools


@asynccontextmanager
async def host_on(servers: tuple[Path, HttpServer, HttpServer]) -> AsyncIterator[Host]:
    _, docs, tools = servers
    async with Host() as host:
        await host.add_server("docs", docs.url)
        await host.add_server("tools", tools.url)
        host.registry.set_local([LocalSkill("meeting-notes", "Summarise a meeting into action items", "/skills/m")])
        yield host


async def test_search_ranks_every_origin_with_handles_and_origins(servers: tuple[Path, HttpServer, HttpServer]) -> None:
    """An exact name first, same-name skills from two servers both found under distinct handles, local included."""
    async with host_on(servers) as host:
        found = host.search("pdf processing")
        assert {item.handle for item in found[:2]} == {"docs:pdf-processing", "tools:pdf-processing"}
        assert {item.origin for item in found[:2]} == {"docs", "tools"}
        assert host.search("invoices")[0].handle == "docs:invoice-generator"  # stemming
        assert host.search("charting")[0].handle == "tools:chart-maker"
        local = host.search("action items from a meeting")[0]
        assert (local.handle, local.mcp) == ("local:meeting-notes", False)
        assert host.search("kubernetes") == ()


async def test_search_fetches_no_skill_content(servers: tuple[Path, HttpServer, HttpServer]) -> None:
    """Spec: no content ahead of need. Searching leaves the host's verified cache and windows empty: listing only."""
    async with host_on(servers) as host:
        assert host.search("weekly report")[0].handle == "docs:report-writer"
        assert host.acting() == ()
        assert all(item.declined is None for item in host.search("pdf", 10))


async def test_the_index_follows_a_listing_that_changes(servers: tuple[Path, HttpServer, HttpServer]) -> None:
    """A skill added, re-described and removed on a served folder shows in search after the host re-lists."""
    base, _, _ = servers
    async with host_on(servers) as host:
        assert host.search("kubernetes") == ()
        write_skill(base / "tools", "deploy", "Roll out services to a kubernetes cluster")
        await _until(host, "tools", lambda: [i.handle for i in host.search("kubernetes")] == ["tools:deploy"])
        write_skill(base / "tools", "deploy", "Package services as helm charts")
        await _until(host, "tools", lambda: host.search("kubernetes") == ())
        assert "tools:deploy" in [item.handle for item in host.search("helm")]
        (base / "tools" / "deploy" / "SKILL.md").unlink()
        (base / "tools" / "deploy").rmdir()
        await _until(host, "tools", lambda: host.search("helm") == ())


async def _until(host: Host, label: str, done: Callable[[], bool], timeout: float = 15.0) -> None:
    """Re-list `label` until `done()` holds (the server's hot reload takes a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        await host.refresh(label)
        if done():
            return
        assert time.monotonic() < deadline, "the host's search did not follow the server's listing"
        await anyio.sleep(0.2)


async def test_the_search_skills_tool(servers: tuple[Path, HttpServer, HttpServer]) -> None:
    """The model tool returns ranked skills with origins, and refuses bad arguments with a message."""
    async with host_on(servers) as host:
        tools = {tool.name: tool for tool in skill_tools(host)}
        result = json.loads(await tools["search_skills"].call({"query": "merge pdf forms", "limit": 2}))
        assert result["skills"][0]["skill"] == "docs:pdf-processing"
        assert len(result["skills"]) == 2
        assert all(s["origin"].startswith("mcp-server:") for s in result["skills"])
        assert (await tools["search_skills"].call({"query": "pdf", "limit": 0})).startswith("error: 'limit' must")
        assert (await tools["search_skills"].call({"query": "x" * 1001})).startswith("error: 'query' must be at most")
        assert (await tools["search_skills"].call({})).startswith("error:")


async def test_the_catalog_prompt_names_the_origin_on_every_line_and_fits(
    servers: tuple[Path, HttpServer, HttpServer],
) -> None:
    """Every line names its origin, same-name skills have distinct handles, the closing line counts the rest."""
    async with host_on(servers) as host:
        whole = host.catalog_prompt(10_000)
        lines = whole.splitlines()
        assert lines[0] == HEADER
        assert len(lines) == 1 + 7
        assert all("[mcp-server:" in line or "[local]" in line for line in lines[1:])
        assert "docs:pdf-processing [mcp-server:docs]" in whole
        assert "tools:pdf-processing [mcp-server:tools]" in whole
        small = host.catalog_prompt(250, conversation="I need to send a customer an invoice")
        assert len(small) <= 250
        assert small.splitlines()[1].startswith("- docs:invoice-generator [mcp-server:docs]")
        assert small.splitlines()[-1].endswith("call search_skills with a few words to find one.")
        assert host.catalog_prompt(250, conversation="I need to send a customer an invoice") == small
        assert host.catalog_prompt(5) == ""


class Item:
    """A catalog item as the builder sees it."""

    def __init__(self, handle: str, description: str, origin: str = "docs") -> None:
        self.handle, self.description, self.origin, self.mcp, self.declined = handle, description, origin, True, None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.text(min_size=1, max_size=30), st.text(max_size=400)), max_size=40),
    st.integers(min_value=0, max_value=3_000),
)
def test_the_catalog_text_never_exceeds_its_budget(raw: list[tuple[str, str]], budget: int) -> None:
    """Whatever the items and budget, the text fits, and the same input gives the same text."""
    items = [Item(f"docs:{handle}", description) for handle, description in raw]
    text = catalog_text(items, budget=budget)
    assert len(text) <= budget
    assert catalog_text(items, budget=budget) == text
    if text and len(items) > len(text.splitlines()) - 1:
        assert "more skill" in text.splitlines()[-1]
