"""skillwire: serve and consume Agent Skills over MCP (the `io.modelcontextprotocol/skills` extension).

from skillwire import SkillsExtension
skills = SkillsExtension.from_paths(["skills/"])
skills.install(server)          # a low-level mcp Server
"""

from skillwire.catalog import Catalog, Refusal
from skillwire.errors import (
    AuthenticationRequired,
    DigestMismatch,
    FrontmatterError,
    FrontmatterMismatch,
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
from skillwire.sources.filesystem import FolderSource
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
    "DigestMismatch",
    "FolderSource",
    "FrontmatterError",
    "FrontmatterMismatch",
    "InvalidScopePolicy",
    "InvalidSkillUri",
    "LimitExceeded",
    "NameRuleError",
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
    "SkillsExtension",
    "SkillwireError",
    "UnlistedResource",
    "VerificationError",
    "Visibility",
    "__version__",
    "parse_policy",
]
