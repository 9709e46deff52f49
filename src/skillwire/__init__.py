"""skillwire: serve and consume Agent Skills over MCP (the `io.modelcontextprotocol/skills` extension).

from skillwire import SkillsExtension
skills = SkillsExtension.from_paths(["skills/"])
skills.install(server)          # a low-level mcp Server

Every public name is imported on first use (PEP 562 `__getattr__`): `import skillwire.uri` or `skillwire --help`
does not load the MCP SDK, Starlette or pydantic; `skillwire.SkillsExtension` does, when it is first touched.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers and IDEs see; `_LAZY` below must name the same modules (a test checks)
    from skillwire.catalog import Catalog, Refusal
    from skillwire.errors import (
        AuthenticationRequired,
        DigestMismatch,
        FrontmatterError,
        FrontmatterMismatch,
        GenerationError,
        InvalidScopePolicy,
        InvalidSkillUri,
        LimitExceeded,
        NameRuleError,
        ResponseTooLarge,
        SizeMismatch,
        SkillError,
        SkillwireError,
        UnlistedResource,
        VerificationError,
    )
    from skillwire.host.limits import ClientLimits
    from skillwire.manifest import MAX_RESOURCES, MAX_TOTAL_BYTES, Skill, SkillFile
    from skillwire.scopes import Caller, CallerResolver, ScopePolicy, Visibility, parse_policy
    from skillwire.server.extension import SkillsExtension
    from skillwire.server.scopes_file import PolicyFile
    from skillwire.server.service import ServeOptions, SkillService
    from skillwire.sources.composite import CompositeSource
    from skillwire.sources.filesystem import FolderSource
    from skillwire.sources.generated import GeneratedSkill, GeneratedSource
    from skillwire.sources.memory import MemorySource
    from skillwire.sources.packages import PackageSource
    from skillwire.sources.port import SkillSource
    from skillwire.wire import EXTENSION_ID

__version__ = "0.1.0"

__all__ = [
    "EXTENSION_ID",
    "MAX_RESOURCES",
    "MAX_TOTAL_BYTES",
    "AuthenticationRequired",
    "Caller",
    "CallerResolver",
    "Catalog",
    "ClientLimits",
    "CompositeSource",
    "DigestMismatch",
    "FolderSource",
    "FrontmatterError",
    "FrontmatterMismatch",
    "GeneratedSkill",
    "GeneratedSource",
    "GenerationError",
    "InvalidScopePolicy",
    "InvalidSkillUri",
    "LimitExceeded",
    "MemorySource",
    "NameRuleError",
    "PackageSource",
    "PolicyFile",
    "Refusal",
    "ResponseTooLarge",
    "ScopePolicy",
    "ServeOptions",
    "SizeMismatch",
    "Skill",
    "SkillError",
    "SkillFile",
    "SkillService",
    "SkillSource",
    "SkillsExtension",
    "SkillwireError",
    "UnlistedResource",
    "VerificationError",
    "Visibility",
    "__version__",
    "parse_policy",
]

_LAZY: dict[str, str] = {
    "Catalog": "skillwire.catalog",
    "Refusal": "skillwire.catalog",
    "AuthenticationRequired": "skillwire.errors",
    "DigestMismatch": "skillwire.errors",
    "FrontmatterError": "skillwire.errors",
    "FrontmatterMismatch": "skillwire.errors",
    "GenerationError": "skillwire.errors",
    "InvalidScopePolicy": "skillwire.errors",
    "InvalidSkillUri": "skillwire.errors",
    "LimitExceeded": "skillwire.errors",
    "NameRuleError": "skillwire.errors",
    "ResponseTooLarge": "skillwire.errors",
    "SizeMismatch": "skillwire.errors",
    "SkillError": "skillwire.errors",
    "SkillwireError": "skillwire.errors",
    "UnlistedResource": "skillwire.errors",
    "VerificationError": "skillwire.errors",
    "ClientLimits": "skillwire.host.limits",
    "MAX_RESOURCES": "skillwire.manifest",
    "MAX_TOTAL_BYTES": "skillwire.manifest",
    "Skill": "skillwire.manifest",
    "SkillFile": "skillwire.manifest",
    "Caller": "skillwire.scopes",
    "CallerResolver": "skillwire.scopes",
    "ScopePolicy": "skillwire.scopes",
    "Visibility": "skillwire.scopes",
    "parse_policy": "skillwire.scopes",
    "SkillsExtension": "skillwire.server.extension",
    "PolicyFile": "skillwire.server.scopes_file",
    "ServeOptions": "skillwire.server.service",
    "SkillService": "skillwire.server.service",
    "CompositeSource": "skillwire.sources.composite",
    "FolderSource": "skillwire.sources.filesystem",
    "GeneratedSkill": "skillwire.sources.generated",
    "GeneratedSource": "skillwire.sources.generated",
    "MemorySource": "skillwire.sources.memory",
    "PackageSource": "skillwire.sources.packages",
    "SkillSource": "skillwire.sources.port",
    "EXTENSION_ID": "skillwire.wire",
}
"""Public name -> the module that defines it, imported when the name is first looked up."""


def __getattr__(name: str) -> object:
    """PEP 562: import a public name's module on first access, then keep the name here like a plain import would."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups find it directly and skip this function
    return value


def __dir__() -> list[str]:
    """The public names count as attributes before they are loaded (for `dir()` and completion)."""
    return sorted({*globals(), *_LAZY})
