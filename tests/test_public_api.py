"""skillwire's public API is deliberate: `__all__` is sorted, complete, and changes only on purpose."""

from __future__ import annotations

import skillwire


def test_all_names_exist_once() -> None:
    """skillwire choice: one `__all__` (kept sorted by ruff's RUF022); every name in it exists, once."""
    assert len(set(skillwire.__all__)) == len(skillwire.__all__)
    for name in skillwire.__all__:
        assert hasattr(skillwire, name), name


def test_exported_names_are_pinned() -> None:
    """skillwire choice: adding or removing a public name is a visible change to this list."""
    assert set(skillwire.__all__) == {
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
        "UnlistedResource",
        "VerificationError",
        "__version__",
        "Caller",
        "CallerResolver",
        "InvalidScopePolicy",
        "PolicyFile",
        "ScopePolicy",
        "Visibility",
        "parse_policy",
    }
