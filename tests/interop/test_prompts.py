"""Skills as prompts (`serve --prompts`, issue 22) through real clients: the Python SDK's and the TypeScript SDK's.

The interop collection (examples/skills and the edge-case skills: a nested skill, CRLF with a byte-order mark,
names beyond ASCII) served by one `skillwire serve --http --prompts` for the module, behind a token file and a
scopes policy (a token that sees everything, one that sees `acme/**`), in pages of three; the stdio command is
spawned by each client. Every client lists every prompt, gets each one, and reads each SKILL.md with
resources/read: the prompt's text is the origin statement and then exactly those bytes, which are the bytes on
disk. The TypeScript driver is tools/node/prompts-interop.mjs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.subscriptions import PromptsListChanged
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from skillwire.server.prompts import origin_note
from tests.interop.clients import NODE, NODE_TOOLS, need_node_tools, run_process
from tests.support.servers import (
    INVALID_PARAMS,
    MODERN_VERSION,
    REPO_ROOT,
    HttpServer,
    Mode,
    Transport,
    http_server,
    resources_read,
    serve_command,
)

pytestmark = pytest.mark.anyio

DRIVER = NODE_TOOLS / "prompts-interop.mjs"
PROTOCOL = {"legacy": "2025-11-25", "modern": MODERN_VERSION}
OPTIONS = ("--page-size", "3", "--no-watch", "--prompts")
EVERYTHING = "everything-token-0123456789ab"
BILLING = "billing-token-0123456789abcd"
DEADLINE_S = 20.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass(frozen=True)
class Served:
    """The module's HTTP server, the stdio command line, and the skills a full-access client must see."""

    http: HttpServer
    command: tuple[str, ...]
    prompts: dict[str, str]  # prompt name -> SKILL.md URI, by the naming rule (a path, ':' for '/')
    texts: dict[str, str]  # SKILL.md URI -> its text on disk

    def config(self, transport: Transport, era: Mode, token: str = EVERYTHING) -> dict[str, Any]:
        """The TypeScript driver's target."""
        if transport == "http":
            return {"transport": "http", "url": self.http.url, "era": era, "token": token}
        return {"transport": "stdio", "command": self.command[0], "args": list(self.command[1:]), "era": era}


