"""Method names, settings, and the request and result shapes of the Skills extension on the wire: one module for both
sides (the server reads the params, the client sends the requests and reads the results).

The only core module that touches the SDK's types. Params models accept any
JSON for the fields they carry and the handlers check them, so that a malformed
request gets -32602 with a message naming the field rather than a generic one.
Result models keep every key the server sent, with fields typed `Any`: the
client's checks (`client/answers.py`) turn them into values and name the fault.

    EXTENSION_ID                      # 'io.modelcontextprotocol/skills'
    SkillsGetParams.model_validate({"uri": "skill://a/SKILL.md"})
    await session.send_request(SkillsGetRequest(params=SkillsGetParams(uri=uri)), SkillsGetResult)
"""

from __future__ import annotations

from typing import Any, Final, Literal

from mcp_types import PaginatedRequestParams, Request, RequestParams, Result
from pydantic import ConfigDict

EXTENSION_ID: Final = "io.modelcontextprotocol/skills"
SKILLS_LIST: Final = "skills/list"
SKILLS_GET: Final = "skills/get"
DIRECTORY_READ: Final = "resources/directory/read"
RESOURCES_LIST: Final = "resources/list"
RESOURCES_READ: Final = "resources/read"

#: `_meta` key prefix reserved for this extension on skill resources.
META_PREFIX: Final = "io.modelcontextprotocol.skills/"

METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603


def request_id_of(message: object) -> str | int | None:
    """The id of a parsed JSON-RPC request to answer an error with: a string or a number, else None (JSON null,
    as JSON-RPC 2.0 asks when the id cannot be told; a batch or a boolean id is such a case)."""
    found = message.get("id") if isinstance(message, dict) else None
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


def error_body(request_id: str | int | None, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response, for answers given before a request reaches the SDK (limits, budgets)."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


class _LooseParams(RequestParams):
    """Params whose fields are checked by the handler, so errors can name the field."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class SkillsListParams(_LooseParams):
    """`skills/list` params: an optional opaque cursor."""

    cursor: Any = None


class SkillsGetParams(_LooseParams):
    """`skills/get` params: the URI of a skill's SKILL.md."""

    uri: Any = None


class DirectoryReadParams(_LooseParams):
    """`resources/directory/read` params: a directory URI and an optional cursor."""

    uri: Any = None
    cursor: Any = None


# -- the requests a client sends, and the results it reads -------------------------------------------------------------


class SkillsListRequest(Request[PaginatedRequestParams | None, Literal["skills/list"]]):
    """`skills/list`, with an optional cursor."""

    method: Literal["skills/list"] = "skills/list"
    params: PaginatedRequestParams | None = None


class SkillsGetRequest(Request[SkillsGetParams, Literal["skills/get"]]):
    """`skills/get` for one SKILL.md URI."""

    method: Literal["skills/get"] = "skills/get"
    params: SkillsGetParams


class DirectoryReadRequestParams(PaginatedRequestParams):
    """`resources/directory/read` params as a client sends them: a directory URI and an optional cursor."""

    uri: str


class DirectoryReadRequest(Request[DirectoryReadRequestParams, Literal["resources/directory/read"]]):
    """`resources/directory/read` for one directory URI."""

    method: Literal["resources/directory/read"] = "resources/directory/read"
    params: DirectoryReadRequestParams


class _OpenResult(Result):
    """Keeps every key the server sent; fields are `Any` so the client checks them and names the problem."""

    model_config = ConfigDict(extra="allow")


class SkillsListResult(_OpenResult):
    """A `skills/list` answer: `skills` and `nextCursor`, unchecked."""

    skills: Any = None
    next_cursor: Any = None
    ttl_ms: Any = None


class SkillsGetResult(_OpenResult):
    """A `skills/get` answer: `skill`, unchecked."""

    skill: Any = None


class DirectoryReadResult(_OpenResult):
    """A `resources/directory/read` answer: `resources` and `nextCursor`, unchecked."""

    resources: Any = None
    next_cursor: Any = None
