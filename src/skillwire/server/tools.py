"""`serve --tools`: the served skills as MCP tools, for clients that call tools but not `skills/list`.

Three tools (with `search_skills`, `search_tool.py`, a model's whole path to a skill): `list_skills` (a page of
skills: URI, name, description), `read_skill` (a SKILL.md's text and its manifest) and `read_skill_file` (any file
of a skill: text as text, other bytes as an embedded blob resource). Every answer comes from the `SkillService`
methods that answer `skills/list`, `skills/get` and `resources/read`, with the caller's scope (`extension.scope()`):
the same pages and cursors, the same re-check of a skill's folder, the same verified bytes and read cache, and a
skill outside the scope answers exactly as a missing one. Over HTTP the read budget sizes these calls as it sizes
`resources/read` (`file_read`). A model's mistakes (bad arguments, a URI not served) are tool results with
`isError` and one line saying what to fix.

    tools = ToolSet([SkillTools(extension), SkillSearch(extension, read_tool=READ_SKILL)])
    tools.install(server)
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import (
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    TextContent,
    Tool,
    ToolAnnotations,
)

from skillwire.core.errors import InvalidSkillUri
from skillwire.core.uri import MAX_URI_LENGTH, PREFIX, SKILL_FILE, canonical_uri
from skillwire.core.wire import INVALID_PARAMS
from skillwire.server.extension import SkillsExtension

LIST_SKILLS = "list_skills"
READ_SKILL = "read_skill"
READ_SKILL_FILE = "read_skill_file"
MAX_CURSOR_CHARS = 8_192  # a cursor names a skill URI (at most 4,096 characters), base64 of a little JSON
_HINTS = {  # after the service's word that something is not served: where the model finds what is
    LIST_SKILLS: " (leave cursor out to start from the first page)",
    READ_SKILL: " (list_skills and search_skills give the URIs of the skills)",
    READ_SKILL_FILE: " (read_skill gives the URIs of a skill's files)",
}
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
_STRING = {"type": "string"}


def _uri_argument(description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": MAX_URI_LENGTH, "description": description}


def _object(properties: Mapping[str, Any], required: Sequence[str]) -> dict[str, Any]:
    """A JSON Schema object with exactly `properties` (no others), `required` of them required."""
    return {"type": "object", "properties": dict(properties), "required": list(required), "additionalProperties": False}


LIST_SKILLS_TOOL = Tool(
    name=LIST_SKILLS,
    title="List skills",
    description=(
        "List the skills this server offers. A skill is a set of instructions (a SKILL.md, often with scripts, "
        "references or templates) for a specific kind of task. Call this at the start of a task a skill may cover "
        "to see each skill's URI, name and description (when to use it); when there are many, search_skills "
        "finds the right one from a few words. Then call read_skill with the chosen skill's URI. Returns one page: "
        "if nextCursor is present, call again with it as cursor for the next."
    ),
    input_schema=_object(
        {
            "cursor": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_CURSOR_CHARS,
                "description": "nextCursor from the previous page; leave it out for the first page.",
            }
        },
        (),
    ),
    output_schema=_object(
        {
            "skills": {
                "type": "array",
                "items": _object(
                    {"uri": _STRING, "name": _STRING, "description": _STRING}, ("uri", "name", "description")
                ),
            },
            "nextCursor": _STRING,
        },
        ("skills",),
    ),
    annotations=_READ_ONLY,
)
READ_SKILL_TOOL = Tool(
    name=READ_SKILL,
    title="Read a skill",
    description=(
        "Read a skill's instructions before doing the task it covers: returns its SKILL.md text, and the URI, size "
        "and digest of each of the skill's files. Follow the instructions; they are reference material from this "
        "server, not instructions from the user. When the SKILL.md names a file by a relative path (such as "
        "scripts/run.sh), read it with read_skill_file, using that file's URI from the list."
    ),
    input_schema=_object(
        {"uri": _uri_argument("The skill's URI from list_skills or search_skills (skill://.../SKILL.md).")}, ("uri",)
    ),
    output_schema=_object(
        {
            "uri": _STRING,
            "text": _STRING,
            "files": {
                "type": "array",
                "description": "Every file of the skill, SKILL.md first (size and digest are absent for a skill "
                "whose files are produced when they are read).",
                "items": _object(
                    {"uri": _STRING, "size": {"type": "integer", "minimum": 0}, "digest": _STRING}, ("uri",)
                ),
            },
        },
        ("uri", "text", "files"),
    ),
    annotations=_READ_ONLY,
)
READ_SKILL_FILE_TOOL = Tool(
    name=READ_SKILL_FILE,
    title="Read a file of a skill",
    description=(
        "Read one file of a skill (a script, reference, template or other file its SKILL.md mentions) by its URI "
        "from read_skill's file list. A text file comes back as text; any other file as an embedded resource with "
        "its bytes (base64) and media type."
    ),
    input_schema=_object({"uri": _uri_argument("The file's URI from read_skill (skill://...).")}, ("uri",)),
    annotations=_READ_ONLY,
)


class SkillTools:
    """list_skills, read_skill and read_skill_file over one extension's service, for the caller of each request."""

    tools: Sequence[Tool] = (LIST_SKILLS_TOOL, READ_SKILL_TOOL, READ_SKILL_FILE_TOOL)

    def __init__(self, extension: SkillsExtension) -> None:
        self.extension = extension
        self._calls: dict[str, Callable[[Mapping[str, Any]], Awaitable[CallToolResult]]] = {
            LIST_SKILLS: self.list_skills,
            READ_SKILL: self.read_skill,
            READ_SKILL_FILE: self.read_skill_file,
        }

    async def call(self, name: str, arguments: Mapping[str, Any]) -> CallToolResult:
        """Answer a call of one of these tools (a `ToolSet` routes only their names here)."""
        try:
            return await self._calls[name](arguments)
        except MCPError as err:  # the service's own answer (not served, a bad cursor, changing on disk): one line
            hint = _HINTS[name] if err.error.code == INVALID_PARAMS else ""
            return tool_error(err.error.message + hint)

    async def list_skills(self, arguments: Mapping[str, Any]) -> CallToolResult:
        """A page of skills as `skills/list` gives it to this caller: URI, name and description each."""
        problem = _unknown(arguments, ("cursor",))
        cursor = arguments.get("cursor")
        if problem is None and cursor is not None and not _bounded_string(cursor, MAX_CURSOR_CHARS):
            problem = f"'cursor' must be the nextCursor of the previous page (at most {MAX_CURSOR_CHARS} characters)"
        if problem is not None:
            return tool_error(problem)
        service = self.extension.service
        page = service.list_skills(cursor, modern=False, scope=await self.extension.scope())
        skills = [_listed(entry) for entry in page["skills"]]
        result: dict[str, Any] = {"skills": skills}
        if page.get("nextCursor") is not None:
            result["nextCursor"] = page["nextCursor"]
        return _structured(result)

    async def read_skill(self, arguments: Mapping[str, Any]) -> CallToolResult:
        """The SKILL.md text (as `resources/read` gives it) and the manifest (as `skills/get` gives it)."""
        problem = _uri_problem(arguments)
        if problem is not None:
            return tool_error(problem)
        uri = skill_md_uri(arguments["uri"])
        if uri is None:
            return tool_error(_bad_uri(arguments["uri"]))
        service, scope = self.extension.service, await self.extension.scope()
        folder = uri[: -len(SKILL_FILE) - 1]  # a file's URI if the model named a file (one the caller sees) instead
        if service.view(service.catalog, scope).file(folder) is not None:
            return tool_error(f"{folder} is a file of a skill, not a skill: read it with {READ_SKILL_FILE}")
        entry = (await service.get_skill(uri, modern=False, scope=scope))["skill"]
        contents = (await service.read_resource(uri, modern=False, scope=scope))["contents"][0]
        text = contents.get("text")
        if not isinstance(text, str):
            return tool_error(f"{uri} is not UTF-8 text; read its bytes with {READ_SKILL_FILE}")
        resources = entry["resources"]
        if isinstance(resources, list):
            files = [{"uri": r["uri"], "size": r["size"], "digest": r["digest"]} for r in resources]
        else:  # "dynamic": the files are produced when read, so only their URIs are known
            skill = service.view(service.catalog, scope).skill(uri)
            files = [{"uri": f.uri} for f in (skill.files if skill is not None else ())]
        structured = {"uri": uri, "text": text, "files": files}
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)

    async def read_skill_file(self, arguments: Mapping[str, Any]) -> CallToolResult:
        """One file's verified bytes, as `resources/read` gives them: text content, or an embedded blob."""
        problem = _uri_problem(arguments)
        if problem is not None:
            return tool_error(problem)
        try:
            uri = canonical_uri(arguments["uri"])
        except InvalidSkillUri:
            return tool_error(_bad_uri(arguments["uri"]))
        service, scope = self.extension.service, await self.extension.scope()
        if service.view(service.catalog, scope).is_directory(uri):
            return tool_error(f"{uri} is a folder, not a file: read_skill lists every file of the skill")
        contents = (await service.read_resource(uri, modern=False, scope=scope))["contents"][0]
        block: ContentBlock
        if isinstance(contents.get("text"), str):
            block = TextContent(type="text", text=contents["text"])
        else:
            blob = BlobResourceContents(uri=contents["uri"], mime_type=contents["mimeType"], blob=contents["blob"])
            block = EmbeddedResource(type="resource", resource=blob)
        return CallToolResult(content=[block])


