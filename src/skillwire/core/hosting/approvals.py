"""Content-bound approvals: what the user approved is exactly the {uri, digest} set they saw.

Security Considerations, Content-bound approval: a persisted approval "MUST be
bound to the entry's resources set (every uri and digest) observed at the moment
of approval"; a later entry with a different set means the approval is revoked
and the user is asked again. "dynamic" skills cannot be content-bound: a
persisted approval never covers them (skillwire keeps their approvals for the
session only). Nested Skills: approving a skill never approves a skill nested in
it (approvals are per (origin, uri), so they cannot).

The rules (`check`, `diff_content`, `requested_grants`) are pure. The two pluggable parts are Protocols:
`ApprovalPrompt` asks the user (`DenyAll`, the default; `ApproveLoads`, unattended: approves loading, grants
nothing; `skillwire.host.prompt.TerminalPrompt`), and `ApprovalStore` remembers (`MemoryApprovalStore`; the
adapter `skillwire.host.approval_store.JsonApprovalStore`, a JSON file: durable approvals only, since a persisted
approval "MUST NOT [be treated] as covering whatever content the server currently serves" for a dynamic skill).

    status = check(store.get(key), entry)     # Approved / NeedsApproval(reason, change)
    decision = await prompt.approve_skill(SkillApprovalRequest(...))
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from skillwire.core.hosting.entry import SkillEntry
from skillwire.core.hosting.registry import SkillKey

#: The frontmatter fields a host acts on for an MCP-served skill without asking: the Agent Skills specification's
#: descriptive fields (`name`, `description`, `license`, `compatibility`, `metadata`), which say what a skill is and
#: grant nothing. Security Considerations: hosts "MUST NOT honor frontmatter fields that widen the model's tool or
#: filesystem permissions" and "MUST ignore or approval-gate" declarative fields such as hooks and scripts. A host
#: cannot know what a field it has never heard of does, so every other field (the Agent Skills `allowed-tools`,
#: `hooks`, `scripts`, `commands`, another agent's or a future revision's field) is an allow-list miss: shown to the
#: user as a request, and acted on only where they grant it for that skill.
SAFE_FIELDS: frozenset[str] = frozenset({"name", "description", "license", "compatibility", "metadata"})


@dataclass(frozen=True, slots=True)
class Approval:
    """The user's yes for one skill: bound to its content set, with the permission grants they allowed."""

    key: SkillKey
    content: frozenset[tuple[str, str]]
    grants: frozenset[str] = frozenset()
    session_only: bool = False


@dataclass(frozen=True, slots=True)
class ContentChange:
    """How an entry's {uri, digest} set differs from the approved one."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    modified: tuple[str, ...]

    def __str__(self) -> str:
        parts = []
        for label, uris in (("added", self.added), ("removed", self.removed), ("changed", self.modified)):
            if uris:
                parts.append(f"{label}: {', '.join(uris)}")
        return "; ".join(parts) or "no change"


def diff_content(old: frozenset[tuple[str, str]], new: frozenset[tuple[str, str]]) -> ContentChange:
    old_map, new_map = dict(old), dict(new)
    return ContentChange(
        added=tuple(sorted(set(new_map) - set(old_map))),
        removed=tuple(sorted(set(old_map) - set(new_map))),
        modified=tuple(sorted(u for u in set(old_map) & set(new_map) if old_map[u] != new_map[u])),
    )


Reason = Literal["new", "changed", "dynamic"]


@dataclass(frozen=True, slots=True)
class Approved:
    approval: Approval


@dataclass(frozen=True, slots=True)
class NeedsApproval:
    """Why the user must be asked: never approved, content changed since (with what), or dynamic."""

    reason: Reason
    change: ContentChange | None = None


def check(approval: Approval | None, entry: SkillEntry) -> Approved | NeedsApproval:
    """Does `approval` still cover `entry`? A different content set revokes it."""
    if entry.is_dynamic:
        if approval is not None and approval.session_only and not approval.content:
            return Approved(approval)
        return NeedsApproval("dynamic")
    if approval is None:
        return NeedsApproval("new")
    if approval.content != entry.content_set:
        return NeedsApproval("changed", diff_content(approval.content, entry.content_set))
    return Approved(approval)


def requested_grants(frontmatter: Mapping[str, object]) -> dict[str, object]:
    """The fields of an entry's frontmatter outside `SAFE_FIELDS`: each takes effect only if the user grants it."""
    return {k: v for k, v in frontmatter.items() if k not in SAFE_FIELDS}


