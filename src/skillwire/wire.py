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

INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603


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
