"""`serve --prompts` in process: prompt names, paging, scopes and errors (`server/prompts.py`).

The prompts are the SDK's own `prompts/list` and `prompts/get` on a low-level `Server`, called through the SDK's
in-process `Client`; hostile params go out as raw requests the typed client would refuse to send. Real processes
over stdio and HTTP, with the TypeScript client too, are in tests/interop/test_prompts.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import GetPromptResult, ListPromptsResult, Request

from skillwire.core.scopes import ANONYMOUS, Caller, ScopePolicy, Visibility, parse_policy
from skillwire.server.extension import SkillsExtension
from skillwire.server.prompts import MAX_NAME_CHARS, SkillPrompts, origin_note, prompt_name, skill_uri_of
from skillwire.server.skill_service import ServeOptions, SkillService
from skillwire.service.run import build_server
from skillwire.sources.folder.source import FolderSource
from tests.support.servers import EXAMPLE_SKILLS, INVALID_PARAMS, resources_read

pytestmark = pytest.mark.anyio

# The bundled examples, in URI order (the order of skills/list), as their prompt names.
EXAMPLE_PROMPTS = {
    "acme:billing:refunds": "skill://acme/billing/refunds/SKILL.md",
    "code-review": "skill://code-review/SKILL.md",
    "code-review:security-review": "skill://code-review/security-review/SKILL.md",
    "git-workflow": "skill://git-workflow/SKILL.md",
    "pdf-processing": "skill://pdf-processing/SKILL.md",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class FixedCallers:
    """A `CallerResolver` whose every request comes from one caller under one policy."""

    def __init__(self, policy: str, caller: Caller) -> None:
        self.policy = parse_policy(policy, origin="test")
        self.who = caller

    def caller(self) -> Caller:
        return self.who

    async def scope(self) -> Visibility | None:
        return self.policy.visibility(self.who)

    def visibility(self, caller: Caller) -> Visibility | None:
        return self.policy.visibility(caller)

    def on_change(self, listener: Callable[[ScopePolicy], None]) -> None:
        pass


class RawPromptsList(Request[dict[str, Any] | None, Literal["prompts/list"]]):
    """`prompts/list` with params exactly as given."""

    method: Literal["prompts/list"] = "prompts/list"
    params: dict[str, Any] | None = None


class RawPromptGet(Request[dict[str, Any] | None, Literal["prompts/get"]]):
    """`prompts/get` with params exactly as given."""

    method: Literal["prompts/get"] = "prompts/get"
    params: dict[str, Any] | None = None


@asynccontextmanager
async def prompts_client(
    roots: list[Path], *, page_size: int = 100, callers: FixedCallers | None = None
) -> AsyncIterator[Client]:
    extension = SkillsExtension(SkillService(FolderSource(roots), ServeOptions(page_size=page_size)), callers=callers)
    server = build_server(extension)
    SkillPrompts(extension).install(server)
    async with Client(server, mode="auto", cache=None) as client:
        yield client


async def every_prompt(client: Client) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(100):
        page = await client.list_prompts(cursor=cursor)
        found += [p.model_dump(by_alias=True, exclude_none=True) for p in page.prompts]
        cursor = page.next_cursor
        if cursor is None:
            return found
    raise AssertionError("prompts/list never stopped handing out cursors")


async def refused(client: Client, params: dict[str, Any] | None) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await client.session.send_request(RawPromptGet(params=params), GetPromptResult)
    assert caught.value.error.code == INVALID_PARAMS
    return caught.value


# -- names ------------------------------------------------------------------------------------------------------------


def test_a_prompt_is_named_by_its_skill_path_with_colons_for_slashes() -> None:
    """skillwire choice: `/` would read as a path or a second command in a slash-command UI; `:` is what they use."""
    for name, uri in EXAMPLE_PROMPTS.items():
        assert prompt_name(uri) == name
        assert skill_uri_of(name) == uri
    assert prompt_name("skill://caf%C3%A9/x%20y/pdf/SKILL.md") == "caf%C3%A9:x%20y:pdf"


def test_every_other_spelling_of_a_name_stands_for_no_skill() -> None:
    """One name per prompt: a spelling `prompt_name` would not give is an unknown prompt, whatever it decodes to."""
    for name in [
        "acme/billing/refunds",  # slashes
        "%70df-processing",  # an encoded letter
        "acme:billing:refunds:",  # an empty segment
        ":pdf-processing",
        "acme::refunds",
        "a:..:b",
        "a:.:b",
        "pdf-processing/SKILL.md",
        "a%2Fb",  # an encoded slash
        "a%3ab",  # lowercase escape of a ':'
        "a\x00b",
        " pdf-processing",
        "",
        "x" * (MAX_NAME_CHARS + 1),
    ]:
        assert skill_uri_of(name) is None, name
    for value in [None, 1, ["pdf-processing"], {"name": "pdf-processing"}]:
        assert skill_uri_of(value) is None


async def test_folder_names_holding_colons_give_distinct_names(tmp_path: Path) -> None:
    """A ':' inside a folder name is written %3A, so `x/a:b/c` and `x/a/b/c` are two prompts, each reachable."""
    for path in ("x/a:b/c", "x/a/b/c"):
        folder = tmp_path / "skills" / path
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: c\ndescription: The skill at {path}\n---\nBody of {path}.\n")
    async with prompts_client([tmp_path / "skills"]) as client:
        names = [p["name"] for p in await every_prompt(client)]
        assert sorted(names) == ["x:a%3Ab:c", "x:a:b:c"]
        for name, path in [("x:a%3Ab:c", "x/a:b/c"), ("x:a:b:c", "x/a/b/c")]:
            got = await client.get_prompt(name)
            assert got.description == f"The skill at {path}"
            text = got.messages[0].content.text  # type: ignore[union-attr]
            assert text.endswith(f"Body of {path}.\n")


# -- listing and getting ----------------------------------------------------------------------------------------------


async def test_prompts_list_pages_like_skills_list_and_names_every_skill() -> None:
    """skillwire choice: pages of `--page-size` with opaque cursors, in skills/list's order; title and description
    from the frontmatter, no arguments."""
    async with prompts_client([EXAMPLE_SKILLS], page_size=2) as client:
        pages = []
        cursor: str | None = None
        while True:
            page = await client.list_prompts(cursor=cursor)
            pages.append([p.name for p in page.prompts])
            cursor = page.next_cursor
            if cursor is None:
                break
        assert pages == [list(EXAMPLE_PROMPTS)[i : i + 2] for i in range(0, 5, 2)]
        listed = {p["name"]: p for p in await every_prompt(client)}
        refunds = listed["acme:billing:refunds"]
        assert refunds == {
            "name": "acme:billing:refunds",
            "title": "refunds",
            "description": "Process customer refund requests per company policy",
        }


async def test_prompts_get_is_the_skill_md_as_read_behind_its_origin() -> None:
    """skillwire choice (spec: hosts MUST tag skill content with its origin): one user message, the origin
    statement and then exactly the text resources/read gives."""
    async with prompts_client([EXAMPLE_SKILLS]) as client:
        for name, uri in EXAMPLE_PROMPTS.items():
            got = await client.get_prompt(name)
            assert len(got.messages) == 1
            message = got.messages[0]
            assert message.role == "user"
            assert message.content.type == "text"
            read = (await resources_read(client, uri)).contents[0]["text"]
            assert message.content.text == origin_note(uri) + read
        note = origin_note("skill://pdf-processing/SKILL.md")
        assert "skill://pdf-processing/SKILL.md" in note
        assert "MCP server" in note
        assert "not the user's own words" in note


async def test_a_scoped_caller_has_prompts_only_for_its_skills_and_a_hidden_one_is_unknown() -> None:
    """Issue 10's rule on prompts: a hidden skill has no prompt, and asking for one answers exactly as a name
    no skill has (same code, same message shape)."""
    callers = FixedCallers('[[grant]]\nsubject = "billing"\nskills = ["acme/**"]\n', Caller(subject="billing"))
    async with prompts_client([EXAMPLE_SKILLS], page_size=1, callers=callers) as client:
        assert [p["name"] for p in await every_prompt(client)] == ["acme:billing:refunds"]
        assert (await client.get_prompt("acme:billing:refunds")).messages
        hidden = (await refused(client, {"name": "pdf-processing"})).error
        missing = (await refused(client, {"name": "pdf-processinh"})).error
        assert hidden.message.replace("pdf-processing", "X") == missing.message.replace("pdf-processinh", "X")
        assert hidden.data == missing.data
    nobody = FixedCallers('[[grant]]\nsubject = "billing"\nskills = ["acme/**"]\n', ANONYMOUS)
    async with prompts_client([EXAMPLE_SKILLS], callers=nobody) as client:
        assert await every_prompt(client) == []
        await refused(client, {"name": "acme:billing:refunds"})


# -- hostile input ----------------------------------------------------------------------------------------------------


async def test_bad_names_and_arguments_get_specific_invalid_params_errors() -> None:
    """MCP (prompts, Error Handling): "Invalid prompt name: -32602", "Missing required arguments: -32602"; each
    message says what is wrong, bounded, with the name escaped."""
    async with prompts_client([EXAMPLE_SKILLS]) as client:
        cases: list[tuple[dict[str, Any] | None, str]] = [
            ({"name": "no-such-skill"}, "Unknown prompt: 'no-such-skill' (prompts/list names every prompt)"),
            ({"name": "acme/billing/refunds"}, "Unknown prompt: 'acme/billing/refunds'"),
            ({"name": "a\nb\x00\u202e"}, "Unknown prompt: 'a\\nb\\x00\\u202e'"),
            (None, "params.name is required"),
            ({}, "params.name is required"),
            ({"name": 7}, "params.name must be a string, not int"),
            ({"name": ["pdf-processing"]}, "params.name must be a string, not list"),
            ({"name": "pdf-processing", "arguments": "task"}, "params.arguments must be an object, not str"),
            ({"name": "pdf-processing", "arguments": {"task": 1}}, "params.arguments must map argument names to"),
            ({"name": "pdf-processing", "arguments": {"task": "x"}}, "prompt 'pdf-processing' takes no arguments"),
        ]
        for params, expected in cases:
            error = await refused(client, params)
            assert expected in error.error.message, (params, error.error.message)
        huge = await refused(client, {"name": "n" * 1_000_000})
        assert len(huge.error.message) < 300
        empty = await client.get_prompt("pdf-processing", {})
        assert empty.messages
        with pytest.raises(MCPError) as caught:
            await client.list_prompts(cursor="not-a-cursor")
        assert caught.value.error.code == INVALID_PARAMS
        assert "cursor" in caught.value.error.message
        with pytest.raises(MCPError) as caught:
            await client.session.send_request(RawPromptsList(params={"cursor": 5}), ListPromptsResult)
        assert caught.value.error.code == INVALID_PARAMS
        assert caught.value.error.message == "params.cursor must be a string, not int"
