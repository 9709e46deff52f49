"""skillwire: serve and consume Agent Skills over MCP (the `io.modelcontextprotocol/skills` extension).

Both halves import from here, and only from here: the server (`SkillsExtension`, `SkillService`, `FolderSource`)
and the host (`Host`, its prompts, approval stores, cache, errors and model tools).

    skills = SkillsExtension.from_paths(["skills/"])
    skills.install(server)          # a low-level mcp Server

    async with Host(prompt=TerminalPrompt(), approvals=JsonApprovalStore(path)) as host:
        await host.add_server("docs", "http://127.0.0.1:8000/mcp")

Every public name is imported on first use (PEP 562 `__getattr__`): `import skillwire.uri` or `skillwire --help`
does not load the MCP SDK, Starlette or pydantic; `skillwire.SkillsExtension` does, when it is first touched.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers and IDEs see; `_LAZY` below must name the same modules (a test checks)
    from skillwire.cache.store import SkillCache
    from skillwire.catalog import Catalog, Refusal
    from skillwire.client.session import SkillsClient
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
    from skillwire.host.approvals import (
        Approval,
        ApprovalFileError,
        ApprovalPrompt,
        ApprovalStore,
        ApproveLoads,
        ContentChange,
        CrossOriginReadRequest,
        DenyAll,
        ExecutionRequest,
        JsonApprovalStore,
        MemoryApprovalStore,
        SkillApprovalDecision,
        SkillApprovalRequest,
    )
    from skillwire.host.entry import EntryResource, InvalidEntry, SkillEntry
    from skillwire.host.host import Host
    from skillwire.host.limits import ClientLimits
    from skillwire.host.prompt import TerminalPrompt
    from skillwire.host.registry import AmbiguousSkillName, LocalSkill, SkillKey, UnknownSkill
    from skillwire.host.results import (
        ApprovalDenied,
        CatalogItem,
        HostError,
        IncompleteListing,
        LoadedSkill,
        NotLoaded,
        ReadFailed,
        SkillChanged,
        SkillDeclined,
    )
    from skillwire.host.tools import SkillTool, skill_tools
    from skillwire.host.window import DirectoryItem, OutsideSkill
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
    "AmbiguousSkillName",
    "Approval",
    "ApprovalDenied",
    "ApprovalFileError",
    "ApprovalPrompt",
    "ApprovalStore",
    "ApproveLoads",
    "AuthenticationRequired",
    "Caller",
    "CallerResolver",
    "Catalog",
    "CatalogItem",
    "ClientLimits",
    "CompositeSource",
    "ContentChange",
    "CrossOriginReadRequest",
    "DenyAll",
    "DigestMismatch",
    "DirectoryItem",
    "EntryResource",
    "ExecutionRequest",
    "FolderSource",
    "FrontmatterError",
    "FrontmatterMismatch",
    "GeneratedSkill",
    "GeneratedSource",
    "GenerationError",
    "Host",
    "HostError",
    "IncompleteListing",
    "InvalidEntry",
    "InvalidScopePolicy",
    "InvalidSkillUri",
    "JsonApprovalStore",
    "LimitExceeded",
    "LoadedSkill",
    "LocalSkill",
    "MemoryApprovalStore",
    "MemorySource",
    "NameRuleError",
    "NotLoaded",
    "OutsideSkill",
    "PackageSource",
    "PolicyFile",
    "ReadFailed",
    "Refusal",
    "ResponseTooLarge",
    "ScopePolicy",
    "ServeOptions",
    "SizeMismatch",
    "Skill",
    "SkillApprovalDecision",
    "SkillApprovalRequest",
    "SkillCache",
    "SkillChanged",
    "SkillDeclined",
    "SkillEntry",
    "SkillError",
    "SkillFile",
    "SkillKey",
    "SkillService",
    "SkillSource",
    "SkillTool",
    "SkillsClient",
    "SkillsExtension",
    "SkillwireError",
    "TerminalPrompt",
    "UnknownSkill",
    "UnlistedResource",
    "VerificationError",
    "Visibility",
    "__version__",
    "parse_policy",
    "skill_tools",
]

_LAZY: dict[str, str] = {
    "SkillCache": "skillwire.cache.store",
    "Catalog": "skillwire.catalog",
    "Refusal": "skillwire.catalog",
    "SkillsClient": "skillwire.client.session",
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
    "Approval": "skillwire.host.approvals",
    "ApprovalFileError": "skillwire.host.approvals",
    "ApprovalPrompt": "skillwire.host.approvals",
    "ApprovalStore": "skillwire.host.approvals",
    "ApproveLoads": "skillwire.host.approvals",
    "ContentChange": "skillwire.host.approvals",
    "CrossOriginReadRequest": "skillwire.host.approvals",
    "DenyAll": "skillwire.host.approvals",
    "ExecutionRequest": "skillwire.host.approvals",
    "JsonApprovalStore": "skillwire.host.approvals",
    "MemoryApprovalStore": "skillwire.host.approvals",
    "SkillApprovalDecision": "skillwire.host.approvals",
    "SkillApprovalRequest": "skillwire.host.approvals",
    "EntryResource": "skillwire.host.entry",
    "InvalidEntry": "skillwire.host.entry",
    "SkillEntry": "skillwire.host.entry",
    "Host": "skillwire.host.host",
    "ClientLimits": "skillwire.host.limits",
    "TerminalPrompt": "skillwire.host.prompt",
    "AmbiguousSkillName": "skillwire.host.registry",
    "LocalSkill": "skillwire.host.registry",
    "SkillKey": "skillwire.host.registry",
    "UnknownSkill": "skillwire.host.registry",
    "ApprovalDenied": "skillwire.host.results",
    "CatalogItem": "skillwire.host.results",
    "HostError": "skillwire.host.results",
    "IncompleteListing": "skillwire.host.results",
    "LoadedSkill": "skillwire.host.results",
    "NotLoaded": "skillwire.host.results",
    "ReadFailed": "skillwire.host.results",
    "SkillChanged": "skillwire.host.results",
    "SkillDeclined": "skillwire.host.results",
    "SkillTool": "skillwire.host.tools",
    "skill_tools": "skillwire.host.tools",
    "DirectoryItem": "skillwire.host.window",
    "OutsideSkill": "skillwire.host.window",
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
