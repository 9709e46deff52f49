"""Method names, settings and request shapes of the Skills extension on the wire.

The only core module that touches the SDK's types. Params models accept any
JSON for the fields they carry and the handlers check them, so that a malformed
request gets -32602 with a message naming the field rather than a generic one.

    EXTENSION_ID                      # 'io.modelcontextprotocol/skills'
    SkillsGetParams.model_validate({"uri": "skill://a/SKILL.md"})
"""

from __future__ import annotations

from typing import Any, Final

from mcp_types import RequestParams
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