def skill_md_uri(uri: str) -> str | None:
    """The canonical SKILL.md URI `uri` names: `uri` itself, or the SKILL.md in the skill folder `uri` names (one
    trailing slash allowed); None if it is no skill:// URI."""
    if uri.endswith("/") and len(uri) > len(PREFIX) + 1:
        uri = uri[:-1]
    try:
        canonical = canonical_uri(uri)
    except InvalidSkillUri:
        return None
    if canonical.endswith("/" + SKILL_FILE):
        return canonical
    return canonical + "/" + SKILL_FILE if len(canonical) + len(SKILL_FILE) < MAX_URI_LENGTH else None


def file_read(name: object, arguments: object) -> tuple[str, int] | None:
    """The read budget's question about a `tools/call`: the canonical URI of the file it reads and how many copies
    of its bytes the answer holds (read_skill: the text and the structured text), or None if it reads no file."""
    uri = arguments.get("uri") if isinstance(arguments, dict) else None
    if not isinstance(uri, str) or len(uri) > MAX_URI_LENGTH + 1:
        return None
    if name == READ_SKILL:
        found = skill_md_uri(uri)
        return None if found is None else (found, 2)
    if name == READ_SKILL_FILE:
        try:
            return canonical_uri(uri), 1
        except InvalidSkillUri:
            return None
    return None


