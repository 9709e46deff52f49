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

from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import TextIO

import anyio
import httpx2

from skillwire.cache.memory import DEFAULT_MEMORY_CACHE_BYTES, MemoryCache
from skillwire.cache.port import ContentCache
from skillwire.client.session import DEFAULT_TIMEOUT_S, SkillsClient, Target
from skillwire.core.errors import (
    ApprovalDenied,
    NotLoaded,
    OutsideSkill,
    RequestFailed,
    SkillChanged,
    SkillDeclined,
    UnknownSkill,
    UnlistedResource,
)
from skillwire.core.hosting.approvals import (
    Approval,
    ApprovalPrompt,
    ApprovalStore,
    Approved,
    CrossOriginReadRequest,
    DenyAll,
    ExecutionRequest,
    MemoryApprovalStore,
    SkillApprovalRequest,
    check,
    diff_content,
    requested_grants,
)
from skillwire.core.hosting.catalog_text import CONVERSATION_CHARS, SHORTEST_LINE, catalog_text
from skillwire.core.hosting.entry import SkillEntry
from skillwire.core.hosting.limits import DEFAULT_LIMITS, ClientLimits
from skillwire.core.hosting.policy import declined_reason, effective_frontmatter, origin_tag, tag_for_model
from skillwire.core.hosting.registry import LocalSkill, RegisteredSkill, Registry, SkillKey, check_label
from skillwire.core.hosting.results import CatalogItem, IncompleteListing, LoadedSkill, ServerProblem
from skillwire.core.hosting.verify import verify_frontmatter
from skillwire.core.hosting.window import ActingWindow, DirectoryItem
from skillwire.host.connections import Connections, collector_paused
from skillwire.host.reads import Once, Reads

__all__ = ["CatalogItem", "Host", "IncompleteListing", "LoadedSkill", "ServerProblem"]


