"""`ChangeNotifier(announce=...)`: a catalog change is news for the tools and prompts made from it too (skillwire
choice; the notifications are MCP's `notifications/{tools,prompts}/list_changed` and their listen events).

In process (the SDK's in-memory client on both eras): the wire tests are tests/server/test_tools_interop.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import PromptsListChanged, ResourcesListChanged, ServerEvent, ToolsListChanged

from skillwire.server.extension import SkillsExtension
from skillwire.server.skill_service import SkillService
from skillwire.service.notify import ChangeNotifier
from skillwire.service.run import build_server
from skillwire.service.watch import LiveReload
from skillwire.sources.folder.source import FolderSource

pytestmark = pytest.mark.anyio
DEADLINE_S = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write_skill(folder: Path, description: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {folder.name}\ndescription: {description}\n---\n# Hi\n")


async def _no_tools(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None) -> Any:
    return types.ListToolsResult(tools=[])


async def _no_prompts(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None) -> Any:
    return types.ListPromptsResult(prompts=[])


def served(root: Path, announce: frozenset[str]) -> tuple[SkillService, Server[Any], LiveReload]:
    """A skills server that also has (empty) tools and prompts, with change notifications announcing `announce`."""
    service = SkillService(FolderSource([root]))
    server = build_server(SkillsExtension(service))
    server.add_request_handler("tools/list", types.PaginatedRequestParams, _no_tools)
    server.add_request_handler("prompts/list", types.PaginatedRequestParams, _no_prompts)
    live = LiveReload(service, watch=False, announce=announce)
    live.install(server)
    return service, server, live


async def changed(root: Path, service: SkillService, live: LiveReload) -> None:
    write_skill(root / "alpha", "Edited")
    await service.rebuild()
    await live.notifier.publish(service.catalog)


async def test_announced_kinds_reach_handshake_sessions_and_listen_streams_and_initialize_declares_them(
    tmp_path: Path,
) -> None:
    root = tmp_path / "skills"
    write_skill(root / "alpha", "First")
    service, server, live = served(root, frozenset({"tools", "prompts"}))
    heard: list[str] = []
    all_heard = anyio.Event()

    async def on_message(message: types.ServerNotification | Exception) -> None:
        kinds = {
            types.ResourceListChangedNotification: "resources",
            types.ToolListChangedNotification: "tools",
            types.PromptListChangedNotification: "prompts",
        }
        heard.extend(kind for cls, kind in kinds.items() if isinstance(message, cls))
        if len(heard) == 3:
            all_heard.set()

    async with (
        Client(server, mode="legacy", cache=None, message_handler=on_message) as legacy,
        Client(server, mode="auto", cache=None) as modern,
    ):
        assert legacy.session.initialize_result is not None
        capabilities = legacy.session.initialize_result.capabilities
        declared = capabilities.model_dump(by_alias=True, exclude_none=True)
        assert {kind: declared[kind].get("listChanged") for kind in ("tools", "prompts", "resources")} == {
            "tools": True,
            "prompts": True,
            "resources": True,
        }
        async with modern.listen(
            tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
        ) as subscription:
            await changed(root, service, live)
            events: list[ServerEvent] = []
            with anyio.fail_after(DEADLINE_S):
                while len(events) < 3:
                    events.append(await subscription.__anext__())
            assert set(map(type, events)) == {ResourcesListChanged, ToolsListChanged, PromptsListChanged}
            with anyio.fail_after(DEADLINE_S):
                await all_heard.wait()
        assert sorted(heard) == ["prompts", "resources", "tools"]


async def test_without_announce_only_resources_are_news(tmp_path: Path) -> None:
    """The default is today's behaviour: nothing is said about tools or prompts the catalog does not make."""
    root = tmp_path / "skills"
    write_skill(root / "alpha", "First")
    service, server, live = served(root, frozenset())
    heard: list[type[Any]] = []

    async def on_message(message: types.ServerNotification | Exception) -> None:
        heard.append(type(message))

    async with Client(server, mode="legacy", cache=None, message_handler=on_message) as legacy:
        assert legacy.session.initialize_result is not None
        capabilities = legacy.session.initialize_result.capabilities
        assert not capabilities.model_dump(by_alias=True)["tools"]["listChanged"]
        await changed(root, service, live)
        with anyio.fail_after(DEADLINE_S):
            while not heard:
                await anyio.sleep(0.01)
        await anyio.sleep(0.2)  # anything sent after the resources notification has arrived too
    assert heard == [types.ResourceListChangedNotification]


def test_only_tools_and_prompts_can_be_announced(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "alpha", "First")
    with pytest.raises(ValueError, match="announce takes"):
        ChangeNotifier(SkillService(FolderSource([root])), announce=frozenset({"resources"}))
