"""A host over many MCP servers: registry, approvals, verified lazy loading, the acting window, the cache.

This is what an agent or IDE wires into its loop. It follows the spec's host
rules end to end: servers are known by host-assigned labels; listing fetches
no file (Lazy Retrieval); loading asks for approval bound to the entry's
{uri, digest} set, then reads SKILL.md, verifies size, digest and frontmatter,
and opens the acting window; every later read resolves only within the held
entry and is verified before use. A verification failure never yields content:
the host refreshes the entry with skills/get, and if the set changed the
approval is revoked and `SkillChanged` says what changed (a fresh skills/list
entry revokes it the same way). The acting window lasts until `unload`, so
execution stays gated through failures. A skill is loadable from its URI alone
(`label:skill://.../SKILL.md`, confirmed with skills/get). Each connection runs
in a task of the host's own task group: open the host with `async with`.

    async with Host(prompt=TerminalPrompt()) as host:
        await host.add_server("docs", "http://127.0.0.1:8000/mcp")
        loaded = await host.load_skill("docs:pdf-processing")
        text = await host.read_skill_file("docs:pdf-processing", "templates/invoice.md")
"""

from __future__ import annotations

import gc
import logging
import math
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from types import TracebackType
from typing import Any, TextIO
from urllib.parse import unquote

import anyio
import httpx2
from anyio.abc import TaskGroup, TaskStatus
from mcp.shared.exceptions import MCPError

from skillwire.cache.store import SkillCache
from skillwire.client.session import DEFAULT_TIMEOUT_S, SkillsClient, Target
from skillwire.errors import (
    AuthenticationRequired,
    ResponseTooLarge,
    SkillwireError,
    UnlistedResource,
    VerificationError,
)
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
    NeedsApproval,
    SkillApprovalRequest,
    check,
    diff_content,
    requested_grants,
)
from skillwire.host.catalog_text import catalog_text
from skillwire.host.entry import EntryResource, InvalidEntry, SkillEntry
from skillwire.host.limits import DEFAULT_LIMITS, ClientLimits
from skillwire.host.policy import display_text, effective_frontmatter, origin_tag, tag_for_model
from skillwire.host.registry import LocalSkill, RegisteredSkill, Registry, SkillKey, UnknownSkill, check_label
from skillwire.host.verify import verify_bytes, verify_frontmatter
from skillwire.host.window import ActingWindow, DirectoryItem, OutsideSkill
from skillwire.manifest import MAX_TOTAL_BYTES
from skillwire.uri import same_uri

logger = logging.getLogger(__name__)


_CONVERSATION_CHARS = 2_000  # the end of a conversation that ranks the catalog prompt (recent turns matter most)
_SHORTEST_LINE = 16  # no catalog line is shorter: bounds how many skills a budget can show


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


@dataclass(slots=True)
class _Server:
    label: str
    client: SkillsClient
    close: anyio.Event = field(default_factory=anyio.Event)
    closed: anyio.Event = field(default_factory=anyio.Event)
    problems: tuple[InvalidEntry, ...] = ()
    incomplete: IncompleteListing | None = None
    dynamic_bytes: dict[str, int] = field(default_factory=dict)