class Host:
    """Skills from many servers (and the host's own folders), under the spec's host rules.

    Use it as `async with Host(...) as host:`. Each server connection runs in its own task
    of the host's task group, so servers can be added and removed in any order. `limits`
    caps what each server may send (listing pages, entries and bytes; bytes per answer) and how
    long a listing may go on, in all and without adding a skill.

    Verified files are kept in memory (Lazy Retrieval: hosts SHOULD cache what they retrieve): a file read
    again while the held entry lists the same digest sends no `resources/read`. `memory_cache_bytes` bounds
    it (32 MiB by default, least recently used dropped first; a file over an eighth of it is not kept; see
    `MemoryCache`); `memory_cache_bytes=0` turns it off, and every read goes to the server. `cache` adds a
    store behind it, such as the disk `SkillCache` (opt-in, outlives the host, re-hashed on every access):
    memory is asked first, so a file is read and re-hashed from disk at most once while memory holds it.
    """

    def __init__(
        self,
        *,
        prompt: ApprovalPrompt | None = None,
        approvals: ApprovalStore | None = None,
        cache: ContentCache | None = None,
        memory_cache_bytes: int = DEFAULT_MEMORY_CACHE_BYTES,
        local_skills: Sequence[LocalSkill] = (),
        allow_dynamic: bool = False,
        limits: ClientLimits = DEFAULT_LIMITS,
    ) -> None:
        self.prompt: ApprovalPrompt = prompt or DenyAll()
        self.allow_dynamic = allow_dynamic
        self.registry = Registry()
        self.registry.set_local(local_skills)
        self._connections = Connections(limits)
        memory = MemoryCache(memory_cache_bytes) if memory_cache_bytes != 0 else None  # a negative bound: ValueError
        store = approvals or MemoryApprovalStore()
        self._reads = Reads(self._connections, self.registry, store, cache, limits, memory=memory)

    # The settings live with the parts that use them; set here, they apply from the next call on.
    @property
    def approvals(self) -> ApprovalStore:
        return self._reads.approvals

    @approvals.setter
    def approvals(self, store: ApprovalStore) -> None:
        self._reads.approvals = store

    @property
    def cache(self) -> ContentCache | None:
        """The store behind the memory cache (the disk `SkillCache`, say), or None."""
        return self._reads.cache

    @cache.setter
    def cache(self, cache: ContentCache | None) -> None:
        self._reads.cache = cache

    @property
    def memory_cache(self) -> MemoryCache | None:
        """The verified files kept in memory (None when `memory_cache_bytes=0`)."""
        return self._reads.memory

    @property
    def limits(self) -> ClientLimits:
        return self._reads.limits

    @limits.setter
    def limits(self, limits: ClientLimits) -> None:
        self._reads.limits = self._connections.limits = limits

    async def __aenter__(self) -> Host:
        await self._connections.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._connections.__aexit__(exc_type, exc, tb)

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
        server = await self._connections.open(
            label, target, auth=auth, headers=headers, read_timeout_seconds=read_timeout_seconds, errlog=errlog
        )
        try:
            if server.client.declared:
                await self.refresh(label)
            else:
                self.registry.set_origin(label, [])
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._connections.close(label)
            raise

    async def remove_server(self, label: str) -> None:
        """Disconnect, forget its skills, approvals and files in memory, and delete its cached content."""
        await self._connections.close(label)
        self.registry.remove_origin(label)
        self.approvals.remove_origin(label)
        if self.cache is not None:
            self.cache.remove_origin(label)
        self._reads.forget_origin(label)

    def client(self, label: str) -> SkillsClient:
        """The SDK client for the server connected as `label` (its `reads` record every resources/read sent)."""
        return self._connections.get(label).client

    async def refresh(self, label: str) -> None:
        """Re-list a server's skills. An entry whose content set changed revokes that skill's approval."""
        server = self._connections.get(label)
        with collector_paused():  # a large listing is many objects and no cycles: see `collector_paused`
            entries = await server.list_entries()
            self.registry.set_origin(label, entries)
            for entry in entries:
                self._reads.observe(SkillKey(label, entry.uri), entry)

    def problems(self, label: str) -> tuple[ServerProblem, ...]:
        """What is wrong with a server's last listing: entries dropped as invalid (with reasons), then
        `IncompleteListing` if the walk was cut off (its catalog is then partial)."""
        return self._connections.get(label).problems()

    # -- catalog ---------------------------------------------------------------------------------------------------

    def catalog(self) -> tuple[CatalogItem, ...]:
        """Every skill with its handle, display-safe name and description, and origin."""
        return tuple(self._item(skill) for skill in self.registry.skills())

    def search(self, query: str, limit: int = 10) -> tuple[CatalogItem, ...]:
        """The `limit` skills of every server and of the host's own most relevant to `query`, best first.

        Ranked from listing data only (name, description, other frontmatter text, path; `core.search`): nothing
        is fetched to search. The index follows each listing as it changes.
        """
        return tuple(self._item(skill) for skill in self.registry.search(query, limit))

    def catalog_prompt(self, budget: int, conversation: str | None = None) -> str:
        """The catalog as system-prompt text in at most `budget` characters (`core/hosting/catalog_text.py`).

        With `conversation` (the recent turns), the skills most relevant to its last part come first; otherwise
        skills are in handle order. A closing line says how many more exist and that `search_skills` finds them.
        """
        items = self.catalog()
        if conversation:
            shown_at_most = max(1, budget // SHORTEST_LINE)
            ranked = self.search(conversation[-CONVERSATION_CHARS:], limit=min(len(items), shown_at_most))
            first = {item.handle for item in ranked}
            items = (*ranked, *(item for item in items if item.handle not in first))
        return catalog_text(items, budget=budget)

    def _item(self, skill: RegisteredSkill) -> CatalogItem:
        return CatalogItem.of(skill, declined=declined_reason(skill.entry, allow_dynamic=self.allow_dynamic))

    def collisions(self) -> dict[str, tuple[str, ...]]:
        """Skill names carried by several skills, across servers and the host's own: to show the user."""
        return self.registry.collisions()

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
        reason = declined_reason(skill.entry, allow_dynamic=self.allow_dynamic)
        if reason is not None:
            raise SkillDeclined(f"{skill.handle} is {reason}")
        entry = skill.entry
        server = self._connections.get(skill.origin)
        if entry.is_dynamic:
            server.dynamic_bytes[entry.uri] = 0  # a new load: the limit counts what this load retrieves
        skill_md = Once(lambda: self._reads.fetch_skill_md(skill.key, entry))
        approval = await self._approve(skill, entry, skill_md)
        data = await skill_md()  # verified; already fetched if the user read it before approving
        parsed = verify_frontmatter(entry, data)  # passes (checked on fetch): parsed here for the body
        self._reads.windows[skill.key] = ActingWindow(skill.key, entry, approval.grants)
        self._reads.suspended.pop(skill.key, None)
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
            if not (sep and label in self._connections and "://" in uri):
                raise
        # An explicit reference the listing did not include: the server confirms it (or says it is no skill).
        try:
            entry = await self._connections.get(label).client.get_entry(uri)
        except RequestFailed as err:
            raise UnknownSkill(f"server {label!r} serves no skill at {uri[:200]}: {err.message}") from None
        self.registry.update_entry(label, entry)
        key = SkillKey(label, entry.uri)
        self._reads.observe(key, entry)
        found = self.registry.get(key)
        assert found is not None
        return found

    def unload(self, ref: str) -> None:
        """Close the acting window (the SKILL.md left the model's context)."""
        key = self.registry.resolve(ref).key
        self._reads.windows.pop(key, None)
        self._reads.suspended.pop(key, None)

    def window(self, ref: str) -> ActingWindow:
        """The acting window reads go through; SkillChanged if the skill changed under it (load it again)."""
        skill = self.registry.resolve(ref)
        window = self._reads.windows.get(skill.key)
        if window is None:
            raise NotLoaded(f"{skill.handle} is not loaded; load it before reading its files")
        change = self._reads.suspended.get(skill.key)
        if change is not None:
            raise SkillChanged(skill.key, change)
        return window

    def acting(self) -> tuple[SkillKey, ...]:
        """The skills the host is acting on (loaded and not unloaded), changed ones included."""
        return tuple(self._reads.windows)

    async def read_skill_file(self, ref: str, path: str, *, base: str | None = None) -> bytes:
        """Read a file of a loaded skill: listed in the held entry, verified, served from cache when it matches.

        `path` is relative to the skill's root, or to the root of the nested skill holding `base` (the file the
        reference was written in), or an absolute URI inside the skill (see `ActingWindow.resolve_uri`).
        """
        window = self.window(ref)
        server = self._connections.get(window.key.origin)
        if window.entry.is_dynamic:
            return await self._reads.read_dynamic(server, window.entry, window.resolve_uri(path, base))
        try:
            record = window.resolve(path, base)
        except OutsideSkill:
            raise  # not a file of this skill at all: refused, and nothing about the skill changed
        except UnlistedResource as err:
            await self._reads.after_failure(window.key, window.entry, err)
            raise
        return await self._reads.fetch_verified(window.key, window.entry, record)

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
        return await self._connections.get(window.key.origin).read_directory(directory)

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
        target = self._connections.get(target_label)
        request = CrossOriginReadRequest(source=window.key, target=target_label, uri=uri)
        if not await self.prompt.approve_cross_origin_read(request):
            raise ApprovalDenied(
                f"{origin_tag(window.key)} asked to read {uri} from server {target_label!r}; the user did not allow it"
            )
        return await target.read(uri)

    async def approve_execution(self, tool: str, arguments: Mapping[str, object]) -> bool:
        """Whether a code-execution tool call may run now: gated while any MCP-served skill is being acted on.

        Every skill in an acting window is asked about, including one that changed under it;
        the first refusal wins.
        """
        for key in self._reads.windows:
            if not await self.prompt.approve_execution(ExecutionRequest(key, tool, arguments)):
                return False
        return True

    # -- internals -------------------------------------------------------------------------------------------------

    async def _approve(self, skill: RegisteredSkill, entry: SkillEntry, skill_md: Once) -> Approval:
        status = check(self.approvals.get(skill.key), entry)
        if isinstance(status, Approved):
            return status.approval
        reason, change = status.reason, status.change
        revoked = self._reads.revoked.get(skill.key)
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
        self._reads.revoked.pop(skill.key, None)
        return approval