def tool_error(message: str) -> CallToolResult:
    """A tool result saying what went wrong in one line (for the model to correct), not a protocol error."""
    line = " ".join(message.split())
    return CallToolResult(content=[TextContent(type="text", text=line)], is_error=True)


def _structured(result: dict[str, Any]) -> CallToolResult:
    """A result as structured content, and as its JSON text for clients that show only text."""
    text = json.dumps(result, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=result)


def _listed(entry: Mapping[str, Any]) -> dict[str, str]:
    """A skills/list entry as list_skills shows it."""
    frontmatter = entry["frontmatter"]
    return {"uri": entry["uri"], "name": str(frontmatter["name"]), "description": str(frontmatter["description"])}


def _unknown(arguments: Mapping[str, Any], known: Sequence[str]) -> str | None:
    unknown = set(arguments) - set(known)
    if not unknown:
        return None
    names = ", ".join(sorted(repr(name)[:40] for name in unknown))
    expected = ", ".join(repr(name) for name in known) or "none"
    return f"unknown argument(s): {names} (this tool takes: {expected})"


def _uri_problem(arguments: Mapping[str, Any]) -> str | None:
    problem = _unknown(arguments, ("uri",))
    if problem is None and "uri" not in arguments:
        problem = "'uri' is required: a skill:// URI from list_skills, search_skills or read_skill"
    if problem is None and not _bounded_string(arguments["uri"], MAX_URI_LENGTH):
        problem = f"'uri' must be a skill:// URI: a string of 1 to {MAX_URI_LENGTH} characters"
    return problem


def _bounded_string(value: object, most: int) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= most


def _bad_uri(uri: str) -> str:
    """What a URI that is no skill:// URI gets: the parser's reason, and where to find real ones."""
    try:
        canonical_uri(uri)
    except InvalidSkillUri as err:
        return f"{_shown(uri)} is not a skill:// URI this server could serve ({err.reason}); list_skills gives them"
    return f"{_shown(uri)} names no skill; list_skills gives their URIs"


def _shown(uri: str) -> str:
    clean = uri.encode("unicode_escape").decode("ascii")
    return clean if len(clean) <= 200 else clean[:200] + "..."
