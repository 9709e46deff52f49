"""`serve --prompts`: one MCP prompt per served skill, for clients that show prompts as slash commands.

Most MCP clients people use do not call `skills/list` yet, but many list `prompts/list` as slash commands: with
`--prompts` a user types `/pdf-processing` (shown by the client under the server's name) and the skill's SKILL.md
lands in the conversation, stated as coming from this server.

Names. A prompt's name is its skill's path (the part of the SKILL.md URI between `skill://` and `/SKILL.md`) with
each `/` written `:`: `skill://acme/billing/refunds/SKILL.md` is the prompt `acme:billing:refunds`. Slash-command
UIs turn a folder path into a command name the same way (`frontend/component.md` is `/frontend:component` in
Claude Code and Gemini CLI), and a `/` inside a command name would read as a second command or a path. A `:` that
a folder name itself holds is written `%3A` (a canonical skill URI never holds `%3A`), so two skills never share a
name, and every prompt has exactly one name: another spelling of it is answered as an unknown prompt.

Prompts take no arguments: clients that ask for arguments open a form at each use, and some split what the user
types after the command into words; the user says what they want in their next message instead.

`prompts/get` answers the SKILL.md text as one user message behind a short statement of its origin (Security
Considerations: hosts "MUST tag MCP-served skill content with its originating server identity" and treat it as
untrusted input; the server says what it can: this server, the skill's URI, not the user's words). The text is
read through `SkillService.read_resource`, the read path of `resources/read`, with its verification and limits.
Scopes apply exactly as on `skills/list` (the listing is `SkillService.list_skills`): a skill a caller may not see
has no prompt for it, and asking for one is answered as for a name no skill has.

    prompts = SkillPrompts(extension)
    prompts.install(server)          # prompts/list and prompts/get on a low-level Server
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    PaginatedRequestParams,
    Prompt,
    PromptMessage,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skillwire.core.errors import InvalidSkillUri
from skillwire.core.uri import MAX_URI_LENGTH, PREFIX, SKILL_FILE, canonical_uri
from skillwire.core.wire import INTERNAL_ERROR, INVALID_PARAMS
from skillwire.server.extension import SkillsExtension, contained

PROMPTS_LIST = "prompts/list"
PROMPTS_GET = "prompts/get"
SEPARATOR = ":"
_ESCAPED = "%3A"  # a ':' inside one folder name
_SUFFIX = "/" + SKILL_FILE
MAX_NAME_CHARS = MAX_URI_LENGTH - len(PREFIX) - len(_SUFFIX)  # no longer name can stand for a served skill


def prompt_name(skill_uri: str) -> str:
    """The prompt name of the skill whose SKILL.md is at `skill_uri` (canonical): its path, `/` written `:`.

    `skill://acme/billing/refunds/SKILL.md` -> `acme:billing:refunds`; a folder named `a:b` -> `a%3Ab`.
    """
    path = skill_uri[len(PREFIX) : -len(_SUFFIX)]
    return SEPARATOR.join(segment.replace(":", _ESCAPED) for segment in path.split("/"))


def skill_uri_of(name: object) -> str | None:
    """The canonical SKILL.md URI whose prompt is named `name`, or None if no skill could have that name.

    Only the exact name `prompt_name` gives counts: a name spelled otherwise (`a/b`, `%70df`, `A%3ab`) is None.
    Whether a skill is served there is the catalog's to say.
    """
    if not isinstance(name, str) or not name or len(name) > MAX_NAME_CHARS:
        return None
    path = "/".join(segment.replace(_ESCAPED, ":") for segment in name.split(SEPARATOR))
    try:
        uri = canonical_uri(PREFIX + path + _SUFFIX)
    except InvalidSkillUri:
        return None
    if not uri.endswith(_SUFFIX) or prompt_name(uri) != name:
        return None
    return uri


def origin_note(skill_uri: str) -> str:
    """What precedes a skill's text in its prompt message: where it comes from and what it is (and is not)."""
    return (
        f"[Agent Skill {skill_uri}, served by the MCP server that offers this prompt. The SKILL.md below is "
        "reference material from that server, not the user's own words.]\n\n"
    )


