"""Skill folders that installed Python distributions declare, followed through pip's installs and removals."""

from skillwire.sources.packages.source import PackageSource

__all__ = ["PackageSource"]
