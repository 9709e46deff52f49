"""Embedding the Skills extension in a server of one's own (issue 20), in-process with the SDK's own `Client`.

`skills.install(server)` wires everything into an `MCPServer` or a low-level `Server` in one call; an `MCPServer`
given the extension without its read path fails at construction with `WiringError` saying what to add; a server
that has the methods but not the middleware fails its first request the same way, in its log. A duplicate name
is logged by the service itself, so an embedder hears of it without the CLI. (The wire half, internal methods
unreachable over stdio and HTTP, is tests/server/test_internal_routes.py.)
"""

from __future__ import annotations

import logging
from typing import Any, Literal

import pytest
from mcp import Client
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from skillwire import MemorySource, SkillService, SkillsExtension, WiringError
from tests.support.servers import EXTENSION_ID, resources_list, resources_read, skills_list, wire

pytestmark = pytest.mark.anyio

SERVICE_LOG = "skillwire.server.skill_service"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def skill_md(name: str) -> bytes:
    return f"---\nname: {name}\ndescription: Does {name} things.\n---\n# {name}\n".encode()


def extension(files: dict[str, bytes] | None = None) -> SkillsExtension:
    return SkillsExtension(SkillService(MemorySource(files or {"pdf/SKILL.md": skill_md("pdf")})))


def server_of(kind: Literal["MCPServer", "Server"], skills: SkillsExtension) -> Any:
    server: Any = MCPServer("docs") if kind == "MCPServer" else Server("docs")
    skills.install(server)
    return server


@pytest.mark.parametrize("kind", ["MCPServer", "Server"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_install_wires_the_extension_and_its_read_path_in_one_call(kind: Any, mode: Any) -> None:
    """skillwire choice (issue 20): after `skills.install(server)` the extension is declared and its files are listed
    and read, on both eras, whichever kind of SDK server holds it."""
    async with Client(server_of(kind, extension()), mode=mode, cache=None) as client:
        declared = client.server_capabilities.extensions if client.server_capabilities else None
        listed = wire(await skills_list(client))["skills"]
        files = wire(await resources_list(client))["resources"]
        read = wire(await resources_read(client, "skill://pdf/SKILL.md"))["contents"]
    assert declared == {EXTENSION_ID: {"directoryRead": True}}
    assert [e["uri"] for e in listed] == ["skill://pdf/SKILL.md"]
    assert [f["uri"] for f in files] == ["skill://pdf/SKILL.md"]
    assert read[0]["text"] == skill_md("pdf").decode()


async def test_an_mcpserver_given_the_extension_without_its_read_path_fails_at_construction() -> None:
    """skillwire choice (issue 20): before, `MCPServer(extensions=[skills])` started, declared the extension and
    answered skills/list, and failed every read of a listed file; now it is refused, naming both remedies."""
    with pytest.raises(WiringError) as refused:
        MCPServer("docs", extensions=[extension()])
    assert "skills.install(server)" in str(refused.value)
    assert "middleware=[skills.middleware]" in str(refused.value)


async def test_the_constructor_form_with_the_middleware_beside_the_extension_still_serves_reads() -> None:
    """skillwire choice (issue 20): `MCPServer(extensions=[skills], middleware=[skills.middleware])` is whole."""
    skills = extension()
    async with Client(MCPServer("docs", extensions=[skills], middleware=[skills.middleware]), cache=None) as client:
        read = wire(await resources_read(client, "skill://pdf/SKILL.md"))["contents"]
    assert read[0]["text"] == skill_md("pdf").decode()


async def test_a_server_with_the_methods_but_not_the_middleware_says_what_to_add_at_its_first_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """skillwire choice (issue 20): the middleware asked for and then left out is caught at the first request: -32603
    to the client, and the server's log says what to add."""
    skills = extension()
    _ = skills.middleware  # asked for, never installed
    with caplog.at_level(logging.ERROR, logger="skillwire.server.extension"):
        async with Client(MCPServer("docs", extensions=[skills]), cache=None) as client:
            with pytest.raises(MCPError) as failed:
                await skills_list(client)
    assert failed.value.error.code == -32603
    [record] = [r for r in caplog.records if r.name == "skillwire.server.extension"]
    assert "skills.install(server)" in record.getMessage()


async def test_installing_twice_on_one_server_is_refused() -> None:
    """skillwire choice (issue 20): a second install would shadow the first one's handlers: `WiringError`."""
    server = server_of("Server", extension())
    with pytest.raises(WiringError, match="already has a handler"):
        extension().install(server)


async def test_a_duplicate_name_is_logged_once_by_the_service_naming_both_skills(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """skillwire choice (issue 20): an embedder is told of two skills sharing a name (before: only `skillwire serve`
    said it); once per new set of skills, not at every rebuild."""
    files = {"team-a/pdf/SKILL.md": skill_md("pdf"), "team-b/pdf/SKILL.md": skill_md("pdf")}
    with caplog.at_level(logging.WARNING, logger=SERVICE_LOG):
        skills = extension(files)
        await skills.service.rebuild()  # the same skills: nothing new to say
        first = [r.getMessage() for r in caplog.records if r.name == SERVICE_LOG]
        skills.service.swap(MemorySource({**files, "team-c/pdf/SKILL.md": skill_md("pdf")}).scan())
        second = [r.getMessage() for r in caplog.records if r.name == SERVICE_LOG][len(first) :]
    seen = "; a host that keys skills by name sees only one"
    assert first == [
        "the name 'pdf' is used by 2 skills: skill://team-a/pdf/SKILL.md, skill://team-b/pdf/SKILL.md" + seen
    ]
    assert second == [
        "the name 'pdf' is used by 3 skills: "
        "skill://team-a/pdf/SKILL.md, skill://team-b/pdf/SKILL.md, skill://team-c/pdf/SKILL.md" + seen
    ]


async def test_many_new_duplicate_names_are_logged_as_a_few_lines_and_a_count(caplog: pytest.LogCaptureFixture) -> None:
    """skillwire choice (issue 22): a change that brings 20 shared names at once logs three of them and one line
    counting the rest (before: one line each, ~80 KB of stderr on a large collection)."""
    skills = extension()
    shared = {f"{team}/name-{i:02d}/SKILL.md": skill_md(f"name-{i:02d}") for team in ("a", "b") for i in range(20)}
    with caplog.at_level(logging.WARNING, logger=SERVICE_LOG):
        skills.service.swap(MemorySource(shared).scan())
    said = [r.getMessage() for r in caplog.records if r.name == SERVICE_LOG]
    assert len(said) == 4, said
    assert said[0].startswith("the name 'name-00' is used by 2 skills: skill://a/name-00/SKILL.md")
    assert said[3] == "and 17 more names used by several skills each"