class SkillPrompts:
    """`prompts/list` and `prompts/get` over one extension's skills, as its caller sees them."""

    def __init__(self, extension: SkillsExtension) -> None:
        self.extension = extension

    def install(self, server: Server[Any]) -> None:
        """Serve prompts/list and prompts/get on `server` (which must have no other prompts)."""
        for method in (PROMPTS_LIST, PROMPTS_GET):
            if server.get_request_handler(method) is not None:
                raise ValueError(f"{method!r} already has a handler on this server")
        server.add_request_handler(PROMPTS_LIST, PaginatedRequestParams, contained(PROMPTS_LIST, self._list))
        server.add_request_handler(PROMPTS_GET, GetPromptRequestParams, contained(PROMPTS_GET, self._get))
        server.middleware.append(checked_prompt_params)

    async def list_prompts(self, cursor: object, *, modern: bool) -> dict[str, Any]:
        """One page of prompts: the page `skills/list` gives the caller for `cursor`, a prompt per skill."""
        page = self.extension.service.list_skills(cursor, modern=modern, scope=await self.extension.scope())
        result: dict[str, Any] = {k: v for k, v in page.items() if k != "skills"}
        result["prompts"] = [_prompt(entry) for entry in page["skills"]]
        return result

    async def get_prompt(self, name: object, arguments: object) -> GetPromptResult:
        """The skill named `name` as a user message behind its origin; -32602 for a name no visible skill has."""
        service = self.extension.service
        scope = await self.extension.scope()
        uri = skill_uri_of(name)
        skill = None if uri is None else service.view(service.catalog, scope).skill(uri)
        if uri is None or skill is None:
            raise _unknown(name)
        if arguments is not None and not isinstance(arguments, dict):
            raise MCPError(INVALID_PARAMS, f"params.arguments must be an object, not {type(arguments).__name__}")
        if arguments:
            given = ", ".join(_show(key, 40) for key in sorted(arguments, key=str)[:5])
            raise MCPError(INVALID_PARAMS, f"prompt {_show(name, 200)} takes no arguments (got {given})")
        try:
            read = await service.read_resource(uri, modern=False, scope=scope)
        except MCPError as error:
            if error.error.code == INVALID_PARAMS:  # the skill went away since it was looked up: as if never there
                raise _unknown(name) from None
            raise
        contents = read["contents"][0]
        text = contents.get("text")
        if not isinstance(text, str):
            raise MCPError(INTERNAL_ERROR, f"{uri} is not UTF-8 text; read it with resources/read", {"uri": uri})
        description = skill.frontmatter.get("description")
        message = PromptMessage(role="user", content=TextContent(type="text", text=origin_note(uri) + text))
        return GetPromptResult(description=description if isinstance(description, str) else None, messages=[message])

    async def _list(self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> HandlerResult:
        page = await self.list_prompts(params.cursor, modern=ctx.protocol_version in MODERN_PROTOCOL_VERSIONS)
        return ListPromptsResult.model_validate(page)

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: GetPromptRequestParams) -> HandlerResult:
        return await self.get_prompt(params.name, params.arguments)


async def checked_prompt_params(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Refuse malformed prompts params naming the field, before the SDK's own check answers a generic
    "Invalid request parameters" (it validates spec methods' params after the middleware)."""
    params = ctx.params if isinstance(ctx.params, Mapping) else {}
    if ctx.method == PROMPTS_LIST:
        cursor = params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise MCPError(INVALID_PARAMS, f"params.cursor must be a string, not {type(cursor).__name__}")
    elif ctx.method == PROMPTS_GET:
        name, arguments = params.get("name"), params.get("arguments")
        if name is None:
            raise MCPError(INVALID_PARAMS, "params.name is required: the name of a prompt from prompts/list")
        if not isinstance(name, str):
            raise MCPError(INVALID_PARAMS, f"params.name must be a string, not {type(name).__name__}")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise MCPError(INVALID_PARAMS, f"params.arguments must be an object, not {type(arguments).__name__}")
        if arguments is not None and not all(isinstance(value, str) for value in arguments.values()):
            raise MCPError(INVALID_PARAMS, "params.arguments must map argument names to strings")
    return await call_next(ctx)


def _prompt(entry: dict[str, Any]) -> dict[str, Any]:
    """A skills/list entry as a Prompt: its name from the path, title and description from the frontmatter."""
    frontmatter = entry["frontmatter"]
    prompt = Prompt(
        name=prompt_name(entry["uri"]),
        title=str(frontmatter["name"]),
        description=str(frontmatter["description"]),
    )
    return prompt.model_dump(by_alias=True, exclude_none=True)


def _unknown(name: object) -> MCPError:
    """The one answer for a name no skill the caller may see has (a hidden skill's included: no tell)."""
    return MCPError(INVALID_PARAMS, f"Unknown prompt: {_show(name, 200)} (prompts/list names every prompt)")


def _show(value: object, limit: int) -> str:
    """`value` as a quoted, escaped, bounded string for an error message."""
    if not isinstance(value, str):
        return type(value).__name__
    clean = value.encode("unicode_escape").decode("ascii")
    return f"'{clean}'" if len(clean) <= limit else f"'{clean[:limit]}'..."
