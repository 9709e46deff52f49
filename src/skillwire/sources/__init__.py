"""Where skills come from. Each source produces an immutable `Catalog` snapshot.

Everything a source author needs is importable from here, and nothing deeper is needed: the port (`SkillSource`
and the optional abilities), the shared catalog builder (`SourceFile`, `build_catalog`, `CatalogBuilder`, ...),
`CompositeSource` and its `Member`, the spec registry (`KINDS`) and every built-in kind. `docs/new-source.md` writes
a complete new kind with these names only.

    from skillwire.sources import Catalog, SourceFile, build_catalog

    def scan(self, generation: int = 0) -> Catalog:
        files = [SourceFile.of_bytes(path, data) for path, data in self.read_everything()]
        return build_catalog(files, label=self.label, root_name="skills", generation=generation)

Every name is imported on first use (PEP 562 `__getattr__`), so `import skillwire.sources` (which any of its
modules runs first) loads neither pygit2 nor watchfiles; `skillwire.sources.GitSource` loads pygit2 when touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillwire.core.lazy import lazy_exports

if TYPE_CHECKING:  # what type checkers and IDEs see; `_LAZY` below must name the same modules (a test checks)
    from skillwire.core.catalog import Catalog, FileContent, Refusal
    from skillwire.core.errors import SpecError
    from skillwire.core.manifest import Skill, SkillFile
    from skillwire.core.skill_rules import FileFacts
    from skillwire.sources.building import (
        CatalogBuilder,
        MemoryFile,
        SkillTree,
        SourceFile,
        build_catalog,
        build_skill_tree,
        skill_trees,
    )
    from skillwire.sources.composite import CompositeSource, Member
    from skillwire.sources.folder.source import FolderSource
    from skillwire.sources.generated.source import GeneratedSkill, GeneratedSource
    from skillwire.sources.git.source import GitSource
    from skillwire.sources.memory.source import MemorySource
    from skillwire.sources.packages.source import PackageSource
    from skillwire.sources.port import (
        DEFAULT_PACE,
        IncrementalSource,
        Rebuild,
        RestorableSource,
        SkillSource,
        SourceOpener,
        SourceOptions,
        WatchableSource,
        WatchPace,
    )
    from skillwire.sources.spec import KINDS, open_sources, parse_spec

__all__ = [
    "DEFAULT_PACE",
    "KINDS",
    "Catalog",
    "CatalogBuilder",
    "CompositeSource",
    "FileContent",
    "FileFacts",
    "FolderSource",
    "GeneratedSkill",
    "GeneratedSource",
    "GitSource",
    "IncrementalSource",
    "Member",
    "MemoryFile",
    "MemorySource",
    "PackageSource",
    "Rebuild",
    "Refusal",
    "RestorableSource",
    "Skill",
    "SkillFile",
    "SkillSource",
    "SkillTree",
    "SourceFile",
    "SourceOpener",
    "SourceOptions",
    "SpecError",
    "WatchPace",
    "WatchableSource",
    "build_catalog",
    "build_skill_tree",
    "open_sources",
    "parse_spec",
    "skill_trees",
]

_LAZY: dict[str, str] = {
    "Catalog": "skillwire.core.catalog",
    "FileContent": "skillwire.core.catalog",
    "Refusal": "skillwire.core.catalog",
    "Skill": "skillwire.core.manifest",
    "SkillFile": "skillwire.core.manifest",
    "FileFacts": "skillwire.core.skill_rules",
    "CatalogBuilder": "skillwire.sources.building",
    "MemoryFile": "skillwire.sources.building",
    "SkillTree": "skillwire.sources.building",
    "SourceFile": "skillwire.sources.building",
    "build_catalog": "skillwire.sources.building",
    "build_skill_tree": "skillwire.sources.building",
    "skill_trees": "skillwire.sources.building",
    "CompositeSource": "skillwire.sources.composite",
    "Member": "skillwire.sources.composite",
    "FolderSource": "skillwire.sources.folder.source",
    "GeneratedSkill": "skillwire.sources.generated.source",
    "GeneratedSource": "skillwire.sources.generated.source",
    "GitSource": "skillwire.sources.git.source",
    "MemorySource": "skillwire.sources.memory.source",
    "PackageSource": "skillwire.sources.packages.source",
    "DEFAULT_PACE": "skillwire.sources.port",
    "IncrementalSource": "skillwire.sources.port",
    "Rebuild": "skillwire.sources.port",
    "RestorableSource": "skillwire.sources.port",
    "SkillSource": "skillwire.sources.port",
    "WatchableSource": "skillwire.sources.port",
    "WatchPace": "skillwire.sources.port",
    "KINDS": "skillwire.sources.spec",
    "SourceOpener": "skillwire.sources.port",
    "SourceOptions": "skillwire.sources.port",
    "SpecError": "skillwire.core.errors",
    "open_sources": "skillwire.sources.spec",
    "parse_spec": "skillwire.sources.spec",
}
"""Public name -> the module that defines it, imported when the name is first looked up."""


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
