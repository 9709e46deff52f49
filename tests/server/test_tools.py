"""The skills tools in process (`server/tools.py`, `server/tool_set.py`): exact schemas, arguments a model gets
wrong, answers that fit their output schemas, one handler for every tool (skillwire choices; the wire and real
clients are tests/interop/test_tools_clients.py).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client, types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from skillwire import GeneratedSkill, GeneratedSource
from skillwire.server.extension import SkillsExtension
from skillwire.server.search_tool import SkillSearch, auto_instructions, search_tool
from skillwire.server.skill_service import ServeOptions, SkillService
from skillwire.server.tool_set import ToolSet
from skillwire.server.tools import READ_SKILL, SkillTools, file_read
from skillwire.service.run import build_server
from skillwire.sources.folder.source import FolderSource

pytestmark = pytest.mark.anyio
INVALID_PARAMS, INTERNAL_ERROR = -32602, -32603


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def extension(tmp_path: Path) -> SkillsExtension:
    for name in ("alpha", "beta", "gamma"):
        folder = tmp_path / "skills" / name
        (folder / "scripts").mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Does {name}\n---\n# {name}\n")
        (folder / "scripts" / "run.sh").write_text("echo run\n")
    (tmp_path / "skills" / "alpha" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    return SkillsExtension(SkillService(FolderSource([tmp_path / "skills"]), ServeOptions(page_size=2)))


def tools_of(extension: SkillsExtension) -> ToolSet:
    return ToolSet([SkillTools(extension), SkillSearch(extension, read_tool=READ_SKILL)])


def error_text(result: types.CallToolResult) -> str:
    assert result.is_error is True
    assert result.structured_content is None
    assert len(result.content) == 1
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert "\n" not in text.text
    return text.text


SCHEMAS = {tool.name: tool for tool in (*SkillTools.tools, search_tool(READ_SKILL))}


def test_every_schema_is_exact_and_bounded() -> None:
    """Every object in every schema names its properties and refuses others; every string argument is bounded."""
    assert list(SCHEMAS) == ["list_skills", "read_skill", "read_skill_file", "search_skills"]

    def objects(schema: Any) -> list[dict[str, Any]]:
        if isinstance(schema, dict):
            found = [schema] if schema.get("type") == "object" else []
            return found + [o for value in schema.values() for o in objects(value)]
        return [o for value in schema for o in objects(value)] if isinstance(schema, list) else []

    for tool in SCHEMAS.values():
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        for schema in (tool.input_schema, tool.output_schema or {}):
            jsonschema.Draft202012Validator.check_schema(schema)
            for obj in objects(schema):
                assert obj["additionalProperties"] is False, tool.name
                assert set(obj.get("required", ())) <= set(obj["properties"]), tool.name
        for argument in tool.input_schema["properties"].values():
            if argument["type"] == "string":
                assert 1 <= argument.get("minLength", 1) <= argument["maxLength"] <= 8192, tool.name
            else:
                assert 1 <= argument["minimum"] <= argument["maximum"] <= 50, tool.name
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert len(tool.description or "") > 150, "a description a model can decide by"
    assert SCHEMAS["read_skill_file"].output_schema is None, "its content is the file: text or an embedded blob"


# (tool, arguments, the start of the one-line error, whether the input schema allows the arguments)
BAD_ARGUMENTS: list[tuple[str, dict[str, Any], str, bool]] = [
    ("list_skills", {"page": 2}, "unknown argument(s): 'page' (this tool takes: 'cursor')", False),
    ("list_skills", {"cursor": 3}, "'cursor' must be the nextCursor of the previous page", False),
    ("list_skills", {"cursor": ""}, "'cursor' must be the nextCursor of the previous page", False),
    ("list_skills", {"cursor": "x" * 8193}, "'cursor' must be the nextCursor of the previous page", False),
    ("list_skills", {"cursor": "bm90IG91cnM"}, "Invalid cursor: not one this server handed out", True),
    ("read_skill", {}, "'uri' is required: a skill:// URI", False),
    ("read_skill", {"uri": ["skill://alpha/SKILL.md"]}, "'uri' must be a skill:// URI: a string of 1 to", False),
    ("read_skill", {"uri": "skill://" + "a" * 4100}, "'uri' must be a skill:// URI: a string of 1 to 4096", False),
    ("read_skill_file", {"uri": ""}, "'uri' must be a skill:// URI", False),
    ("read_skill", {"uri": "skill://alpha/SKILL.md", "path": "x"}, "unknown argument(s): 'path'", False),
    ("read_skill", {"uri": "https://example.com/alpha"}, "https://example.com/alpha is not a skill:// URI", True),
    (
        "read_skill",
        {"uri": "skill://alpha/../beta/SKILL.md"},
        "skill://alpha/../beta/SKILL.md is not a skill:// URI",
        True,
    ),
    ("read_skill", {"uri": "skill://delta/SKILL.md"}, "No skill is served at skill://delta/SKILL.md", True),
    ("read_skill", {"uri": "skill://alpha/scripts"}, "No skill is served at skill://alpha/scripts/SKILL.md", True),
    ("read_skill", {"uri": "skill://alpha/scripts/run.sh"}, "skill://alpha/scripts/run.sh is a file of a skill", True),
    ("read_skill_file", {"uri": "skill://alpha/scripts"}, "skill://alpha/scripts is a folder, not a file", True),
    ("read_skill_file", {"uri": "skill://alpha/nothing.md"}, "No resource is served at skill://alpha/nothing.md", True),
    ("read_skill_file", {"uri": "skill://alpha/scripts/"}, "skill://alpha/scripts/ is not a skill:// URI", True),
    ("read_skill_file", {"uri": "skill:alpha"}, "skill:alpha is not a skill:// URI", True),
    ("read_skill_file", {"uri": "skill://a\x00b"}, "skill://a\\x00b is not a skill:// URI", True),
    ("search_skills", {"query": ""}, "'query' must be a non-empty string", False),
]


@pytest.mark.parametrize(("tool", "arguments", "expected", "schema_allows"), BAD_ARGUMENTS)
async def test_a_models_mistake_is_a_tool_error_in_one_line(
    extension: SkillsExtension, tool: str, arguments: dict[str, Any], expected: str, schema_allows: bool
) -> None:
    """Not a protocol error: the model reads what to fix and calls again. What the input schema refuses, the tool
    refuses before looking anything up; what it allows fails only for what the URI or cursor names."""
    assert error_text(await tools_of(extension).call(tool, arguments)).startswith(expected)
    assert jsonschema.Draft202012Validator(SCHEMAS[tool].input_schema).is_valid(arguments) is schema_allows


async def test_answers_fit_their_output_schemas_and_pages_reach_every_skill(extension: SkillsExtension) -> None:
    tools = tools_of(extension)
    schemas = {tool.name: tool.output_schema for tool in tools.tools}
    uris: list[str] = []
    cursor: str | None = None
    for _ in range(10):
        page = await tools.call("list_skills", {} if cursor is None else {"cursor": cursor})
        assert page.is_error is not True
        jsonschema.validate(page.structured_content, schemas["list_skills"])
        assert page.structured_content is not None
        uris += [skill["uri"] for skill in page.structured_content["skills"]]
        cursor = page.structured_content.get("nextCursor")
        if cursor is None:
            break
    assert uris == [f"skill://{name}/SKILL.md" for name in ("alpha", "beta", "gamma")]
    for asked in ("skill://alpha/SKILL.md", "skill://alpha", "skill://alpha/"):
        skill = await tools.call("read_skill", {"uri": asked})
        jsonschema.validate(skill.structured_content, schemas["read_skill"])
        assert skill.structured_content is not None
        assert skill.structured_content["uri"] == "skill://alpha/SKILL.md"
        assert [f["uri"] for f in skill.structured_content["files"]] == [
            "skill://alpha/SKILL.md",
            "skill://alpha/logo.png",
            "skill://alpha/scripts/run.sh",
        ]
    found = await tools.call("search_skills", {"query": "gamma"})
    jsonschema.validate(found.structured_content, schemas["search_skills"])
    logo = (await tools.call("read_skill_file", {"uri": "skill://alpha/logo.png"})).content
    assert [block.type for block in logo] == ["resource"]
    script = (await tools.call("read_skill_file", {"uri": "skill://alpha/scripts/run.sh"})).content
    assert script == [types.TextContent(type="text", text="echo run\n")]


async def test_a_generated_skill_lists_its_files_without_size_or_digest_and_reads_them_fresh() -> None:
    """A dynamic manifest has no sizes or digests to give; its files are still named, and read as they are made."""
    skill = GeneratedSkill(
        "reports/daily",
        description="Today's report",
        instructions="Read data.csv\n",
        files={
            "data.csv": "a,b\n1,2\n",
        },
    )
    extension = SkillsExtension(SkillService(GeneratedSource([skill])))
    tools = tools_of(extension)
    read = await tools.call("read_skill", {"uri": "skill://reports/daily"})
    schema = next(tool.output_schema for tool in tools.tools if tool.name == "read_skill")
    jsonschema.validate(read.structured_content, schema)
    assert read.structured_content is not None
    assert read.structured_content["files"] == [
        {"uri": "skill://reports/daily/SKILL.md"},
        {"uri": "skill://reports/daily/data.csv"},
    ]
    data = await tools.call("read_skill_file", {"uri": "skill://reports/daily/data.csv"})
    assert data.content == [types.TextContent(type="text", text="a,b\n1,2\n")]


class _Broken:
    tools: Sequence[types.Tool] = (types.Tool(name="broken", input_schema={"type": "object"}),)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> types.CallToolResult:
        raise RuntimeError("/secret/path exploded")


async def test_one_handler_serves_every_tool_and_refuses_what_it_cannot(
    extension: SkillsExtension, caplog: pytest.LogCaptureFixture
) -> None:
    """Unknown tool: -32602. A tool that fails unexpectedly: -32603, generic on the wire, the traceback in the log.
    Two tools of one name, or a second tools handler on one server, are refused when wired."""
    server = build_server(extension)
    ToolSet([SkillTools(extension), SkillSearch(extension), _Broken()]).install(server)
    with pytest.raises(ValueError, match="already has a handler"):
        SkillSearch(extension).install(server)
    with pytest.raises(ValueError, match="two tools are named 'search_skills'"):
        ToolSet([SkillSearch(extension), SkillSearch(extension)])
    async with Client(server, cache=None) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == ["list_skills", "read_skill", "read_skill_file", "search_skills", "broken"]
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("nope", {})
        assert unknown.value.error.code == INVALID_PARAMS
        with caplog.at_level(logging.ERROR), pytest.raises(MCPError) as broken:
            await client.call_tool("broken", {})
        assert broken.value.error.code == INTERNAL_ERROR
        assert "secret" not in broken.value.error.message
        assert "/secret/path exploded" in caplog.text


def test_search_alone_is_still_its_own_tool_set(extension: SkillsExtension) -> None:
    server: Server[Any] = build_server(extension)
    SkillSearch(extension).install(server)
    assert server.get_request_handler("tools/call") is not None


def test_the_read_budget_is_told_what_a_tool_call_reads() -> None:
    """read_skill's answer holds the SKILL.md twice (text and structured text); read_skill_file once."""
    assert file_read("read_skill", {"uri": "skill://a/b"}) == ("skill://a/b/SKILL.md", 2)
    assert file_read("read_skill", {"uri": "skill://a/b/"}) == ("skill://a/b/SKILL.md", 2)
    assert file_read("read_skill", {"uri": "skill://a/SKILL.md"}) == ("skill://a/SKILL.md", 2)
    assert file_read("read_skill_file", {"uri": "skill://a/%62.md"}) == ("skill://a/b.md", 1)
    for name, arguments in (
        ("read_skill_file", {"uri": "skill://a/../b"}),
        ("read_skill_file", {"uri": 3}),
        ("read_skill", "skill://a"),
        ("search_skills", {"query": "skill://a/b.md"}),
        (None, {"uri": "skill://a/b.md"}),
    ):
        assert file_read(name, arguments) is None


def test_auto_instructions_name_the_tools_when_they_are_on(extension: SkillsExtension) -> None:
    catalog = extension.service.catalog
    text = auto_instructions(catalog, search_tool=True, scoped=False, tools=True)
    for name in ("search_skills", "list_skills", "read_skill ", "read_skill_file"):
        assert name in text
    assert "skills/get" not in text
    assert "read_skill" not in auto_instructions(catalog, search_tool=True, scoped=False)
