"""`skillwire serve --search-tool --instructions auto`, over stdio and HTTP, with and without caller scopes."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.servers import REPO_ROOT, HttpServer, http_server, serve_command, stateless_post

SKILLS = {
    "acme/billing/refunds": "Refund a customer's charge and send the credit note",
    "acme/billing/invoices": "Create and send invoices to customers",
    "code-review": "Review code changes for bugs and style",
    "pdf-processing": "Extract text and tables from PDF files, fill forms",
}
TOKENS = {"ci-token-0123456789abcdef": "ci", "billing-token-0123456789ab": "billing"}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("search-tool")
    for path, description in SKILLS.items():
        folder = base / "skills" / path
        folder.mkdir(parents=True)
        name = path.rsplit("/", 1)[-1]
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n")
    (base / "tokens.txt").write_text("".join(f"{token} subject={subject}\n" for token, subject in TOKENS.items()))
    (base / "tokens.txt").chmod(0o600)
    (base / "scopes.toml").write_text(
        '[[grant]]\nsubject = "ci"\nskills = ["**"]\n\n[[grant]]\nsubject = "billing"\nskills = ["acme/billing/**"]\n'
    )
    return base


@pytest.fixture(scope="module")
def scoped(root: Path) -> Iterator[HttpServer]:
    options = ("--search-tool", "--instructions", "auto", "--token-file", str(root / "tokens.txt"))
    with http_server([root / "skills"], *options, "--scopes", str(root / "scopes.toml")) as server:
        yield server


def call(server: HttpServer, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One stateless request with a bearer token; the JSON-RPC message."""
    message: dict[str, Any] = stateless_post(server.url, method, params, token=token, timeout=10).json()
    return message


def search(server: HttpServer, token: str, **arguments: Any) -> dict[str, Any]:
    message = call(server, token, "tools/call", {"name": "search_skills", "arguments": arguments})
    result: dict[str, Any] = message["result"]
    return result


def test_search_skills_over_stdio_ranks_skills_and_auto_instructions_point_at_it(root: Path) -> None:
    """A stdio client sees the tool and instructions naming it; the exact name comes first; stemming works."""

    async def run() -> None:
        command = serve_command([root / "skills"], "--search-tool", "--instructions", "auto")
        params = StdioServerParameters(command=sys.executable, args=command[1:], cwd=REPO_ROOT)
        with (root / "stdio.log").open("w") as log:
            async with Client(stdio_client(params, errlog=log), cache=None, read_timeout_seconds=20) as client:
                assert client.session.discover_result is not None
                instructions = client.session.discover_result.instructions or ""
                assert "4 Agent Skills" in instructions
                assert "search_skills" in instructions
                tools = await client.list_tools()
                assert [tool.name for tool in tools.tools] == ["search_skills"]
                result = await client.call_tool("search_skills", {"query": "code review"})
                assert result.structured_content is not None
                skills = result.structured_content["skills"]
                assert skills[0]["uri"] == "skill://code-review/SKILL.md"
                result = await client.call_tool("search_skills", {"query": "invoicing customers", "limit": 1})
                assert result.structured_content is not None
                assert [s["uri"] for s in result.structured_content["skills"]] == [
                    "skill://acme/billing/invoices/SKILL.md"
                ]

    anyio.run(run)


def test_search_skills_shows_a_caller_only_the_skills_its_scope_allows(scoped: HttpServer) -> None:
    """Over HTTP with --scopes, a billing token never sees code-review or pdf-processing, even by exact name."""
    everything = search(scoped, "ci-token-0123456789abcdef", query="review pdf refund invoice", limit=10)
    assert {s["uri"] for s in everything["structuredContent"]["skills"]} == {
        f"skill://{path}/SKILL.md" for path in SKILLS
    }
    billing = search(scoped, "billing-token-0123456789ab", query="review pdf refund invoice", limit=10)
    assert {s["uri"] for s in billing["structuredContent"]["skills"]} == {
        "skill://acme/billing/refunds/SKILL.md",
        "skill://acme/billing/invoices/SKILL.md",
    }
    assert search(scoped, "billing-token-0123456789ab", query="code-review")["structuredContent"]["skills"] == []


def test_scoped_auto_instructions_reveal_no_count(scoped: HttpServer) -> None:
    """Instructions are the same for every caller, so with scopes they name no count and no skill."""
    discovered = call(scoped, "billing-token-0123456789ab", "server/discover", {})["result"]
    assert "Agent Skills" in discovered["instructions"]
    assert "4 Agent Skills" not in discovered["instructions"]


def test_bad_arguments_are_a_tool_error_the_model_can_read(scoped: HttpServer) -> None:
    """Wrong arguments give isError with a sentence, not a protocol error; an unknown tool is -32602."""
    token = "ci-token-0123456789abcdef"
    for arguments, expected in (
        ({"query": ""}, "'query' must be a non-empty string"),
        ({"query": "pdf", "limit": 0}, "'limit' must be an integer from 1 to 50"),
        ({"query": "x" * 1001}, "'query' must be at most 1000 characters"),
        ({"query": "pdf", "extra": 1}, "unknown argument(s): 'extra'"),
    ):
        result = search(scoped, token, **arguments)
        assert result["isError"] is True
        assert result["content"][0]["text"].startswith(expected)
    unknown = call(scoped, token, "tools/call", {"name": "nope", "arguments": {}})
    assert unknown["error"]["code"] == -32602
    assert json.dumps(unknown).count("Traceback") == 0


def test_the_tool_follows_the_served_folder_as_it_changes(tmp_path: Path) -> None:
    """Hot reload: a re-described skill is found by its new words, a removed one is never named again."""
    root = tmp_path / "skills"
    for name, description in (("charts", "Plot data as bar charts"), ("notes", "Summarise a meeting")):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n")
    with http_server([root], "--search-tool") as server:

        def found(query: str) -> list[str]:
            return [s["uri"] for s in search(server, "no-token-needed", query=query)["structuredContent"]["skills"]]

        assert found("kubernetes") == []
        (root / "charts" / "SKILL.md").write_text("---\nname: charts\ndescription: Deploy to kubernetes\n---\n")
        _until(lambda: found("kubernetes") == ["skill://charts/SKILL.md"])
        assert found("meeting") == ["skill://notes/SKILL.md"]
        (root / "notes" / "SKILL.md").unlink()
        (root / "notes").rmdir()
        _until(lambda: found("meeting") == [])


def _until(done: Callable[[], bool], timeout: float = 15.0) -> None:
    """Wait for the server's watcher to publish a change (a freeze bound, not a speed assertion)."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "the search tool did not follow the served folder"
        time.sleep(0.1)
