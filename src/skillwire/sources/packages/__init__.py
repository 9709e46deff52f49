"""Skill folders that installed Python distributions declare, followed through pip's installs and removals."""

from __future__ import annotations

from skillwire.core.errors import SpecError
from skillwire.sources.packages.source import PackageSource
from skillwire.sources.port import SkillSource, SourceOptions

__all__ = ["PackageSource", "open_spec"]


def open_spec(target: str, options: SourceOptions) -> SkillSource:
    """`packages:*` (every installed distribution's skills) or `packages:NAME,NAME` (only those)."""
    if target == "*":
        return PackageSource()
    names = [n.strip() for n in target.split(",") if n.strip()]
    if not names:
        raise SpecError("packages: needs distribution names (packages:NAME,NAME) or * for all of them")
    return PackageSource(names)
