"""Source specs: the strings `skillwire serve` and `validate` take, and the source each one opens.

    PATH                 a folder of skills, or a skill folder
    KIND:TARGET          a source of a registered kind (`KINDS`): `folder:PATH`, `git:PATH@REF`, `packages:NAME,...`
                         (or `packages:*`: every installed distribution's skills), `mcp:URL` or
                         `mcp:stdio:COMMAND ARGS...` (another MCP server's skills, verified); others add theirs
    PREFIX=SPEC          any of the above, its skills served under PREFIX (`team=skills/`, `a/b=git:repo@main`)

A PREFIX is one or more `/`-separated URI reg-names (`prefix_problem`); a KIND is a registered lowercase word.
Anything else is a folder path, so `./x=y` and `./git:x` name folders. Plain folders without a prefix are one
`FolderSource` (their skill paths are checked against each other as before, and a digest cache covers them);
several sources are served through a `CompositeSource`.

`KINDS` is the one registry: a kind's word and where its opener is, `"MODULE:FUNCTION"` as an entry point names
it. An opener is a function of (TARGET, options) that opens the source, raising `SpecError` with a readable reason
when TARGET is wrong; each kind's package defines its own (`open_spec`), and it is imported only when a spec names
its kind (so `git:` alone loads pygit2). A new kind is one new package and one line here.

    source = open_sources(["skills/", "vendor=folder:third_party/skills"], SourceOptions())
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from skillwire.core.errors import SpecError
from skillwire.sources.composite import CompositeSource, Member, prefix_problem
from skillwire.sources.port import SkillSource, SourceOpener, SourceOptions

__all__ = ["KINDS", "SourceSpec", "open_sources", "opener", "parse_spec"]


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """One parsed spec: the prefix its skills go under, the kind of source, and what the kind is given."""

    text: str
    prefix: tuple[str, ...]
    kind: str
    target: str


KINDS: dict[str, str] = {
    "folder": "skillwire.sources.folder:open_spec",
    "git": "skillwire.sources.git:open_spec",
    "packages": "skillwire.sources.packages:open_spec",
    "mcp": "skillwire.sources.mcp:open_spec",
}
"""Every kind a spec may name, by its word before the colon: where its opener is (`MODULE:FUNCTION`)."""


def opener(kind: str) -> SourceOpener:
    """The opener of a registered `kind`, its module imported now; KeyError for a kind not registered."""
    module, _, name = KINDS[kind].partition(":")
    return cast("SourceOpener", getattr(importlib.import_module(module), name))


def parse_spec(text: str) -> SourceSpec:
    """`text` parsed (see the module docstring); SpecError for a registered kind with nothing after it."""
    prefix: tuple[str, ...] = ()
    rest = text
    head, sep, tail = text.partition("=")
    if sep and head and prefix_problem(head.split("/")) is None:
        prefix, rest = tuple(head.split("/")), tail
    kind, sep, target = rest.partition(":")
    if sep and kind in KINDS:
        if not target:
            raise SpecError(f"{text!r}: {kind}: needs something after the colon")
        return SourceSpec(text, prefix, kind, target)
    if not rest:
        raise SpecError(f"{text!r}: nothing after '='")
    return SourceSpec(text, prefix, "folder", rest)


def open_sources(texts: Sequence[str], options: SourceOptions, *, extra: Sequence[Member] = ()) -> SkillSource:
    """The source serving every spec in `texts` (and the `extra` members, e.g. from `--packages`): a single
    source as it is, several through a `CompositeSource`. SpecError for a spec that cannot be opened."""
    specs = [parse_spec(t) for t in texts]
    members: list[Member] = []
    plain = [s.target for s in specs if s.kind == "folder" and not s.prefix]
    if plain:
        from skillwire.sources.folder.source import FolderSource  # its package's opener imports this module

        folders = FolderSource(
            plain,
            digest_cache=options.digest_cache,
            progress=options.progress,
            project_ignores=options.project_ignores,
        )
        members.append(Member(folders))
    for spec in specs:
        if spec.kind == "folder" and not spec.prefix:
            continue
        members.append(Member(opener(spec.kind)(spec.target, options), spec.prefix))
    members.extend(extra)
    if not members:
        raise SpecError("no source given")
    if len(members) == 1 and not members[0].prefix:
        return members[0].source
    return CompositeSource(members)
