"""The values the host hands back: catalog lines, loaded skills, and what is wrong with a server's listing.

Apart from `Host` so that a caller (a CLI, a model tool) can name them without importing the SDK client `Host` needs.
The host's refusals (`HostError` and its kinds) are in `skillwire.core.errors`, with every other exception.

    loaded = await host.load_skill("docs:pdf-processing")      # a LoadedSkill
    for problem in host.problems("docs"):                       # InvalidEntry or IncompleteListing
        ...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skillwire.core.errors import InvalidEntry
from skillwire.core.hosting.entry import EntryResource
from skillwire.core.hosting.policy import display_text
from skillwire.core.hosting.registry import RegisteredSkill, SkillKey


@dataclass(frozen=True, slots=True)
class CatalogItem:
    """One line of the catalog the model and user see: display-safe text, origin always shown."""

    handle: str
    name: str
    description: str
    origin: str
    uri: str
    mcp: bool
    declined: str | None = None

    @classmethod
    def of(cls, skill: RegisteredSkill, *, declined: str | None) -> CatalogItem:
        """The line for a registered skill: its name and description made display-safe (`policy.display_text`)."""
        return cls(
            handle=skill.handle,
            name=display_text(skill.name, limit=64),
            description=display_text(skill.description),
            origin=skill.origin,
            uri=skill.key.uri,
            mcp=skill.is_mcp,
            declined=declined,
        )


@dataclass(frozen=True, slots=True)
class LoadedSkill:
    """A skill loaded into context: origin-tagged instructions, the frontmatter the host acts on, and its files.

    `files` is the held entry's manifest (what `read_skill_file` may read, each with digest and size); it is
    empty when `dynamic` (a generated skill, whose files `Host.list_skill_directory` discovers).
    """

    key: SkillKey
    handle: str
    text: str
    frontmatter: Mapping[str, Any]
    grants: frozenset[str]
    files: tuple[EntryResource, ...]
    dynamic: bool = False


@dataclass(frozen=True, slots=True)
class IncompleteListing:
    """A server's skills/list walk was cut off: the catalog holds only what came before.

    `label` is the host's name for the server (never its self-reported name); `reason` says
    what stopped the walk (a limit of `ClientLimits`, or a cursor the host cannot follow).
    """

    label: str
    reason: str

    def __str__(self) -> str:
        return f"the skill listing of server {self.label!r} is incomplete: {self.reason}"


ServerProblem = InvalidEntry | IncompleteListing
