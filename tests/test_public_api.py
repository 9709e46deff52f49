"""skillwire's public API is deliberate: `__all__` is sorted, complete, and changes only on purpose."""

from __future__ import annotations

import skillwire


def test_all_names_exist_once() -> None:
    """skillwire choice: one `__all__` (kept sorted by ruff's RUF022); every name in it exists, once."""
    assert len(set(skillwire.__all__)) == len(skillwire.__all__)
    for name in skillwire.__all__:
        assert hasattr(skillwire, name), name


HOST_HALF = {
    "AmbiguousSkillName",
    "Approval",
    "ApprovalDenied",
    "ApprovalFileError",
    "ApprovalPrompt",
    "ApprovalStore",
    "ApproveLoads",
    "CacheError",
    "CacheLocationRefused",
    "CatalogItem",
    "ContentCache",
    "ContentChange",
    "CrossOriginReadRequest",
    "DenyAll",
    "DirectoryItem",
    "DirectoryReadNotDeclared",
    "EntryResource",
    "ExecutionRequest",
    "ExtensionNotDeclared",
    "Host",
    "HostError",
    "IncompleteListing",
    "InvalidEntry",
    "JsonApprovalStore",
    "LoadedSkill",
    "LocalSkill",
    "MemoryApprovalStore",
    "MemoryCache",
    "NotDeclared",
    "NotLoaded",
    "OutsideSkill",
    "ReadFailed",
    "RequestFailed",
    "ServerError",
    "SkillApprovalDecision",
    "SkillApprovalRequest",
    "SkillCache",
    "SkillChanged",
    "SkillDeclined",
    "SkillEntry",
    "SkillKey",
    "SkillTool",
    "SkillsClient",
    "TerminalPrompt",
    "ToolArgumentError",
    "UnexpectedResponse",
    "UnknownSkill",
    "skill_tools",
}
"""The host half (issue 11): everything a host application needs, none of it from `skillwire.cli`."""


def test_exported_names_are_pinned() -> None:
    """skillwire choice: adding or removing a public name is a visible change to this list."""
    assert set(skillwire.__all__) - HOST_HALF == {
        "EXTENSION_ID",
        "MAX_RESOURCES",
        "MAX_TOTAL_BYTES",
        "AuthenticationRequired",
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
        "InvalidCursor",
        "InvalidSkillUri",
        "LimitExceeded",
        "MemorySource",
        "PackageSource",
        "NameRuleError",
        "Refusal",
        "ResponseTooLarge",
        "ServeOptions",
        "SizeMismatch",
        "Skill",
        "SkillError",
        "SkillFile",
        "SkillService",
        "SkillSource",
        "SkillsExtension",
        "SkillwireError",
        "SourceError",
        "SpecError",
        "TokenFileError",
        "UnlistedResource",
        "VerificationError",
        "WiringError",
        "__version__",
        "Caller",
        "CallerResolver",
        "InvalidScopePolicy",
        "PolicyFile",
        "ScopePolicy",
        "Visibility",
        "parse_policy",
        "CatalogBuilder",
        "FileContent",
        "IncrementalSource",
        "Member",
        "Rebuild",
        "RestorableSource",
        "SourceFile",
        "WatchPace",
        "WatchableSource",
        "build_catalog",
    }


def test_the_host_half_is_exported() -> None:
    """skillwire choice (issue 11): a host application imports `Host` and everything around it from `skillwire`."""
    assert set(skillwire.__all__) >= HOST_HALF


def test_no_public_name_comes_from_the_cli() -> None:
    """skillwire choice (issue 11): nothing a host application needs lives in `skillwire.cli` (an adapter)."""
    assert not [name for name, module in skillwire._LAZY.items() if module.split(".")[:2] == ["skillwire", "cli"]]


def test_a_changed_skill_is_a_verification_error() -> None:
    """skillwire choice (issue 11): `except VerificationError` also catches a failure whose refresh found a change."""
    assert issubclass(skillwire.SkillChanged, skillwire.VerificationError)
    assert issubclass(skillwire.SkillChanged, skillwire.HostError)


def test_approve_loads_grants_nothing_and_allows_nothing_else() -> None:
    """skillwire choice (issue 11): the public unattended prompt approves loading only: no field is granted, no
    code runs, no other server is read, and nothing is remembered."""
    import anyio

    from skillwire.core.hosting.entry import parse_entry

    uri = "skill://x/SKILL.md"
    entry = parse_entry(
        {
            "uri": uri,
            "frontmatter": {"name": "x", "description": "d", "allowed-tools": "Bash"},
            "resources": [{"uri": uri, "digest": "sha256:" + "0" * 64, "size": 1}],
        }
    )
    key = skillwire.SkillKey("docs", uri)
    prompt = skillwire.ApproveLoads()
    request = skillwire.SkillApprovalRequest(key, "docs:x", entry, "new", requested={"allowed-tools": "Bash"})
    decision = anyio.run(prompt.approve_skill, request)
    assert decision == skillwire.SkillApprovalDecision(approved=True, grants=frozenset(), remember=False)
    assert not anyio.run(prompt.approve_execution, skillwire.ExecutionRequest(key, "bash", {}))
    assert not anyio.run(prompt.approve_cross_origin_read, skillwire.CrossOriginReadRequest(key, "other", uri))