@dataclass(frozen=True, slots=True)
class SkillApprovalRequest:
    """What the user is asked to approve before a skill is loaded.

    `requested` holds the frontmatter fields outside `SAFE_FIELDS`, each to grant or not. `read_skill_md`, when
    set, fetches SKILL.md, verifies it against the entry and returns its text, for a user who wants to read it
    before deciding (Security Considerations: hosts "SHOULD let users inspect a skill's content before it is
    loaded"). It fetches only when called (Lazy Retrieval), at most once per load; the load then uses those
    bytes. The text is the server's: show it through `skillwire.core.display.terminal_safe` or the like.
    """

    key: SkillKey
    handle: str
    entry: SkillEntry
    reason: Reason
    change: ContentChange | None = None
    requested: Mapping[str, object] = field(default_factory=dict)
    read_skill_md: Callable[[], Awaitable[str]] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class SkillApprovalDecision:
    approved: bool
    grants: frozenset[str] = frozenset()
    remember: bool = True


@dataclass(frozen=True, slots=True)
class ExecutionRequest:
    """A code-execution tool call made while the model acts on an MCP-served skill."""

    key: SkillKey
    tool: str
    arguments: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class CrossOriginReadRequest:
    """A read against server `target` asked for while acting on a skill from server `source`."""

    source: SkillKey
    target: str
    uri: str


class ApprovalPrompt(Protocol):
    """Asks the user. Ship-with implementations: `DenyAll` (the default), `ApproveLoads` (unattended) and
    `skillwire.host.prompt.TerminalPrompt`."""

    async def approve_skill(self, request: SkillApprovalRequest) -> SkillApprovalDecision: ...

    async def approve_execution(self, request: ExecutionRequest) -> bool: ...

    async def approve_cross_origin_read(self, request: CrossOriginReadRequest) -> bool: ...


class DenyAll:
    """The non-interactive default: every question is answered no."""

    async def approve_skill(self, request: SkillApprovalRequest) -> SkillApprovalDecision:
        return SkillApprovalDecision(approved=False)

    async def approve_execution(self, request: ExecutionRequest) -> bool:
        return False

    async def approve_cross_origin_read(self, request: CrossOriginReadRequest) -> bool:
        return False


class ApproveLoads(DenyAll):
    """Unattended use (`skillwire host --yes`, a test, a CI job): every skill may load, for this session only, with
    no frontmatter field granted; code execution and cross-origin reads are refused (as `DenyAll` refuses them).
    Safer to copy than a prompt that says yes to everything: loading puts text in context, a grant widens what the
    model may do.
    """

    async def approve_skill(self, request: SkillApprovalRequest) -> SkillApprovalDecision:
        return SkillApprovalDecision(approved=True, remember=False)


class ApprovalStore(Protocol):
    """Where approvals persist. Session-only approvals must never be written durably."""

    def get(self, key: SkillKey) -> Approval | None: ...

    def put(self, approval: Approval) -> None: ...

    def revoke(self, key: SkillKey) -> None: ...

    def remove_origin(self, origin: str) -> None: ...


class MemoryApprovalStore:
    """Approvals for this process only."""

    def __init__(self) -> None:
        self._approvals: dict[SkillKey, Approval] = {}

    def get(self, key: SkillKey) -> Approval | None:
        return self._approvals.get(key)

    def put(self, approval: Approval) -> None:
        self._approvals[approval.key] = approval

    def revoke(self, key: SkillKey) -> None:
        self._approvals.pop(key, None)

    def remove_origin(self, origin: str) -> None:
        for key in [k for k in self._approvals if k.origin == origin]:
            del self._approvals[key]
