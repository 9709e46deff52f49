"""A catalog as one caller sees it: only the skills their `Visibility` allows, and nothing that hints at the rest.

A skill outside the caller's scope is absent, exactly as if the server did not
serve it: lookups are set lookups on the visible URIs (a hidden URI costs what an
unknown one costs and builds nothing), listings and their cursors hold visible
keys only, and directories are those of the visible skills.

A file is visible when a visible skill lists it. Nested Skills: "From the enclosing
skill's perspective, a nested skill's directory and files are ordinary supporting
files", so a caller who sees an enclosing skill reads the files of a nested skill it
cannot see as that skill's supporting files (the nested SKILL.md as plain markdown),
while the nested skill itself is neither listed nor answered by skills/get.

    view = ScopedCatalog(catalog, visibility)
    view.skills_page(None, 100)
"""

from __future__ import annotations

from collections.abc import Sequence

from skillwire.core.catalog import (
    BrowsableCatalog,
    Catalog,
    DirectoryChild,
    Page,
    Refusal,
    ServedFile,
    directory_tree,
    paginate,
)
from skillwire.core.manifest import Skill
from skillwire.core.scopes import Visibility


class ScopedCatalog(BrowsableCatalog):
    """The part of an immutable `Catalog` one `Visibility` allows; derived lazily, never changed."""

    def __init__(self, catalog: Catalog, visibility: Visibility) -> None:
        self.catalog = catalog
        self.visibility = visibility
        self.generation = catalog.generation
        self._uris: list[str] | None = None
        self._visible: frozenset[str] = frozenset()
        self._file_uris: list[str] | None = None
        self._trees: dict[str, dict[str, list[DirectoryChild]]] = {}

    def _visible_uris(self) -> list[str]:
        uris = self._uris
        if uris is None:
            allows = self.visibility.allows_uri
            uris = [u for u in self.catalog.skill_uris if allows(u)]
            self._visible = frozenset(uris)
            self._uris = uris
        return uris

    def _visible_set(self) -> frozenset[str]:
        self._visible_uris()
        return self._visible

    # -- skills ----------------------------------------------------------------------------------------------------

    @property
    def refusals(self) -> tuple[Refusal, ...]:
        """Nothing: a refusal names a path on disk, which may belong to a skill this caller cannot see."""
        return ()

    def __len__(self) -> int:
        return len(self._visible_uris())

    @property
    def skill_uris(self) -> Sequence[str]:
        return self._visible_uris()

    @property
    def skills(self) -> tuple[Skill, ...]:
        return tuple(s for s in (self.catalog.skill(u) for u in self._visible_uris()) if s is not None)

    def skill(self, uri: str) -> Skill | None:
        return self.catalog.skill(uri) if uri in self._visible_set() else None

    def skills_enclosing(self, uri: str) -> tuple[Skill, ...]:
        return self.catalog.skills_enclosing(uri, self._visible_set())

    def skills_page(self, cursor: str | None, limit: int) -> Page[Skill]:
        keys, next_cursor = paginate(self._visible_uris(), cursor, limit, scope="skills")
        return Page(tuple(s for s in (self.catalog.skill(k) for k in keys) if s is not None), next_cursor)

    # -- files -----------------------------------------------------------------------------------------------------

    def file(self, uri: str) -> ServedFile | None:
        return self.catalog.file(uri, self._visible_set())

    @property
    def file_count(self) -> int:
        return len(self._all_file_uris())

    # -- directories -----------------------------------------------------------------------------------------------

    def _tree_of(self, uri: str) -> dict[str, list[DirectoryChild]] | None:
        """The directories of the outermost visible skill enclosing `uri` and the visible skills nested in it."""
        visible = self._visible_set()
        enclosing = self.catalog.skill_uris_enclosing(uri, visible)
        if not enclosing:
            return None
        outer = enclosing[-1]
        tree = self._trees.get(outer)
        if tree is None:
            root = outer[: -len("/SKILL.md")]
            skills = (self.catalog.skill(u) for u in self.catalog.skill_uris_under(root) if u in visible)
            tree = self._trees[outer] = directory_tree(s for s in skills if s is not None)
        return tree
