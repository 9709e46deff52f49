"""Skills kept in folders on disk: walked, hashed on every core, followed as they change, restored from a cache."""

from __future__ import annotations

from skillwire.core.errors import SpecError
from skillwire.sources.folder.source import FolderSource
from skillwire.sources.port import SkillSource, SourceOptions

__all__ = ["FolderSource", "open_spec"]


def open_spec(target: str, options: SourceOptions) -> SkillSource:
    """`folder:PATH`: the folder at PATH (a folder of skills, or a skill folder)."""
    if not target:
        raise SpecError("folder: needs a path")
    return FolderSource([target], progress=options.progress, project_ignores=options.project_ignores)
