"""skillwire: serve and consume Agent Skills over MCP (the `io.modelcontextprotocol/skills` extension).

Both halves import from here, and only from here: the server (`SkillsExtension`, `SkillService`, `FolderSource`)
and the host (`Host`, its prompts, approval stores, caches, errors and model tools).

    skills = SkillsExtension.from_paths(["skills/"])
    skills.install(server)          # an MCPServer or a low-level mcp Server: everything, in one call

    async with Host(prompt=TerminalPrompt(), approvals=JsonApprovalStore(path)) as host:
        await host.add_server("docs", "http://127.0.0.1:8000/mcp")

Every public name is imported on first use (PEP 562 `__getattr__`): `import skillwire.core.uri` or `skillwire --help`
does not load the MCP SDK, Starlette or pydantic; `skillwire.SkillsExtension` does, when it is first touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillwire.core.lazy import lazy_exports

if TYPE_CHECKING:  # what type checkers and IDEs see; `_LAZY` below must name the same modules (a test checks)
    from skillwire.cache.memory import MemoryCache
    from skillwire.cache.port import ContentCache
    from skillwire.cache.store import SkillCache
    from skillwire.client.session import SkillsClient
    from skillwire.core.catalog import Catalog, FileContent, Refusal
    from skillwire.core.errors import (
        AmbiguousSkillName,
        ApprovalDenied,
        ApprovalFileError,
        AuthenticationRequired,
        CacheError,
        CacheLocationRefused,
        DigestMismatch,
        DirectoryReadNotDeclared,
        ExtensionNotDeclared,
        FrontmatterError,
        FrontmatterMismatch,
        GenerationError,
        HostError,
        InvalidCursor,
        InvalidEntry,
        InvalidScopePolicy,
        InvalidSkillUri,
        LimitExceeded,
        NameRuleError,
        NotDeclared,
        NotLoaded,
        OutsideSkill,
        ReadFailed,
        RequestFailed,
        ResponseTooLarge,
        ServerError,
        SizeMismatch,
        SkillChanged,
        SkillDeclined,
        SkillError,
        SkillwireError,
        SourceError,
        SpecError,
        TokenFileError,
        ToolArgumentError,
        UnexpectedResponse,
        UnknownSkill,
        UnlistedResource,
        VerificationError,
        WiringError,
    )
    from skillwire.core.hosting.approvals import (
        Approval,
        ApprovalPrompt,
        ApprovalStore,
        ApproveLoads,
        ContentChange,
        CrossOriginReadRequest,
        DenyAll,
        ExecutionRequest,
        MemoryApprovalStore,
        SkillApprovalDecision,
        SkillApprovalRequest,
    )
    from skillwire.core.hosting.entry import EntryResource, SkillEntry
    from skillwire.core.hosting.limits import ClientLimits
    from skillwire.core.hosting.registry import LocalSkill, SkillKey
    from skillwire.core.hosting.results import CatalogItem, IncompleteListing, LoadedSkill
    from skillwire.core.hosting.window import DirectoryItem
    from skillwire.core.manifest import MAX_RESOURCES, MAX_TOTAL_BYTES, Skill, SkillFile
    from skillwire.core.scopes import Caller, CallerResolver, ScopePolicy, Visibility, parse_policy
    from skillwire.core.wire import EXTENSION_ID
    from skillwire.host.approval_store import JsonApprovalStore
    from skillwire.host.host import Host
    from skillwire.host.prompt import TerminalPrompt
    from skillwire.host.tools import SkillTool, skill_tools
    from skillwire.server.extension import SkillsExtension
    from skillwire.server.skill_service import ServeOptions, SkillService
    from skillwire.service.scopes_file import PolicyFile
    from skillwire.sources.building import CatalogBuilder, SourceFile, build_catalog
    from skillwire.sources.composite import CompositeSource, Member
    from skillwire.sources.folder.source import FolderSource
    from skillwire.sources.generated.source import GeneratedSkill, GeneratedSource
    from skillwire.sources.memory.source import MemorySource
    from skillwire.sources.packages.source import PackageSource
    from skillwire.sources.port import (
        IncrementalSource,
        Rebuild,
        RestorableSource,
        SkillSource,
        WatchableSource,
        WatchPace,
    )

from skillwire.core.version import __version__

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
    "CacheError",
    "CacheLocationRefused",
    "Caller",
    "CallerResolver",
    "Catalog",
    "CatalogBuilder",
    "CatalogItem",
    "ClientLimits",
    "CompositeSource",
    "ContentCache",
    "ContentChange",
    "CrossOriginReadRequest",
    "DenyAll",
    "DigestMismatch",
    "DirectoryItem",
    "DirectoryReadNotDeclared",
    "EntryResource",
    "ExecutionRequest",
    "ExtensionNotDeclared",
    "FileContent",
    "FolderSource",
    "FrontmatterError",
    "FrontmatterMismatch",
    "GeneratedSkill",
    "GeneratedSource",
    "GenerationError",
    "Host",
    "HostError",
    "IncompleteListing",
    "IncrementalSource",
    "InvalidCursor",
    "InvalidEntry",
    "InvalidScopePolicy",
    "InvalidSkillUri",
    "JsonApprovalStore",
    "LimitExceeded",
    "LoadedSkill",
    "LocalSkill",
    "Member",
    "MemoryApprovalStore",
    "MemoryCache",
    "MemorySource",
    "NameRuleError",
    "NotDeclared",
    "NotLoaded",
    "OutsideSkill",
    "PackageSource",
    "PolicyFile",
    "ReadFailed",
    "Rebuild",
    "Refusal",
    "RequestFailed",
    "ResponseTooLarge",
    "RestorableSource",
    "ScopePolicy",
    "ServeOptions",
    "ServerError",
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
    "SourceError",
    "SourceFile",
    "SpecError",
    "TerminalPrompt",
    "TokenFileError",
    "ToolArgumentError",
    "UnexpectedResponse",
    "UnknownSkill",
    "UnlistedResource",
    "VerificationError",
    "Visibility",
    "WatchPace",
    "WatchableSource",
    "WiringError",
    "__version__",
    "build_catalog",
    "parse_policy",
    "skill_tools",
]

_LAZY: dict[str, str] = {
    "MemoryCache": "skillwire.cache.memory",
    "ContentCache": "skillwire.cache.port",
    "SkillCache": "skillwire.cache.store",
    "Catalog": "skillwire.core.catalog",
    "Refusal": "skillwire.core.catalog",
    "FileContent": "skillwire.core.catalog",
    "SkillsClient": "skillwire.client.session",
    "AmbiguousSkillName": "skillwire.core.errors",
    "ApprovalDenied": "skillwire.core.errors",
    "ApprovalFileError": "skillwire.core.errors",
    "AuthenticationRequired": "skillwire.core.errors",
    "CacheError": "skillwire.core.errors",
    "CacheLocationRefused": "skillwire.core.errors",
    "DigestMismatch": "skillwire.core.errors",
    "DirectoryReadNotDeclared": "skillwire.core.errors",
    "ExtensionNotDeclared": "skillwire.core.errors",
    "FrontmatterError": "skillwire.core.errors",
    "FrontmatterMismatch": "skillwire.core.errors",
    "GenerationError": "skillwire.core.errors",
    "HostError": "skillwire.core.errors",
    "InvalidCursor": "skillwire.core.errors",
    "InvalidEntry": "skillwire.core.errors",
    "InvalidScopePolicy": "skillwire.core.errors",
    "InvalidSkillUri": "skillwire.core.errors",
    "LimitExceeded": "skillwire.core.errors",
    "NameRuleError": "skillwire.core.errors",
    "NotDeclared": "skillwire.core.errors",
    "NotLoaded": "skillwire.core.errors",
    "OutsideSkill": "skillwire.core.errors",
    "ReadFailed": "skillwire.core.errors",
    "RequestFailed": "skillwire.core.errors",
    "ResponseTooLarge": "skillwire.core.errors",
    "ServerError": "skillwire.core.errors",
    "SizeMismatch": "skillwire.core.errors",
    "SkillChanged": "skillwire.core.errors",
    "SkillDeclined": "skillwire.core.errors",
    "SkillError": "skillwire.core.errors",
    "SkillwireError": "skillwire.core.errors",
    "SourceError": "skillwire.core.errors",
    "SpecError": "skillwire.core.errors",
    "TokenFileError": "skillwire.core.errors",
    "ToolArgumentError": "skillwire.core.errors",
    "UnexpectedResponse": "skillwire.core.errors",
    "UnknownSkill": "skillwire.core.errors",
    "UnlistedResource": "skillwire.core.errors",
    "VerificationError": "skillwire.core.errors",
    "WiringError": "skillwire.core.errors",
    "Approval": "skillwire.core.hosting.approvals",
    "ApprovalPrompt": "skillwire.core.hosting.approvals",
    "ApprovalStore": "skillwire.core.hosting.approvals",
    "ApproveLoads": "skillwire.core.hosting.approvals",
    "ContentChange": "skillwire.core.hosting.approvals",
    "CrossOriginReadRequest": "skillwire.core.hosting.approvals",
    "DenyAll": "skillwire.core.hosting.approvals",
    "ExecutionRequest": "skillwire.core.hosting.approvals",
    "JsonApprovalStore": "skillwire.host.approval_store",
    "MemoryApprovalStore": "skillwire.core.hosting.approvals",
    "SkillApprovalDecision": "skillwire.core.hosting.approvals",
    "SkillApprovalRequest": "skillwire.core.hosting.approvals",
    "EntryResource": "skillwire.core.hosting.entry",
    "SkillEntry": "skillwire.core.hosting.entry",
    "Host": "skillwire.host.host",
    "ClientLimits": "skillwire.core.hosting.limits",
    "TerminalPrompt": "skillwire.host.prompt",
    "LocalSkill": "skillwire.core.hosting.registry",
    "SkillKey": "skillwire.core.hosting.registry",
    "CatalogItem": "skillwire.core.hosting.results",
    "IncompleteListing": "skillwire.core.hosting.results",
    "LoadedSkill": "skillwire.core.hosting.results",
    "SkillTool": "skillwire.host.tools",
    "skill_tools": "skillwire.host.tools",
    "DirectoryItem": "skillwire.core.hosting.window",
    "MAX_RESOURCES": "skillwire.core.manifest",
    "MAX_TOTAL_BYTES": "skillwire.core.manifest",
    "Skill": "skillwire.core.manifest",
    "SkillFile": "skillwire.core.manifest",
    "Caller": "skillwire.core.scopes",
    "CallerResolver": "skillwire.core.scopes",
    "ScopePolicy": "skillwire.core.scopes",
    "Visibility": "skillwire.core.scopes",
    "parse_policy": "skillwire.core.scopes",
    "SkillsExtension": "skillwire.server.extension",
    "PolicyFile": "skillwire.service.scopes_file",
    "ServeOptions": "skillwire.server.skill_service",
    "SkillService": "skillwire.server.skill_service",
    "CatalogBuilder": "skillwire.sources.building",
    "SourceFile": "skillwire.sources.building",
    "build_catalog": "skillwire.sources.building",
    "CompositeSource": "skillwire.sources.composite",
    "Member": "skillwire.sources.composite",
    "FolderSource": "skillwire.sources.folder.source",
    "GeneratedSkill": "skillwire.sources.generated.source",
    "GeneratedSource": "skillwire.sources.generated.source",
    "MemorySource": "skillwire.sources.memory.source",
    "PackageSource": "skillwire.sources.packages.source",
    "SkillSource": "skillwire.sources.port",
    "IncrementalSource": "skillwire.sources.port",
    "Rebuild": "skillwire.sources.port",
    "RestorableSource": "skillwire.sources.port",
    "WatchableSource": "skillwire.sources.port",
    "WatchPace": "skillwire.sources.port",
    "EXTENSION_ID": "skillwire.core.wire",
}
"""Public name -> the module that defines it, imported when the name is first looked up."""


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
