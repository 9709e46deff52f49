"""The host's refusals (`HostError` and its kinds) and the values it hands back: catalog lines, loaded skills, problems.

Apart from `Host` so that a caller (a CLI, a model tool) can name them without importing the SDK client `Host` needs.

    try:
        loaded = await host.load_skill("docs:pdf-processing")
    except ApprovalDenied:
        ...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skillwire.core.errors import SkillwireError, VerificationError
from skillwire.core.hosting.approvals import ContentChange
from skillwire.core.hosting.entry import EntryResource, InvalidEntry
from skillwire.core.hosting.policy import display_text
from skillwire.core.hosting.registry import RegisteredSkill, SkillKey


class HostError(SkillwireError):
    """A host-side refusal with a message meant for the user (and the model)."""


class SkillDeclined(HostError):
    """The host will not load this skill (limits, dynamic content, a local skill, ...)."""


class ApprovalDenied(HostError):
    """The user (or the non-interactive default) said no."""


class SkillChanged(HostError, VerificationError):
    """The server now serves different content than the user approved; approval was revoked.

    A verification failure (the content read was not used) whose refresh found a changed entry, so a caller
    catching `VerificationError` catches it too. `uri` is the skill's SKILL.md; `change` says what changed.
    """

    def __init__(self, key: SkillKey, change: ContentChange) -> None:
        super().__init__(
            f"{key.origin}:{key.uri} changed since it was approved ({change}); approve it again to load", uri=key.uri
        )
        self.key = key
        self.change = change


class NotLoaded(HostError):
    """A file read for a skill that is not loaded: reads happen only inside an acting window."""


class ReadFailed(HostError):
    """The server answered a resources/read with an error; nothing was returned to the model."""

    def __init__(self, message: str, *, uri: str) -> None:
        super().__init__(message)
        self.uri = uri


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
