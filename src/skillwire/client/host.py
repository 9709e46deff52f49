"""A host over many MCP servers: registry, approvals, verified lazy loading, the acting window, the cache.

This is what an agent or IDE wires into its loop. It follows the spec's host
rules end to end: servers are known by host-assigned labels; listing fetches
no file (Lazy Retrieval); loading asks for approval bound to the entry's
{uri, digest} set, then reads SKILL.md, verifies size, digest and frontmatter,
and opens the acting window; every later read resolves only within the held
entry and is verified before use. A verification failure never yields content:
the host refreshes the entry with skills/get, and if the set changed the
approval is revoked and `SkillChanged` says what changed.

    async with Host(prompt=TerminalPrompt()) as host:
        await host.add_server("docs", "http://127.0.0.1:8000/mcp")
        loaded = await host.load_skill("docs:pdf-processing")
        text = await host.read_skill_file("docs:pdf-processing", "templates/invoice.md")
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from mcp.server.lowlevel import Server

from skillwire.cache.store import SkillCache
from skillwire.client.session import SkillsClient
from skillwire.errors import SkillwireError, UnlistedResource, VerificationError
from skillwire.host.approvals import (
    Approval,
    ApprovalPrompt,
    ApprovalStore,
    Approved,
    ContentChange,
    CrossOriginReadRequest,
    DenyAll,
    ExecutionRequest,
    MemoryApprovalStore,
    SkillApprovalRequest,
    check,
    diff_content,
    requested_grants,
)
from skillwire.host.entry import EntryResource, InvalidEntry, SkillEntry
from skillwire.host.policy import display_text, effective_frontmatter, origin_tag, tag_for_model
from skillwire.host.registry import LocalSkill, RegisteredSkill, Registry, SkillKey, check_label
from skillwire.host.verify import verify_bytes, verify_frontmatter
from skillwire.host.window import ActingWindow, DirectoryItem
from skillwire.manifest import MAX_TOTAL_BYTES

logger = logging.getLogger(__name__)


class HostError(SkillwireError):
    """A host-side refusal with a message meant for the user (and the model)."""


class SkillDeclined(HostError):
    """The host will not load this skill (limits, dynamic content, a local skill, ...)."""


class ApprovalDenied(HostError):
    """The user (or the non-interactive default) said no."""


class SkillChanged(HostError):
    """The server now serves different content than the user approved; approval was revoked."""

    def __init__(self, key: SkillKey, change: ContentChange) -> None:
        super().__init__(f"{key.origin}:{key.uri} changed since it was approved ({change}); approve it again to load")
        self.key = key
        self.change = change


class NotLoaded(HostError):
    """A file read for a skill that is not loaded: reads happen only inside an acting window."""


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


@dataclass(frozen=True, slots=True)
class LoadedSkill:
    """A skill loaded into context: origin-tagged instructions and the frontmatter the host acts on."""

    key: SkillKey
    handle: str
    text: str
    frontmatter: Mapping[str, Any]
    grants: frozenset[str]


@dataclass(slots=True)
class _Server:
    label: str
    client: SkillsClient
    problems: tuple[InvalidEntry, ...] = ()
    complete: bool = True
    dynamic_bytes: dict[str, int] = field(default_factory=dict)


class Host:
    """Skills from many servers (and the host's own folders), under the spec's host rules."""

    def __init__(
        self,
        *,
        prompt: ApprovalPrompt | None = None,
        approvals: ApprovalStore | None = None,
        cache: SkillCache | None = None,
        local_skills: Sequence[LocalSkill] = (),
        allow_dynamic: bool = False,
    ) -> None:
        self.prompt: ApprovalPrompt = prompt or DenyAll()
        self.approvals: ApprovalStore = approvals or MemoryApprovalStore()
        self.cache = cache
        self.allow_dynamic = allow_dynamic
        self.registry = Registry()
        self.registry.set_local(local_skills)
        self._servers: dict[str, _Server] = {}
        self._stacks: dict[str, AsyncExitStack] = {}
        self._windows: dict[SkillKey, ActingWindow] = {}

    async def __aenter__(self) -> Host:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for label in list(self._stacks):
            await self._close(label)

    # -- servers -------------------------------------------------------------------------------------------------

    async def add_server(self, label: str, target: str | Sequence[str] | Server[Any]) -> None:
        """Connect to a server under a host-assigned label and list its skills (no file is read)."""
        check_label(label)
        if label in self._servers:
            raise HostError(f"a server is already connected as {label!r}")
        stack = AsyncExitStack()
        try:
            client = await stack.enter_async_context(SkillsClient.connect(target))
        except BaseException:
            await stack.aclose()
            raise
        self._stacks[label] = stack
        self._servers[label] = _Server(label, client)
        if client.declared:
            await self.refresh(label)
        else:
            self.registry.set_origin(label, [])

    async def remove_server(self, label: str) -> None:
        """Disconnect, forget its skills and approvals, and delete its cached content."""
        await self._close(label)
        self.registry.remove_origin(label)
        self.approvals.remove_origin(label)
        if self.cache is not None:
            self.cache.remove_origin(label)
        self._windows = {k: w for k, w in self._windows.items() if k.origin != label}

    async def _close(self, label: str) -> None:
        self._servers.pop(label, None)
        stack = self._stacks.pop(label, None)
        if stack is not None:
            await stack.aclose()

    async def refresh(self, label: str) -> None:
        """Re-list a server's skills. Entries whose content changed lose their approvals on next load."""
        server = self._server(label)
        listing = await server.client.list_entries()
        server.problems = listing.problems
        server.complete = listing.complete
        for problem in listing.problems:
            logger.warning("%s: dropped an invalid entry: %s", label, problem)
        self.registry.set_origin(label, listing.entries)

    def problems(self, label: str) -> tuple[InvalidEntry, ...]:
        """The entries a server listed that were invalid and dropped, with reasons."""
        return self._server(label).problems

    # -- catalog ---------------------------------------------------------------------------------------------------

    def catalog(self) -> tuple[CatalogItem, ...]:
        """Every skill with its handle, display-safe name and description, and origin."""
        items = []
        for skill in self.registry.skills():
            items.append(
                CatalogItem(
                    handle=skill.handle,
                    name=display_text(skill.name, limit=64),
                    description=display_text(skill.description),
                    origin=skill.origin,
                    uri=skill.key.uri,
                    mcp=skill.is_mcp,
                    declined=self._declined_reason(skill),
                )
            )
        return tuple(items)

    def collisions(self) -> dict[str, tuple[str, ...]]:
        """Skill names carried by several skills, across servers and the host's own: to show the user."""
        return self.registry.collisions()

    def _declined_reason(self, skill: RegisteredSkill) -> str | None:
        entry = skill.entry
        if entry is None:
            return None
        over = entry.over_limits()
        if over is not None:
            return f"not loadable: {over}"
        if entry.is_dynamic and not self.allow_dynamic:
            return "not loadable: its content is dynamic, so it cannot be verified or content-bound"
        return None

    # -- loading ---------------------------------------------------------------------------------------------------

    async def load_skill(self, ref: str) -> LoadedSkill:
        """Approve (if needed), fetch SKILL.md, verify it, and open the acting window on the held entry."""
        skill = self.registry.resolve(ref)
        if skill.entry is None:
            raise SkillDeclined(f"{skill.handle} is one of the host's own skills; load it from its folder")
        reason = self._declined_reason(skill)
        if reason is not None:
            raise SkillDeclined(f"{skill.handle} is {reason}")
        entry = skill.entry
        approval = await self._approve(skill, entry)
        server = self._server(skill.origin)
        if entry.is_dynamic:
            data = await server.client.read(entry.uri)
            self._count_dynamic(server, entry, len(data))
        else:
            record = entry.skill_md
            assert record is not None
            data = await self._fetch_verified(skill.key, entry, record)
        try:
            parsed = verify_frontmatter(entry, data)
        except VerificationError as err:
            await self._after_failure(skill.key, entry, err)
            raise
        window = ActingWindow(skill.key, entry, approval.grants)
        self._windows[skill.key] = window
        return LoadedSkill(
            key=skill.key,
            handle=skill.handle,
            text=tag_for_model(skill.key, entry.uri, parsed.body),
            frontmatter=effective_frontmatter(entry.frontmatter, approval.grants),
            grants=approval.grants,
        )

    def unload(self, ref: str) -> None:
        """Close the acting window (the SKILL.md left the model's context)."""
        self._windows.pop(self.registry.resolve(ref).key, None)

    def window(self, ref: str) -> ActingWindow:
        skill = self.registry.resolve(ref)
        window = self._windows.get(skill.key)
        if window is None:
            raise NotLoaded(f"{skill.handle} is not loaded; load it before reading its files")
        return window

    async def read_skill_file(self, ref: str, path: str) -> bytes:
        """Read a file of a loaded skill: listed in the held entry, verified, served from cache when it matches."""
        window = self.window(ref)
        server = self._server(window.key.origin)
        if window.entry.is_dynamic:
            uri = window.resolve_uri(path)
            data = await server.client.read(uri)
            self._count_dynamic(server, window.entry, len(data))
            return data
        try:
            record = window.resolve(path)
        except UnlistedResource as err:
            await self._after_failure(window.key, window.entry, err)
            raise
        return await self._fetch_verified(window.key, window.entry, record)

    async def read_skill_text(self, ref: str, path: str) -> str:
        """A file of a loaded skill as origin-tagged text for the model (binary files are described, not shown)."""
        window = self.window(ref)
        data = await self.read_skill_file(ref, path)
        uri = window.resolve_uri(path)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = f"(binary file, {len(data)} bytes)"
        return tag_for_model(window.key, uri, text)

    def list_skill_directory(self, ref: str, path: str = "") -> tuple[DirectoryItem, ...]:
        """A directory of a loaded skill, answered from the held manifest (never extended by a live read)."""
        return self.window(ref).list_directory(path)

    # -- gates -----------------------------------------------------------------------------------------------------

    async def read_cross_origin(self, acting: str, target_label: str, uri: str) -> bytes:
        """A read against another server while acting on a skill: only with per-call approval naming both."""
        window = self.window(acting)
        if target_label == window.key.origin:
            return await self.read_skill_file(acting, uri)
        request = CrossOriginReadRequest(source=window.key, target=target_label, uri=uri)
        if not await self.prompt.approve_cross_origin_read(request):
            raise ApprovalDenied(
                f"{origin_tag(window.key)} asked to read {uri} from server {target_label!r}; the user did not allow it"
            )
        return await self._server(target_label).client.read(uri)

    async def approve_execution(self, tool: str, arguments: Mapping[str, object]) -> bool:
        """Whether a code-execution tool call may run now: gated while any MCP-served skill is being acted on."""
        for key in self._windows:
            if not await self.prompt.approve_execution(ExecutionRequest(key, tool, arguments)):
                return False
        return True

    # -- internals -------------------------------------------------------------------------------------------------

    def _server(self, label: str) -> _Server:
        server = self._servers.get(label)
        if server is None:
            raise HostError(f"no server is connected as {label!r}")
        return server

    async def _approve(self, skill: RegisteredSkill, entry: SkillEntry) -> Approval:
        status = check(self.approvals.get(skill.key), entry)
        if isinstance(status, Approved):
            return status.approval
        request = SkillApprovalRequest(
            key=skill.key,
            handle=skill.handle,
            entry=entry,
            reason=status.reason,
            change=status.change,
            requested=requested_grants(entry.frontmatter),
        )
        decision = await self.prompt.approve_skill(request)
        if not decision.approved:
            self.approvals.revoke(skill.key)
            raise ApprovalDenied(f"loading {skill.handle} was not approved")
        grants = frozenset(g for g in decision.grants if g in request.requested)
        approval = Approval(
            key=skill.key,
            content=entry.content_set,
            grants=grants,
            session_only=entry.is_dynamic or not decision.remember,
        )
        self.approvals.put(approval)
        return approval

    async def _fetch_verified(self, key: SkillKey, entry: SkillEntry, record: EntryResource) -> bytes:
        """Bytes of a listed file: from the cache if they still hash to the entry, else fetched and verified."""
        if self.cache is not None:
            cached = self.cache.get(key.origin, record)
            if cached is not None:
                return cached
        data = await self._server(key.origin).client.read(record.uri)
        try:
            verify_bytes(record, data)
        except VerificationError as err:
            await self._after_failure(key, entry, err)
            raise
        if self.cache is not None:
            self.cache.put(key.origin, record, data)
        return data

    async def _after_failure(self, key: SkillKey, held: SkillEntry, err: VerificationError) -> None:
        """Content was not used. Refresh the entry; if its set changed, revoke the approval and say what changed."""
        logger.warning("verification failed for %s: %s", origin_tag(key), err)
        self._windows.pop(key, None)
        server = self._server(key.origin)
        try:
            fresh = await server.client.get_entry(key.uri)
        except (InvalidEntry, SkillwireError) as refresh_err:
            logger.warning("refreshing %s failed: %s", origin_tag(key), refresh_err)
            return
        self.registry.update_entry(key.origin, fresh)
        if fresh.content_set != held.content_set:
            self.approvals.revoke(key)
            raise SkillChanged(key, diff_content(held.content_set, fresh.content_set)) from err

    def _count_dynamic(self, server: _Server, entry: SkillEntry, size: int) -> None:
        total = server.dynamic_bytes.get(entry.uri, 0) + size
        server.dynamic_bytes[entry.uri] = total
        if total > MAX_TOTAL_BYTES:
            raise SkillDeclined(f"{entry.uri}: dynamic content passed the 16 MiB per-skill limit; stopped loading")