@pytest.fixture(scope="module")
def served(
    roots: tuple[Path, ...], expected: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    auth = tmp_path_factory.mktemp("prompts-auth")
    (auth / "tokens.txt").write_text(f"{EVERYTHING} subject=everything\n{BILLING} subject=billing\n")
    (auth / "tokens.txt").chmod(0o600)
    (auth / "scopes.toml").write_text(
        '[[grant]]\nsubject = "everything"\nskills = ["**"]\n\n[[grant]]\nsubject = "billing"\nskills = ["acme/**"]\n'
    )
    secured = ("--token-file", str(auth / "tokens.txt"), "--scopes", str(auth / "scopes.toml"))
    skills = sorted(uri for uri in expected if uri.endswith("/SKILL.md"))
    names = {uri.removeprefix("skill://").removesuffix("/SKILL.md").replace("/", ":"): uri for uri in skills}
    texts = {uri: _disk_text(roots, uri) for uri in skills}
    with http_server(roots, *OPTIONS, *secured) as server:
        yield Served(server, tuple(serve_command(roots, *OPTIONS)), names, texts)
        server.assert_alive()


def _disk_text(roots: tuple[Path, ...], uri: str) -> str:
    relative = uri.removeprefix("skill://")
    found = [root / relative for root in roots if (root / relative).is_file()]
    assert len(found) == 1, uri
    return found[0].read_bytes().decode("utf-8")


@asynccontextmanager
async def python_client(
    served: Served, transport: Transport, era: Mode, token: str = EVERYTHING, **options: Any
) -> AsyncIterator[Client]:
    """The Python SDK's `Client` on `transport`, in `era` ("modern": 2026-07-28 via discovery), response cache off."""
    mode = "auto" if era == "modern" else "legacy"
    async with AsyncExitStack() as stack:
        target: Any
        if transport == "http":
            http = await stack.enter_async_context(create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
            target = streamable_http_client(served.http.url, http_client=http)
        else:
            env = dict(os.environ)
            params = StdioServerParameters(
                command=sys.executable, args=list(served.command[1:]), env=env, cwd=REPO_ROOT
            )
            target = stdio_client(params)
        client = await stack.enter_async_context(
            Client(target, mode=mode, cache=None, read_timeout_seconds=30, **options)
        )
        assert client.protocol_version == PROTOCOL[era]
        yield client


async def every_prompt(client: Client) -> list[types.Prompt]:
    """Every prompts/list entry, following nextCursor page by page."""
    found: list[types.Prompt] = []
    cursor: str | None = None
    for _ in range(1_000):
        page = await client.list_prompts(cursor=cursor)
        found += page.prompts
        cursor = page.next_cursor
        if cursor is None:
            return found
    raise AssertionError("prompts/list never stopped handing out cursors")


async def unknown_prompt(client: Client, name: str) -> types.ErrorData:
    with pytest.raises(MCPError) as caught:
        await client.get_prompt(name)
    return caught.value.error


def _same_answer(a: dict[str, Any], a_name: str, b: dict[str, Any], b_name: str) -> bool:
    """Two errors that differ only in the name they echo."""
    same_message = str(a["message"]).replace(a_name, "NAME") == str(b["message"]).replace(b_name, "NAME")
    return bool(a["code"] == b["code"] and same_message)


# -- every prompt, every client ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_python_sdk_client_gets_every_skill_as_a_prompt(transport: Transport, era: Mode, served: Served) -> None:
    """skillwire choice checked by a real client: a prompt per skill, named by its path, its text the origin
    statement and then exactly what resources/read gives, which is the file on disk."""
    async with python_client(served, transport, era) as client:
        prompts = await every_prompt(client)
        assert sorted(p.name for p in prompts) == sorted(served.prompts)
        assert len(prompts) > 3, "several pages"
        for prompt in prompts:
            uri = served.prompts[prompt.name]
            assert prompt.title == uri.removesuffix("/SKILL.md").rsplit("/", 1)[-1]
            assert prompt.description
            assert not prompt.arguments
            got = await client.get_prompt(prompt.name)
            assert got.description == prompt.description
            assert [m.role for m in got.messages] == ["user"]
            content = got.messages[0].content
            assert isinstance(content, types.TextContent)
            read = (await resources_read(client, uri)).contents[0]["text"]
            assert read == served.texts[uri]
            assert content.text == origin_note(uri) + read
        error = await unknown_prompt(client, "no-such-prompt")
        assert error.code == INVALID_PARAMS


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_typescript_sdk_client_gets_every_skill_as_a_prompt(transport: Transport, era: Mode, served: Served) -> None:
    """The same through the TypeScript SDK v2's Client: it walks the pages itself, validates every result against
    its schemas, and reads each SKILL.md; prompts.listChanged is declared on both eras."""
    need_node_tools("@modelcontextprotocol/client")
    config = {**served.config(transport, era), "ask": ["no-such-prompt", "pdf-processing/"]}
    run = json.loads(run_process([str(NODE), str(DRIVER), json.dumps(config)]))
    assert run["failures"] == []
    assert run["protocolVersion"] == PROTOCOL[era]
    assert run["capabilities"] == {"listChanged": True}
    assert sorted(p["name"] for p in run["prompts"]) == sorted(served.prompts)
    for name, uri in served.prompts.items():
        assert run["reads"][uri] == served.texts[uri]
        messages = run["gets"][name]["messages"]
        assert messages == [{"role": "user", "content": {"type": "text", "text": origin_note(uri) + served.texts[uri]}}]
    for name in config["ask"]:
        assert run["errors"][name]["code"] == INVALID_PARAMS


# -- scopes -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_scoped_token_sees_only_its_skills_prompts_through_the_python_sdk(era: Mode, served: Served) -> None:
    """Issue 10's rule on prompts: the billing token lists only acme's prompt; another skill's prompt is answered
    exactly as a name no skill has."""
    async with python_client(served, "http", era, token=BILLING) as client:
        assert [p.name for p in await every_prompt(client)] == ["acme:billing:refunds"]
        assert (await client.get_prompt("acme:billing:refunds")).messages
        hidden = (await unknown_prompt(client, "pdf-processing")).model_dump()
        missing = (await unknown_prompt(client, "pdf-processinh")).model_dump()
        assert _same_answer(hidden, "pdf-processing", missing, "pdf-processinh"), (hidden, missing)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_scoped_token_sees_only_its_skills_prompts_through_the_typescript_sdk(era: Mode, served: Served) -> None:
    need_node_tools("@modelcontextprotocol/client")
    config = {**served.config("http", era, token=BILLING), "ask": ["pdf-processing", "pdf-processinh"]}
    run = json.loads(run_process([str(NODE), str(DRIVER), json.dumps(config)]))
    assert run["failures"] == []
    assert [p["name"] for p in run["prompts"]] == ["acme:billing:refunds"]
    assert list(run["reads"]) == ["skill://acme/billing/refunds/SKILL.md"]
    errors = run["errors"]
    assert _same_answer(errors["pdf-processing"], "pdf-processing", errors["pdf-processinh"], "pdf-processinh")


# -- list_changed -----------------------------------------------------------------------------------------------------


async def test_a_catalog_change_reaches_prompts_list_changed_on_both_eras_and_both_sdks(
    served: Served, roots: tuple[Path, ...], tmp_path: Path
) -> None:
    """MCP prompts, List Changed Notification: after a new skill is served, a handshake-era session gets
    notifications/prompts/list_changed and a 2026-07-28 client the prompts event on its subscriptions/listen stream;
    both SDKs' clients, then listing again, see the new prompt."""
    need_node_tools("@modelcontextprotocol/client")
    added = roots[1] / "added-later"
    watchers: dict[Mode, subprocess.Popen[str]] = {}
    legacy_told = anyio.Event()

    async def on_message(message: types.ServerNotification | Exception) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            legacy_told.set()

    try:
        for era in ("legacy", "modern"):
            watch = {"readyFile": str(tmp_path / f"{era}.ready"), "timeoutMs": DEADLINE_S * 1000}
            config = {**served.config("http", era), "watch": watch}
            watchers[era] = subprocess.Popen(
                [str(NODE), str(DRIVER), json.dumps(config)], stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT
            )
        async with (
            python_client(served, "http", "legacy", message_handler=on_message) as legacy,
            python_client(served, "http", "modern") as modern,
            modern.listen(prompts_list_changed=True) as subscription,
        ):
            assert subscription.honored.prompts_list_changed is True
            assert legacy.session.initialize_result is not None
            prompts = legacy.session.initialize_result.capabilities.prompts
            assert prompts is not None
            assert prompts.list_changed is True
            with anyio.fail_after(DEADLINE_S):
                while not all((tmp_path / f"{era}.ready").exists() for era in watchers):
                    await anyio.sleep(0.05)
            added.mkdir()
            (added / "SKILL.md").write_text("---\nname: added-later\ndescription: A skill added while served\n---\n")
            served.http.process.send_signal(signal.SIGHUP)
            with anyio.fail_after(DEADLINE_S):
                event = await subscription.__anext__()
                assert isinstance(event, PromptsListChanged)
                await legacy_told.wait()
            for client in (legacy, modern):
                assert "added-later" in {p.name for p in await every_prompt(client)}
        for era, watcher in watchers.items():
            out, _ = watcher.communicate(timeout=DEADLINE_S)
            run = json.loads(out)
            assert run["failures"] == [], era
            assert "added-later" in run["changed"], era
    finally:
        for watcher in watchers.values():
            if watcher.poll() is None:
                watcher.kill()
                watcher.wait()
        if added.exists():  # serve the module's collection again, for whatever runs next
            (added / "SKILL.md").unlink()
            added.rmdir()
            served.http.process.send_signal(signal.SIGHUP)
