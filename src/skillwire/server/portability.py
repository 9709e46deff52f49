"""Portability of a served catalog: each served SKILL.md linted (`core.lint`), and `--strict-portable`'s screen.

A skill can follow every rule the server applies and still be read differently by another host: an `allowed-tools`
list that FastMCP's client rejects (with the whole listing), a `[a: b]` the TypeScript SDK's YAML parser turns into
a mapping, a YAML 1.1 boolean. `PortabilityCheck.warnings` says which; `screen` refuses those skills instead, one
refusal per skill carrying the first warning's rule, message and fix (a skillwire choice, issue 22). Results are kept
by SKILL.md digest, so a rebuild lints only the SKILL.md files that changed.

    check = PortabilityCheck()
    service = SkillService(source, screen=check.screen)      # serve only what every host reads alike
    for warning in check.warnings(catalog): print(warning)
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from skillwire.core.catalog import Catalog, Refusal
from skillwire.core.lint import LintWarning, lint_skill_md

__all__ = ["MAX_SKILL_MD_BYTES", "PortabilityCheck", "Shown"]

MAX_SKILL_MD_BYTES = 8 << 20  # a SKILL.md larger than this is not linted (the frontmatter sits at its start anyway)

Shown = Callable[[Catalog, str], str]
"""How a warning names a skill's SKILL.md: from the catalog and the skill's URI (its URI by default)."""


def _uri(catalog: Catalog, uri: str) -> str:
    return uri


class PortabilityCheck:
    """Lints the SKILL.md of every served skill; keeps each skill's warnings while its SKILL.md digest holds."""

    def __init__(self, shown: Shown = _uri) -> None:
        self.shown = shown
        self._kept: dict[str, tuple[str, tuple[LintWarning, ...]]] = {}  # skill URI -> (SKILL.md digest, warnings)
        self._lock = threading.Lock()  # a rebuild's thread and the start summary may both ask

    def warnings(self, catalog: Catalog) -> list[LintWarning]:
        """Every portability warning of `catalog`'s served skills, skill by skill in URI order."""
        return [w for found in self._by_skill(catalog).values() for w in found]

    def screen(self, catalog: Catalog) -> Catalog:
        """`catalog` without the skills that have a portability warning, each refused by its first warning."""
        refused = {}
        for uri, found in self._by_skill(catalog).items():
            if found:
                first = found[0]
                more = len(found) - 1
                message = first.message + (f" (and {more} more portability warning{'s' * (more > 1)})" if more else "")
                refused[uri] = Refusal(first.path, first.rule, message, first.line, fix=first.fix)
        return catalog.without(refused)

    def _by_skill(self, catalog: Catalog) -> dict[str, tuple[LintWarning, ...]]:
        with self._lock:
            kept = self._kept
            now: dict[str, tuple[str, tuple[LintWarning, ...]]] = {}
            for skill in catalog.skills:
                digest = skill.files[0].digest
                known = kept.get(skill.uri)
                if known is None or known[0] != digest or not digest:  # no digest: produced at each read
                    known = (digest, tuple(self._lint(catalog, skill.uri)))
                now[skill.uri] = known
            self._kept = now  # only the skills served now: a removed skill's warnings are not kept
            return {uri: found for uri, (_, found) in now.items()}

    def _lint(self, catalog: Catalog, uri: str) -> list[LintWarning]:
        served = catalog.file(uri)
        if served is None:
            return []
        # the file may have been swapped for a FIFO or a device since the scan: never wait, never over-read
        raw = served.content.read(MAX_SKILL_MD_BYTES)
        if raw is None or len(raw) > MAX_SKILL_MD_BYTES:
            return []
        return lint_skill_md(raw, path=self.shown(catalog, uri))