class Host:
    """Skills from many servers (and the host's own folders), under the spec's host rules.

    Use it as `async with Host(...) as host:`. Each server connection runs in its own task
    of the host's task group, so servers can be added and removed in any order. `limits`
    caps what each server may send (listing pages, entries and bytes; bytes per answer).
    """

    def __init__(
        self,
        *,
        prompt: ApprovalPrompt | None = None,
        approvals: ApprovalStore | None = None,
        cache: SkillCache | None = None,
        local_skills: Sequence[LocalSkill] = (),
        allow_dynamic: bool = False,
        limits: ClientLimits = DEFAULT_LIMITS,
    ) -> None:
        self.limits = limits
        self.prompt: ApprovalPrompt = prompt or DenyAll()
        self.approvals: ApprovalStore = approvals or MemoryApprovalStore()
        self.cache = cache
        self.allow_dynamic = allow_dynamic
        self.registry = Registry()
        self.registry.set_local(local_skills)
        self._servers: dict[str, _Server] = {}
        self._task_group: TaskGroup | None = None
        # The acting windows: open from a load until `unload` (the SKILL.md left the model's context).
        self._windows: dict[SkillKey, ActingWindow] = {}
        # Windows whose skill changed under them: still acting (execution stays gated), but no more reads.
        self._suspended: dict[SkillKey, ContentChange] = {}
        # The content sets of approvals revoked because the skill changed, so the next prompt says "changed".
        self._revoked: dict[SkillKey, frozenset[tuple[str, str]]] = {}

    async def __aenter__(self) -> Host:
        if self._task_group is not None:
            raise HostError("this Host is already open")
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = task_group
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            for label in list(self._servers):
                await self._close(label)
        finally:
            task_group, self._task_group = self._task_group, None
            if task_group is not None:
                # Every connection task has ended, so the group has nothing to report: an exception from the
                # body propagates as itself (not wrapped in a group). Cancellation is handed on for anyio to
                # account for it.
                if isinstance(exc, anyio.get_cancelled_exc_class()):
                    await task_group.__aexit__(exc_type, exc, tb)
                else:
                    await task_group.__aexit__(None, None, None)

    # -- servers -------------------------------------------------------------------------------------------------

    async def add_server(
        self,
        label: str,
        target: Target,
        *,
        auth: httpx2.Auth | None = None,
        headers: Mapping[str, str] | None = None,
        read_timeout_seconds: float | None = DEFAULT_TIMEOUT_S,
        errlog: TextIO | None = None,
    ) -> None:
        """Connect to a server under a host-assigned label and list its skills (no file is read).

        `target` is what `SkillsClient.connect` takes: an http(s) URL, a stdio command line, or an
        in-process SDK server. `auth` / `headers` (a bearer token, say) go on every HTTP request to
        this server only; a server that wants a token raises `AuthenticationRequired`.
        `read_timeout_seconds` bounds each request to it, the connection's own included; `errlog`
        takes a stdio server's stderr (ours by default).
        """
        check_label(label)
        if self._task_group is None:
            raise HostError("open the host first: `async with Host(...) as host:`")
        if label in self._servers:
            raise HostError(f"a server is already connected as {label!r}")
        try:
            server: _Server = await self._task_group.start(
                partial(self._hold, errlog=errlog), label, target, auth, headers, read_timeout_seconds
            )
        except AuthenticationRequired:
            raise
        except Exception as err:
            raise HostError(f"cannot connect to the server for {label!r}: {_describe(err)}") from err
        self._servers[label] = server
        try:
            if server.client.declared:
                await self.refresh(label)
            else:
                self.registry.set_origin(label, [])
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._close(label)
            raise

    async def _hold(
        self,
        label: str,
        target: Target,
        auth: httpx2.Auth | None,
        headers: Mapping[str, str] | None,
        read_timeout_seconds: float | None,
        *,
        errlog: TextIO | None = None,
        task_status: TaskStatus[_Server],
    ) -> None:
        """Keep one connection open in its own task until `_close` asks it to end.

        SDK connections own anyio task groups, whose cancel scopes must be exited in the task
        (and order) they were entered in; one task per connection makes any removal order safe.
        """
        server: _Server | None = None
        try:
            # The whole setup is bounded too: the SDK's server/discover probe has its own fixed 10 s timeout.
            with anyio.fail_after(read_timeout_seconds) as setup:
                async with SkillsClient.connect(
                    target,
                    limits=self.limits,
                    auth=auth,
                    headers=headers,
                    read_timeout_seconds=read_timeout_seconds,
                    errlog=errlog,
                ) as client:
                    setup.deadline = math.inf  # connected: from here each request has its own timeout
                    server = _Server(label, client)
                    task_status.started(server)
                    await server.close.wait()
        except Exception as err:
            if server is None:
                raise  # not connected yet: `start` hands the error to `add_server`
            logger.warning("the connection to %r ended with an error: %s", label, err)
        finally:
            if server is not None:
                server.closed.set()

    async def remove_server(self, label: str) -> None:
        """Disconnect, forget its skills and approvals, and delete its cached content."""
        await self._close(label)
        self.registry.remove_origin(label)
        self.approvals.remove_origin(label)
        if self.cache is not None:
            self.cache.remove_origin(label)
        for table in (self._windows, self._suspended, self._revoked):
            for key in [k for k in table if k.origin == label]:
                del table[key]

    async def _close(self, label: str) -> None:
        server = self._servers.pop(label, None)
        if server is not None:
            server.close.set()
            await server.closed.wait()

    def client(self, label: str) -> SkillsClient:
        """The SDK client for the server connected as `label` (its `reads` record every resources/read sent)."""
        return self._server(label).client

    async def refresh(self, label: str) -> None:
        """Re-list a server's skills. An entry whose content set changed revokes that skill's approval."""
        server = self._server(label)
        with _collector_paused():  # a large listing is many objects and no cycles: see `_collector_paused`
            listing = await server.client.list_entries()
            server.problems = listing.problems
            server.incomplete = None if listing.cutoff is None else IncompleteListing(label, listing.cutoff)
            for problem in listing.problems:
                logger.warning("%s: dropped an invalid entry: %s", label, problem)
            if server.incomplete is not None:
                logger.info("%s", server.incomplete)  # a warning to act on is the caller's: it is in `problems()`
            self.registry.set_origin(label, listing.entries)
            for entry in listing.entries:
                self._observe(SkillKey(label, entry.uri), entry)

    def problems(self, label: str) -> tuple[ServerProblem, ...]:
        """What is wrong with a server's last listing: entries dropped as invalid (with reasons), then
        `IncompleteListing` if the walk was cut off (its catalog is then partial)."""
        server = self._server(label)
        return server.problems if server.incomplete is None else (*server.problems, server.incomplete)

    # -- catalog ---------------------------------------------------------------------------------------------------

    def catalog(self) -> tuple[CatalogItem, ...]:
        """Every skill with its handle, display-safe name and description, and origin."""
        return tuple(self._item(skill) for skill in self.registry.skills())

    def search(self, query: str, limit: int = 10) -> tuple[CatalogItem, ...]:
        """The `limit` skills of every server and of the host's own most relevant to `query`, best first.

        Ranked from listing data only (name, description, other frontmatter text, path; `skillwire.search`): nothing
        is fetched to search. The index follows each listing as it changes.
        """
        return tuple(self._item(skill) for skill in self.registry.search(query, limit))

    def catalog_prompt(self, budget: int, conversation: str | None = None) -> str:
        """The catalog as system-prompt text in at most `budget` characters (`host/catalog_text.py`).

        With `conversation` (the recent turns), the skills most relevant to its last part come first; otherwise
        skills are in handle order. A closing line says how many more exist and that `search_skills` finds them.
        """
        items = self.catalog()
        if conversation:
            shown_at_most = max(1, budget // _SHORTEST_LINE)
            ranked = self.search(conversation[-_CONVERSATION_CHARS:], limit=min(len(items), shown_at_most))
            first = {item.handle for item in ranked}
            items = (*ranked, *(item for item in items if item.handle not in first))
        return catalog_text(items, budget=budget)

    def _item(self, skill: RegisteredSkill) -> CatalogItem:
        return CatalogItem(
            handle=skill.handle,
            name=display_text(skill.name, limit=64),
            description=display_text(skill.description),
            origin=skill.origin,
            uri=skill.key.uri,
            mcp=skill.is_mcp,
            declined=self._declined_reason(skill),
        )

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
        """Approve (if needed), fetch SKILL.md, verify it, and open the acting window on the held entry.

        `ref` is a handle (`docs:pdf-processing`), a bare name unique host-wide, or
        `label:<uri of a SKILL.md>`; a uri the listing did not include is confirmed with
        skills/get ("MUST support loading a skill given only its URI").
        """
        skill = await self._resolve_for_load(ref)
        if skill.entry is None:
            raise SkillDeclined(f"{skill.handle} is one of the host's own skills; load it from its folder")
        reason = self._declined_reason(skill)
        if reason is not None:
            raise SkillDeclined(f"{skill.handle} is {reason}")
        entry = skill.entry
        server = self._server(skill.origin)
        if entry.is_dynamic:
            server.dynamic_bytes[entry.uri] = 0  # a new load: the limit counts what this load retrieves
        skill_md = _Once(lambda: self._fetch_skill_md(skill.key, entry))
        approval = await self._approve(skill, entry, skill_md)
        data = await skill_md()  # verified; already fetched if the user read it before approving
        parsed = verify_frontmatter(entry, data)  # passes (checked on fetch): parsed here for the body
        self._windows[skill.key] = ActingWindow(skill.key, entry, approval.grants)
        self._suspended.pop(skill.key, None)
        return LoadedSkill(
            key=skill.key,
            handle=skill.handle,
            text=tag_for_model(skill.key, entry.uri, parsed.body),
            frontmatter=effective_frontmatter(entry.frontmatter, approval.grants),
            grants=approval.grants,
            files=() if isinstance(entry.resources, str) else entry.resources,
            dynamic=entry.is_dynamic,
        )

    async def _resolve_for_load(self, ref: str) -> RegisteredSkill:
        try:
            return self.registry.resolve(ref)
        except UnknownSkill:
            label, sep, uri = ref.partition(":")
            if not (sep and label in self._servers and "://" in uri):
                raise
        # An explicit reference the listing did not include: the server confirms it (or says it is no skill).
        try:
            entry = await self._server(label).client.get_entry(uri)
        except MCPError as err:
            raise UnknownSkill(f"server {label!r} serves no skill at {uri[:200]}: {err.message}") from None
        self.registry.update_entry(label, entry)
        key = SkillKey(label, entry.uri)
        self._observe(key, entry)
        found = self.registry.get(key)
        assert found is not None
        return found

    def unload(self, ref: str) -> None:
        """Close the acting window (the SKILL.md left the model's context)."""
        key = self.registry.resolve(ref).key
        self._windows.pop(key, None)
        self._suspended.pop(key, None)

    def window(self, ref: str) -> ActingWindow:
        """The acting window reads go through; SkillChanged if the skill changed under it (load it again)."""
        skill = self.registry.resolve(ref)
        window = self._windows.get(skill.key)
        if window is None:
            raise NotLoaded(f"{skill.handle} is not loaded; load it before reading its files")
        change = self._suspended.get(skill.key)
        if change is not None:
            raise SkillChanged(skill.key, change)
        return window

    def acting(self) -> tuple[SkillKey, ...]:
        """The skills the host is acting on (loaded and not unloaded), changed ones included."""
        return tuple(self._windows)

    async def read_skill_file(self, ref: str, path: str, *, base: str | None = None) -> bytes:
        """Read a file of a loaded skill: listed in the held entry, verified, served from cache when it matches.

        `path` is relative to the skill's root, or to the root of the nested skill holding `base` (the file the
        reference was written in), or an absolute URI inside the skill (see `ActingWindow.resolve_uri`).
        """
        window = self.window(ref)
        server = self._server(window.key.origin)
        if window.entry.is_dynamic:
            return await self._read_dynamic(server, window.entry, window.resolve_uri(path, base))
        try:
            record = window.resolve(path, base)
        except OutsideSkill:
            raise  # not a file of this skill at all: refused, and nothing about the skill changed
        except UnlistedResource as err:
            await self._after_failure(window.key, window.entry, err)
            raise
        return await self._fetch_verified(window.key, window.entry, record)

    async def read_skill_text(self, ref: str, path: str, *, base: str | None = None) -> str:
        """A file of a loaded skill as origin-tagged text for the model (binary files are described, not shown)."""
        window = self.window(ref)
        uri = window.resolve_uri(path, base)
        data = await self.read_skill_file(ref, path, base=base)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = f"(binary file, {len(data)} bytes)"
        return tag_for_model(window.key, uri, text)

    async def list_skill_directory(
        self, ref: str, path: str = "", *, base: str | None = None
    ) -> tuple[DirectoryItem, ...]:
        """A directory of a loaded skill: from the held manifest (never extended by a live read), or, for a
        "dynamic" skill, from resources/directory/read.

        Reading Directories: "For a dynamically generated skill, a directory read is the only way to discover
        the skill's files." Its answer names files only; reading one still goes through the per-skill limit.
        """
        window = self.window(ref)
        if not window.entry.is_dynamic:
            return window.list_directory(path, base)
        directory = window.resolve_uri(path, base)
        server = self._server(window.key.origin)
        try:
            children = await server.client.read_directory(directory)
        except MCPError as err:
            raise ReadFailed(
                f"server {server.label!r} could not list {directory[:200]}: {err.message}", uri=directory
            ) from err
        items = (
            DirectoryItem(unquote(c.uri.rsplit("/", 1)[-1]), c.uri, c.is_directory, None if c.is_directory else c.size)
            for c in children
        )
        return tuple(sorted(items, key=lambda i: i.name))

    # -- gates -----------------------------------------------------------------------------------------------------

    async def read_cross_origin(self, acting: str, target_label: str, uri: str) -> bytes:
        """A read against another server while acting on a skill: only with per-call approval naming both.

        Security Considerations: "A skill served by server A MUST NOT cause a resources/read
        against server B" and "Any cross-origin read MUST be gated behind explicit per-call
        user approval naming both servers". The bytes are ordinary resource content, not a load.
        """
        window = self.window(acting)
        if target_label == window.key.origin:
            return await self.read_skill_file(acting, uri)
        target = self._server(target_label)
        request = CrossOriginReadRequest(source=window.key, target=target_label, uri=uri)
        if not await self.prompt.approve_cross_origin_read(request):
            raise ApprovalDenied(
                f"{origin_tag(window.key)} asked to read {uri} from server {target_label!r}; the user did not allow it"
            )
        return await self._read(target, uri)

    async def approve_execution(self, tool: str, arguments: Mapping[str, object]) -> bool:
        """Whether a code-execution tool call may run now: gated while any MCP-served skill is being acted on.

        Every skill in an acting window is asked about, including one that changed under it;
        the first refusal wins.
        """
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

    def _observe(self, key: SkillKey, entry: SkillEntry) -> None:
        """A fresh entry from skills/list or skills/get: an approval that no longer covers it is revoked.

        Content-bound approval: "If a subsequent entry for that skill ... advertises a
        different set ... the host MUST treat the prior approval as revoked and re-prompt
        before loading or executing."
        """
        approval = self.approvals.get(key)
        if approval is not None and isinstance(check(approval, entry), NeedsApproval):
            self.approvals.revoke(key)
            self._revoked[key] = approval.content
        window = self._windows.get(key)
        if window is not None and window.entry.content_set != entry.content_set:
            self._suspended[key] = diff_content(window.entry.content_set, entry.content_set)

    async def _fetch_skill_md(self, key: SkillKey, entry: SkillEntry) -> bytes:
        """SKILL.md of `entry`, verified: size and digest (unless dynamic), then frontmatter."""
        if not entry.is_dynamic:
            record = entry.skill_md
            assert record is not None
            return await self._fetch_verified(key, entry, record)  # checks the frontmatter too
        data = await self._read_dynamic(self._server(key.origin), entry, entry.uri)
        try:
            verify_frontmatter(entry, data)
        except VerificationError as err:
            await self._after_failure(key, entry, err)
            raise
        return data

    async def _approve(self, skill: RegisteredSkill, entry: SkillEntry, skill_md: _Once) -> Approval:
        status = check(self.approvals.get(skill.key), entry)
        if isinstance(status, Approved):
            return status.approval
        reason, change = status.reason, status.change
        revoked = self._revoked.get(skill.key)
        if reason == "new" and revoked is not None:
            reason, change = "changed", diff_content(revoked, entry.content_set)
        request = SkillApprovalRequest(
            key=skill.key,
            handle=skill.handle,
            entry=entry,
            reason=reason,
            change=change,
            requested=requested_grants(entry.frontmatter),
            read_skill_md=skill_md.text,
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
        self._revoked.pop(skill.key, None)
        return approval

    async def _read(self, server: _Server, uri: str, size: int | None = None) -> bytes:
        """resources/read (its answer bounded by `size`, see `SkillsClient.read`), with a server error
        turned into ReadFailed (a refusal, not a crash)."""
        try:
            return await server.client.read(uri, size=size)
        except MCPError as err:
            raise ReadFailed(f"server {server.label!r} could not serve {uri[:200]}: {err.message}", uri=uri) from err

    async def _fetch_verified(self, key: SkillKey, entry: SkillEntry, record: EntryResource) -> bytes:
        """Bytes of a listed file: from the cache if they still hash to the entry, else fetched and verified."""
        if self.cache is not None:
            cached = self.cache.get(key.origin, record)
            if cached is not None:
                return cached
        try:
            data = await self._read(self._server(key.origin), record.uri, record.size)
        except (ReadFailed, VerificationError) as err:
            # Reading Directories: a listed file the server no longer serves; "the same refresh applies".
            # An answer cut off past the listed size (ResponseTooLarge) is a verification failure too.
            await self._after_failure(key, entry, err)
            raise
        try:
            verify_bytes(record, data)
            if same_uri(record.uri, entry.uri):
                # Every check before the cache: bytes whose frontmatter the host refused never reach the disk.
                verify_frontmatter(entry, data)
        except VerificationError as err:
            await self._after_failure(key, entry, err)
            raise
        if self.cache is not None:
            self.cache.put(key.origin, record, data)
        return data

    async def _after_failure(self, key: SkillKey, held: SkillEntry, err: SkillwireError) -> None:
        """Content was not used. Refresh the entry; if its set changed, revoke the approval and say what changed.

        Integrity and Verification: "To recover from staleness, the host calls skills/get
        for that skill ... and proceeds from the current resources set." The acting window
        stays open (it ends only when the SKILL.md leaves context), so execution stays gated.
        """
        logger.warning("verification failed for %s: %s", origin_tag(key), err)
        server = self._server(key.origin)
        try:
            fresh = await server.client.get_entry(key.uri)
        except (SkillwireError, MCPError) as refresh_err:
            logger.warning("refreshing %s failed: %s", origin_tag(key), refresh_err)
            return
        self.registry.update_entry(key.origin, fresh)
        self._observe(key, fresh)
        if fresh.content_set != held.content_set:
            self._revoked.setdefault(key, held.content_set)
            change = diff_content(held.content_set, fresh.content_set)
            if key in self._windows:
                self._suspended[key] = change
            raise SkillChanged(key, change) from err

    async def _read_dynamic(self, server: _Server, entry: SkillEntry, uri: str) -> bytes:
        """A read for a dynamic skill: no size is listed, so the spec's 16 MiB per-skill total bounds it
        (or `limits.max_read_bytes`, if lower). Each answer may take only what is left of the total, and is
        cut off on the wire past that.
        """
        budget = min(MAX_TOTAL_BYTES, self.limits.max_read_bytes)
        used = server.dynamic_bytes.get(entry.uri, 0)
        try:
            data = await self._read(server, uri, budget - used)
        except ResponseTooLarge:
            data = None
        total = used + (budget + 1 if data is None else len(data))
        server.dynamic_bytes[entry.uri] = total
        if data is None or total > budget:
            raise SkillDeclined(
                f"{entry.uri}: dynamic content passed the per-skill limit of {budget:,} bytes; stopped loading"
            )
        return data


class _Once:
    """SKILL.md fetched at most once per load: for the user to read before approving (if asked), then the load."""

    def __init__(self, fetch: Callable[[], Awaitable[bytes]]) -> None:
        self._fetch = fetch
        self._data: bytes | None = None

    async def __call__(self) -> bytes:
        if self._data is None:
            self._data = await self._fetch()
        return self._data

    async def text(self) -> str:
        return (await self()).decode("utf-8", errors="replace")


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a listing is read and becomes the registry (on after, if it was on).

    A listing keeps some ten objects per skill, and each few thousand new objects set off a collection that walks
    every object held so far: at 100,000 skills that was 3 of 10 CPU seconds. Entries, handles and the search index
    make no cycles, and 1,000 pages of SDK requests left 15 cyclic objects; cycles other tasks make meanwhile wait
    for the end of the listing, which the listing limits and request timeouts bound.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _describe(err: BaseException) -> str:
    """The innermost useful message of a connection failure (SDK errors arrive wrapped in exception groups)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    if isinstance(err, TimeoutError):
        return "no answer while connecting (the read timeout passed)"
    return str(err) or type(err).__name__
