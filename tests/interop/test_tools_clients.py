"""`skillwire serve --tools` through clients that know only tools: the Python SDK's `Client` and the TypeScript SDK
v2's `Client`, over HTTP and stdio, on both eras (issue 22 acceptance; the tools are a skillwire choice).

The collection is the interop one (examples/skills and the edge-case skills: a nested skill, a binary file, names
beyond ASCII, CRLF and a BOM), in pages of three. Every skill is reached through list_skills' pages, every file
through read_skill's manifest and read_skill_file, and each answer equals resources/read's (text as text, binary
as the same bytes) and the file on disk. One HTTP server for the module, with a token file and a scopes policy:
the "some" token sees two skills, through the tools too, and a hidden skill answers exactly as a missing one. The
last test changes the collection: tools/list_changed reaches the callers who see the change, on both eras.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.subscriptions import ToolsListChanged
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.interop.clients import NODE, NODE_TOOLS, Skillwire, need_node_tools, run_process
from tests.interop.fixture import BINARY, expected_files, write_edge_skills
from tests.support.servers import (
    EXAMPLE_SKILLS,
    MODERN_VERSION,
    REPO_ROOT,
    HttpServer,
    Mode,
    Transport,
    http_server,
    resources_read,
    serve_command,
    skills_get,
    stateless_post,
)

pytestmark = pytest.mark.anyio

DRIVER = NODE_TOOLS / "skills-tools-interop.mjs"
TOOLS = ["list_skills", "read_skill", "read_skill_file", "search_skills"]
OPTIONS = ("--tools", "--page-size", "3")
ALL, SOME = "all-token-0123456789abcdef", "some-token-0123456789abcd"
SOME_SEES = {"skill://binary/SKILL.md", "skill://outer/SKILL.md"}  # outer/inner is hidden: outer's files only
DEADLINE_S = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ...]:
    return (EXAMPLE_SKILLS, write_edge_skills(tmp_path_factory.mktemp("edge")))


@pytest.fixture(scope="module")
def server(roots: tuple[Path, ...], tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """`serve --tools --http` with a token file and a scopes policy; it follows the disk (the last test edits it)."""
    base = tmp_path_factory.mktemp("auth")
    (base / "tokens.txt").write_text(f"{ALL} subject=all\n{SOME} subject=some\n")
    (base / "tokens.txt").chmod(0o600)
    (base / "scopes.toml").write_text(
        '[[grant]]\nsubject = "all"\nskills = ["**"]\n\n[[grant]]\nsubject = "some"\nskills = ["binary", "outer"]\n'
    )
    auth = ("--token-file", str(base / "tokens.txt"), "--scopes", str(base / "scopes.toml"))
    with http_server(roots, *OPTIONS, *auth) as started:
        yield started
        started.assert_alive()


@asynccontextmanager
async def client_for(
    transport: Transport, era: Mode, roots: tuple[Path, ...], server: HttpServer, token: str = ALL, **kwargs: Any
) -> AsyncIterator[Client]:
    """The Python SDK's client: to the module's HTTP server with `token`, or to a stdio server of its own."""
    mode = MODERN_VERSION if era == "modern" else "legacy"
    if transport == "http":
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
            Client(streamable_http_client(server.url, http_client=http), mode=mode, cache=None, **kwargs) as client,
        ):
            yield client
        return
    command = serve_command(roots, *OPTIONS, "--no-watch")
    env = dict(os.environ, PYTHONUNBUFFERED="1")  # the SDK passes on only a few variables by default
    params = StdioServerParameters(command=sys.executable, args=command[1:], env=env, cwd=REPO_ROOT)
    async with Client(stdio_client(params), mode=mode, cache=None, read_timeout_seconds=30, **kwargs) as client:
        yield client


async def call(client: Client, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, (name, arguments, result.content)
    return result


async def listed(client: Client) -> list[str]:
    """Every skill URI list_skills gives, following nextCursor."""
    uris: list[str] = []
    cursor: str | None = None
    for _ in range(100):
        page = (await call(client, "list_skills", {} if cursor is None else {"cursor": cursor})).structured_content
        assert page is not None
        uris += [skill["uri"] for skill in page["skills"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            return uris
    raise AssertionError("list_skills never stopped paging")


async def read_everything(client: Client) -> tuple[list[str], dict[str, str], set[str]]:
    """Every skill through the tools, each answer checked against skills/get and resources/read: (skill URIs,
    {file URI: sha256 hex of read_skill_file's bytes}, the URIs that came as embedded blobs)."""
    files: dict[str, str] = {}
    blobs: set[str] = set()
    skills = await listed(client)
    for uri in skills:
        skill = await call(client, "read_skill", {"uri": uri})
        assert skill.structured_content is not None
        text = skill.structured_content["text"]
        assert (await resources_read(client, uri)).contents[0]["text"] == text
        assert skill.content == [types.TextContent(type="text", text=text)]
        manifest = (await skills_get(client, uri)).skill["resources"]
        assert skill.structured_content["files"] == [{k: r[k] for k in ("uri", "size", "digest")} for r in manifest]
        for entry in manifest:
            block = (await call(client, "read_skill_file", {"uri": entry["uri"]})).content
            contents = (await resources_read(client, entry["uri"])).contents[0]
            assert len(block) == 1
            if isinstance(block[0], types.TextContent):
                assert block[0].text == contents["text"]
                data = block[0].text.encode()
            else:
                assert isinstance(block[0], types.EmbeddedResource)
                resource = block[0].resource
                assert isinstance(resource, types.BlobResourceContents)
                assert (resource.uri, resource.mime_type, resource.blob) == (
                    contents["uri"],
                    contents["mimeType"],
                    contents["blob"],
                )
                data = base64.b64decode(resource.blob)
                blobs.add(entry["uri"])
            files[entry["uri"]] = hashlib.sha256(data).hexdigest()
    return skills, files, blobs


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_python_sdk_client_reads_every_skill_and_file_through_the_tools(
    transport: Transport, era: Mode, roots: tuple[Path, ...], server: HttpServer
) -> None:
    expected = expected_files(roots)
    async with client_for(transport, era, roots, server) as client:
        assert sorted(tool.name for tool in (await client.list_tools()).tools) == TOOLS
        skills, files, blobs = await read_everything(client)
    assert sorted(skills) == sorted(uri for uri in expected if uri.endswith("/SKILL.md"))
    assert len(skills) == len(set(skills)), "a skill listed on two pages"
    assert files == expected, "read_skill_file's bytes differ from the files on disk"
    binary = [uri for uri, digest in expected.items() if digest == hashlib.sha256(BINARY).hexdigest()]
    assert blobs == set(binary)


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_typescript_sdk_client_reads_every_skill_and_file_through_the_tools(
    transport: Transport, era: Mode, roots: tuple[Path, ...], server: HttpServer
) -> None:
    """The TS SDK checks every structuredContent against the tool's outputSchema; the driver compares each
    tool answer with resources/read and the manifest, and reports the digests of the bytes it read."""
    need_node_tools("@modelcontextprotocol/client")
    target = Skillwire(server.url, tuple(serve_command(roots, *OPTIONS, "--no-watch")))
    config = {**target.config(transport), "era": era, "token": ALL}
    summary = json.loads(run_process([str(NODE), str(DRIVER), json.dumps(config)]))
    expected = expected_files(roots)
    assert summary["failures"] == []
    assert summary["protocolVersion"] == (MODERN_VERSION if era == "modern" else "2025-11-25")
    assert summary["tools"] == TOOLS
    assert sorted(summary["skills"]) == sorted(uri for uri in expected if uri.endswith("/SKILL.md"))
    assert summary["files"] == expected
    assert summary["binary"] == ["skill://binary/assets/blob.bin"]


async def test_a_scoped_token_reaches_only_its_skills_through_the_tools(
    roots: tuple[Path, ...], server: HttpServer
) -> None:
    """As on skills/list: the "some" token lists, searches and reads only binary and outer (inner's files as outer's
    plain files); the TS client reaches the same two skills."""
    async with client_for("http", "modern", roots, server, token=SOME) as client:
        skills, files, _ = await read_everything(client)
        found = await call(client, "search_skills", {"query": "skill pdf review git refund nested", "limit": 50})
        assert found.structured_content is not None
        assert {hit["uri"] for hit in found.structured_content["skills"]} <= SOME_SEES
    assert set(skills) == SOME_SEES
    assert "skill://outer/inner/SKILL.md" in files
    assert {uri.split("/")[2] for uri in files} == {"binary", "outer"}
    need_node_tools("@modelcontextprotocol/client")
    config = {"transport": "http", "url": server.url, "era": "modern", "token": SOME}
    summary = json.loads(run_process([str(NODE), str(DRIVER), json.dumps(config)]))
    assert summary["failures"] == []
    assert set(summary["skills"]) == SOME_SEES


HIDDEN_AND_MISSING = [
    ("read_skill", "skill://pdf-processing/SKILL.md", "skill://never-existed/SKILL.md"),
    ("read_skill", "skill://pdf-processing", "skill://never-existed"),
    ("read_skill", "skill://outer/inner/SKILL.md", "skill://outer/never/SKILL.md"),
    ("read_skill", "skill://outer/inner", "skill://outer/never"),
    ("read_skill_file", "skill://pdf-processing/templates/invoice.md", "skill://never-existed/templates/x.md"),
    ("read_skill_file", "skill://pdf-processing/templates", "skill://never-existed/templates"),
    ("read_skill_file", "skill://pdf-processing/SKILL.md", "skill://never-existed/SKILL.md"),
]


@pytest.mark.parametrize(("tool", "hidden", "missing"), HIDDEN_AND_MISSING)
def test_a_hidden_skill_answers_byte_for_byte_as_a_missing_one(
    server: HttpServer, tool: str, hidden: str, missing: str
) -> None:
    """A tool error, the same bytes on the wire but for the URI asked about; the full token is answered otherwise
    (it reads the skill or file, or is told a folder is a folder)."""
    answers = [raw_call(server, SOME, tool, {"uri": uri}) for uri in (hidden, missing)]
    assert answers[0][0] == answers[1][0] == 200
    assert answers[0][1].replace(hidden.encode(), b"<URI>") == answers[1][1].replace(missing.encode(), b"<URI>")
    assert json.loads(answers[0][1])["result"]["isError"] is True
    status, body = raw_call(server, ALL, tool, {"uri": hidden})
    assert status == 200
    assert body.replace(hidden.encode(), b"<URI>") != answers[0][1].replace(hidden.encode(), b"<URI>")


def raw_call(server: HttpServer, token: str, name: str, arguments: dict[str, Any]) -> tuple[int, bytes]:
    """One stateless 2026-07-28 tools/call over HTTP; its status and body bytes."""
    params = {"name": name, "arguments": arguments}
    response = stateless_post(server.url, "tools/call", params, token=token, request_id=7)
    return response.status_code, response.content


async def test_a_catalog_change_reaches_tools_list_changed_on_both_eras_for_those_who_see_it(
    roots: tuple[Path, ...], server: HttpServer
) -> None:
    """A new skill is news to the full token (a handshake-era session and a listen stream), not to "some"; a new
    file in a skill "some" sees is news to it too. list_skills then shows the new skill. Runs last: it edits."""
    heard: dict[str, list[str]] = {ALL: [], SOME: []}

    def on_message(token: str) -> Any:
        async def handle(message: types.ServerNotification | Exception) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                heard[token].append("tools")

        return handle

    edge = roots[1]
    try:
        async with (
            client_for("http", "legacy", roots, server, ALL, message_handler=on_message(ALL)) as all_legacy,
            client_for("http", "legacy", roots, server, SOME, message_handler=on_message(SOME)),
            client_for("http", "modern", roots, server, ALL) as all_modern,
            client_for("http", "modern", roots, server, SOME) as some_modern,
            all_modern.listen(tools_list_changed=True) as all_stream,
            some_modern.listen(tools_list_changed=True) as some_stream,
        ):
            assert all_legacy.session.initialize_result is not None
            declared = all_legacy.session.initialize_result.capabilities.tools
            assert declared is not None
            assert declared.list_changed is True
            (edge / "fresh").mkdir()
            (edge / "fresh" / "SKILL.md").write_text("---\nname: fresh\ndescription: A new skill\n---\n# Fresh\n")
            with anyio.fail_after(DEADLINE_S):
                assert await all_stream.__anext__() == ToolsListChanged()
                while not heard[ALL]:
                    await anyio.sleep(0.05)
            with anyio.move_on_after(1.5):  # "some" cannot see the new skill: nothing for it
                leaked = await some_stream.__anext__()
                raise AssertionError(f"told about a change it cannot see: {leaked!r}")
            assert heard[SOME] == []
            assert "skill://fresh/SKILL.md" in await listed(all_modern)
            assert "skill://fresh/SKILL.md" not in await listed(some_modern)
            (edge / "binary" / "added.md").write_text("a new file of a skill both see\n")
            with anyio.fail_after(DEADLINE_S):
                assert await some_stream.__anext__() == ToolsListChanged()
                while not heard[SOME]:
                    await anyio.sleep(0.05)
    finally:
        shutil.rmtree(edge / "fresh", ignore_errors=True)
        (edge / "binary" / "added.md").unlink(missing_ok=True)
