"""`Host` end to end: skillwire's own server over real stdio and HTTP (and in-process where the transport is not the
point: the same server `serve` builds), and the hostile server.

Spec sections exercised: Names, Skill URIs, Resources, Limits, Integrity and
Verification (verification on read, the acting window and held entry,
frontmatter verification, lazy retrieval), Reading Directories (directory reads
and the held entry), Nested Skills, the Example Message Flow, and Security
Considerations (origin tags, no implicit execution, origin-scoped reads, name
collisions, no implicit permission grants, content-bound approval, cache
integrity and isolation). Each test's docstring names the rule it checks.
"""

from __future__ import annotations

import gc
import json
import logging
import shutil
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest

from skillwire.cache.store import SkillCache
from skillwire.client.session import Target
from skillwire.core.errors import (
    AmbiguousSkillName,
    ApprovalDenied,
    DigestMismatch,
    FrontmatterMismatch,
    HostError,
    InvalidEntry,
    NotLoaded,
    OutsideSkill,
    ResponseTooLarge,
    SizeMismatch,
    SkillChanged,
    SkillDeclined,
    UnknownSkill,
    UnlistedResource,
)
from skillwire.core.hosting.approvals import (
    Approval,
    CrossOriginReadRequest,
    ExecutionRequest,
    MemoryApprovalStore,
    SkillApprovalDecision,
    SkillApprovalRequest,
)
from skillwire.core.hosting.limits import ClientLimits
from skillwire.core.hosting.registry import LocalSkill, SkillKey
from skillwire.host.approval_store import JsonApprovalStore
from skillwire.host.host import Host, IncompleteListing
from skillwire.server.extension import SkillsExtension
from skillwire.service.run import build_server
from tests.support import hostile as h
from tests.support.flood import hostile_command, hostile_http
from tests.support.servers import EXAMPLE_SKILLS, REPO_ROOT, http_server, serve_command
from tests.support.spec_example import CREDIT_NOTE_RESOURCE, SPEC_RESOURCES

pytestmark = pytest.mark.anyio

Transport = Literal["stdio", "http"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "http")
DocsTransport = Literal["memory", "stdio", "http"]
HostileTransport = Literal["inprocess", "stdio", "http"]

PDF = "skill://pdf-processing/SKILL.md"
INVOICE = "skill://pdf-processing/templates/invoice.md"
PURCHASE_ORDER = "skill://pdf-processing/templates/purchase-order.md"
CREDIT_NOTE = "skill://pdf-processing/templates/credit-note.md"
CREDIT_NOTE_TEXT = b"# Credit note\n\nInvoice:\nCredit amount:\n"
# The Example Message Flow's manifest, digests as printed in the spec.
SPEC_PDF_SET = frozenset((r["uri"], r["digest"]) for r in SPEC_RESOURCES)
SPEC_CREDIT_NOTE = (CREDIT_NOTE_RESOURCE["uri"], CREDIT_NOTE_RESOURCE["digest"])
CODE_REVIEW = "skill://code-review/SKILL.md"
SECURITY_REVIEW = "skill://code-review/security-review/SKILL.md"
EXAMPLE_HANDLES = [
    "docs:code-review",
    "docs:git-workflow",
    "docs:pdf-processing",
    "docs:refunds",
    "docs:security-review",
]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


# -- a scripted user -------------------------------------------------------------------------------------------------


@dataclass
class ScriptedPrompt:
    """An approval prompt that answers from a script and records every question it was asked.

    `reads_at_prompt` holds, for each skill question, the resources/read URIs the host had sent by then
    (filled only when `host` is set), so a test can prove nothing was fetched before approval.
    """

    approve: bool = True
    grants: frozenset[str] = frozenset()
    remember: bool = True
    execution: list[bool] = field(default_factory=list)
    cross_origin: list[bool] = field(default_factory=list)
    skills: list[SkillApprovalRequest] = field(default_factory=list)
    executions: list[ExecutionRequest] = field(default_factory=list)
    cross_origin_reads: list[CrossOriginReadRequest] = field(default_factory=list)
    host: Host | None = None
    reads_at_prompt: list[list[str]] = field(default_factory=list)

    async def approve_skill(self, request: SkillApprovalRequest) -> SkillApprovalDecision:
        self.skills.append(request)
        if self.host is not None:
            self.reads_at_prompt.append(list(self.host.client(request.key.origin).reads))
        return SkillApprovalDecision(approved=self.approve, grants=self.grants, remember=self.remember)

    async def approve_execution(self, request: ExecutionRequest) -> bool:
        self.executions.append(request)
        return self.execution.pop(0) if self.execution else False

    async def approve_cross_origin_read(self, request: CrossOriginReadRequest) -> bool:
        self.cross_origin_reads.append(request)
        return self.cross_origin.pop(0) if self.cross_origin else False


# -- servers ---------------------------------------------------------------------------------------------------------


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    """A private copy of examples/skills that a test may change on disk."""
    root = tmp_path / "skills"
    shutil.copytree(EXAMPLE_SKILLS, root)
    return root


@pytest.fixture(scope="module")
def shared_skills(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of examples/skills that no test changes, for the tests that only read it."""
    root = tmp_path_factory.mktemp("shared") / "skills"
    shutil.copytree(EXAMPLE_SKILLS, root)
    return root


@pytest.fixture(scope="module")
def shared_http(shared_skills: Path) -> Iterator[str]:
    """One `skillwire serve --http` of `shared_skills` for the module's read-only tests: its URL."""
    with http_server([shared_skills], "--quiet") as server:
        yield server.url
        server.assert_alive()


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stdio servers are spawned from the repository root (so `-m tests.support.hostile` resolves)."""
    monkeypatch.chdir(REPO_ROOT)


@contextmanager
def skillwire_target(transport: DocsTransport, root: Path) -> Iterator[Target]:
    """`skillwire serve ROOT` as an add_server target: a running HTTP server's URL, a stdio command, or ("memory") the
    server `serve` builds, built here from ROOT as it is now (it does not follow later changes on disk)."""
    if transport == "http":
        with http_server([root], "--quiet") as server:
            yield server.url
    elif transport == "memory":
        yield build_server(SkillsExtension.from_paths([root]))
    else:
        yield serve_command([root], "--quiet")


@asynccontextmanager
async def docs_host(transport: DocsTransport, root: Path, **options: Any) -> AsyncIterator[Host]:
    """A Host with `skillwire serve ROOT` connected as `docs` (a server started or built for this host alone)."""
    with skillwire_target(transport, root) as target:
        async with connected_host(target, **options) as host:
            yield host


@asynccontextmanager
async def connected_host(target: Target, **options: Any) -> AsyncIterator[Host]:
    """A Host with `target` (a URL or a stdio command) connected as `docs`."""
    async with Host(**options) as host:
        await host.add_server("docs", target)
        yield host


@pytest.fixture(params=TRANSPORTS)
def read_only_target(request: pytest.FixtureRequest, shared_skills: Path) -> str | list[str]:
    """The unchanged examples over the parametrized transport: the module's HTTP server, or a stdio command."""
    if request.param == "http":
        url: str = request.getfixturevalue("shared_http")
        return url
    return serve_command([shared_skills], "--quiet")


@asynccontextmanager
async def hostile_host(
    scenario: str,
    transport: HostileTransport = "inprocess",
    label: str = "h",
    server_options: Sequence[str] = (),
    **options: Any,
) -> AsyncIterator[tuple[Host, h.HostileServer | None]]:
    """A Host with the hostile server for `scenario` connected as `label` (the server object when in-process).

    `server_options` are the hostile server's command-line options (a process only: stdio, http).
    """
    if transport == "inprocess":
        server = h.build_hostile_server(scenario)
        async with Host(**options) as host:
            await host.add_server(label, server.server)
            yield host, server
    elif transport == "stdio":
        async with Host(**options) as host:
            argv = hostile_command(scenario, *server_options, "--exit-on-hangup")  # a flood ends with its client
            await host.add_server(label, argv)
            yield host, None
    else:
        with hostile_http(scenario, *server_options) as url:
            async with Host(**options) as host:
                await host.add_server(label, url)
                yield host, None


def approve_in(store: MemoryApprovalStore, host: Host, ref: str) -> SkillKey:
    """Record an approval for `ref`'s current entry, as if the user had said yes earlier."""
    skill = host.registry.resolve(ref)
    assert skill.entry is not None
    store.put(Approval(skill.key, skill.entry.content_set))
    return skill.key


# -- skillwire's own server over stdio and HTTP ----------------------------------------------------------------------


async def test_catalog_lists_every_skill_with_its_origin_and_reads_nothing(read_only_target: str | list[str]) -> None:
    """Spec MUST (Lazy Retrieval): no file is retrieved on connection, on listing, or at approval.
    Spec MUST (Security, origin is visible): every skill is presented with its originating server's label."""
    prompt = ScriptedPrompt()
    async with connected_host(read_only_target, prompt=prompt) as host:
        prompt.host = host
        catalog = host.catalog()
        assert [item.handle for item in catalog] == EXAMPLE_HANDLES
        assert {(item.origin, item.mcp, item.declined) for item in catalog} == {("docs", True, None)}
        assert {item.uri for item in catalog} >= {PDF, CODE_REVIEW, SECURITY_REVIEW}
        await host.refresh("docs")
        assert host.client("docs").reads == []
        await host.load_skill("docs:git-workflow")
        assert prompt.reads_at_prompt == [[]]
        assert host.client("docs").reads == ["skill://git-workflow/SKILL.md"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_spec_example_flow(transport: Transport, skills_dir: Path) -> None:
    """Spec MUST, Example Message Flow end to end: approval bound to the three {uri, digest} pairs; only
    SKILL.md read at load; content origin-tagged; a listed file verified on read; the directory answered from
    the manifest; a file added on disk is an unlisted read (verification failure), never sent; the host refreshes
    with skills/get, revokes the content-bound approval and presents the skill as changed; loading again re-prompts
    with reason "changed" bound to the new set, and only then is credit-note.md read."""
    prompt = ScriptedPrompt()
    async with docs_host(transport, skills_dir, prompt=prompt) as host:
        prompt.host = host
        reads = host.client("docs").reads
        loaded = await host.load_skill("docs:pdf-processing")

        (asked,) = prompt.skills
        assert asked.key == SkillKey("docs", PDF)
        assert asked.reason == "new"
        assert asked.entry.content_set == SPEC_PDF_SET
        assert prompt.reads_at_prompt == [[]]
        assert reads == [PDF]
        assert loaded.key == SkillKey("docs", PDF)
        assert loaded.text.startswith(f'<skill-content origin="mcp:docs" skill="{PDF}" resource="{PDF}"')
        assert "Choose the matching template from `templates/`." in loaded.text
        assert "description:" not in loaded.text

        invoice = await host.read_skill_text("docs:pdf-processing", "templates/invoice.md")
        assert invoice.startswith(f'<skill-content origin="mcp:docs" skill="{PDF}" resource="{INVOICE}"')
        assert "# Invoice\n\nCustomer:\nAmount:\n" in invoice
        assert reads == [PDF, INVOICE]
        names = [(i.name, i.is_directory) for i in await host.list_skill_directory("docs:pdf-processing", "templates")]
        assert names == [("invoice.md", False), ("purchase-order.md", False)]

        (skills_dir / "pdf-processing" / "templates" / "credit-note.md").write_bytes(CREDIT_NOTE_TEXT)
        after = [i.name for i in await host.list_skill_directory("docs:pdf-processing", "templates")]
        assert after == ["invoice.md", "purchase-order.md"], "a change on the server never extends the held manifest"

        with pytest.raises(SkillChanged) as changed:
            await host.read_skill_file("docs:pdf-processing", "templates/credit-note.md")
        assert isinstance(changed.value.__cause__, UnlistedResource)
        assert changed.value.change.added == (CREDIT_NOTE,)
        assert "credit-note.md" in str(changed.value)
        assert CREDIT_NOTE not in reads
        assert host.approvals.get(SkillKey("docs", PDF)) is None
        with pytest.raises(SkillChanged):  # the held entry no longer answers reads until the skill is re-approved
            await host.read_skill_file("docs:pdf-processing", "templates/invoice.md")

        await host.load_skill("docs:pdf-processing")
        again = prompt.skills[-1]
        assert again.reason == "changed"
        assert again.change is not None
        assert again.change.added == (CREDIT_NOTE,)
        assert again.entry.content_set == SPEC_PDF_SET | {SPEC_CREDIT_NOTE}
        text = await host.read_skill_file("docs:pdf-processing", "templates/credit-note.md")
        assert text == CREDIT_NOTE_TEXT
        assert reads[-1] == CREDIT_NOTE


async def test_a_listed_file_the_server_stopped_serving_is_a_changed_skill(skills_dir: Path) -> None:
    """Spec SHOULD (Reading Directories): a manifest file the server no longer serves fails on read, the same
    refresh applies, and the host presents a changed skill rather than a bare read error."""
    async with docs_host("stdio", skills_dir, prompt=ScriptedPrompt()) as host:
        await host.load_skill("docs:pdf-processing")
        (skills_dir / "pdf-processing" / "templates" / "purchase-order.md").unlink()
        with pytest.raises(SkillChanged) as changed:
            await host.read_skill_file("docs:pdf-processing", "templates/purchase-order.md")
        assert changed.value.change.removed == (PURCHASE_ORDER,)


async def test_persisted_approvals_survive_a_new_host_and_are_revoked_when_content_changes(
    skills_dir: Path, tmp_path: Path
) -> None:
    """Spec MUST (Content-bound approval): a persisted approval is bound to every {uri, digest}; when a later
    listing advertises a different set the approval is revoked (on disk too) and the user is asked again."""
    path = tmp_path / "state" / "approvals.json"
    key = SkillKey("docs", PDF)
    first = ScriptedPrompt()
    async with docs_host("memory", skills_dir, prompt=first, approvals=JsonApprovalStore(path)) as host:
        await host.load_skill("docs:pdf-processing")
    assert len(first.skills) == 1
    saved = json.loads(path.read_text(encoding="utf-8"))["approvals"]
    assert [(a["origin"], a["uri"]) for a in saved] == [("docs", PDF)]
    assert {tuple(pair) for pair in saved[0]["content"]} == SPEC_PDF_SET

    second = ScriptedPrompt()
    async with docs_host("memory", skills_dir, prompt=second, approvals=JsonApprovalStore(path)) as host:
        await host.load_skill("docs:pdf-processing")
    assert second.skills == [], "an unchanged skill is covered by the persisted approval"

    (skills_dir / "pdf-processing" / "templates" / "invoice.md").write_bytes(b"# Invoice v2\n")
    third = ScriptedPrompt()
    async with docs_host("memory", skills_dir, prompt=third, approvals=JsonApprovalStore(path)) as host:
        assert JsonApprovalStore(path).get(key) is None, "listing the changed skill revoked the approval on disk"
        await host.load_skill("docs:pdf-processing")
    (asked,) = third.skills
    assert asked.reason == "changed"
    assert asked.change is not None
    assert asked.change.modified == (INVOICE,)


async def test_approving_a_skill_does_not_approve_its_nested_skill(skills_dir: Path) -> None:
    """Spec MUST (Nested Skills): approval is per skill; a nested SKILL.md read as a supporting file is ordinary
    markdown, and activating the nested skill asks for its own, fresh consent."""
    prompt = ScriptedPrompt()
    async with docs_host("memory", skills_dir, prompt=prompt) as host:
        await host.load_skill("docs:code-review")
        nested = await host.read_skill_file("docs:code-review", "security-review/SKILL.md")
        assert nested.startswith(b"---\nname: security-review\n")
        assert [r.key.uri for r in prompt.skills] == [CODE_REVIEW]
        with pytest.raises(NotLoaded):
            host.window("docs:security-review")
        assert host.acting() == (SkillKey("docs", CODE_REVIEW),)

        await host.load_skill("docs:security-review")
        assert [r.key.uri for r in prompt.skills] == [CODE_REVIEW, SECURITY_REVIEW]
        assert prompt.skills[1].reason == "new"


async def test_allowed_tools_is_ignored_unless_granted(skills_dir: Path) -> None:
    """Spec MUST (No implicit permission grants): allowed-tools from an MCP skill is ignored unless the user
    approved that grant for that skill; the prompt shows what the skill asks for."""
    denied = ScriptedPrompt()
    async with docs_host("memory", skills_dir, prompt=denied) as host:
        loaded = await host.load_skill("docs:code-review")
    assert dict(denied.skills[0].requested) == {"allowed-tools": "Read Grep"}
    assert "allowed-tools" not in loaded.frontmatter
    assert loaded.frontmatter["name"] == "code-review"
    assert loaded.grants == frozenset()

    granted = ScriptedPrompt(grants=frozenset({"allowed-tools", "hooks"}))
    async with docs_host("memory", skills_dir, prompt=granted) as host:
        loaded = await host.load_skill("docs:code-review")
        assert host.window("docs:code-review").grants == frozenset({"allowed-tools"})
    assert loaded.frontmatter["allowed-tools"] == "Read Grep"
    assert loaded.grants == frozenset({"allowed-tools"}), "only grants the skill asked for are kept"


async def test_code_execution_is_gated_while_acting(skills_dir: Path) -> None:
    """Spec MUST (No implicit local execution): code-execution tool calls issued while the model acts on an
    MCP-served skill pass the same approval gate, per skill, until the SKILL.md leaves context; a verification
    failure does not end the window."""
    prompt = ScriptedPrompt(execution=[False, True])
    async with docs_host("stdio", skills_dir, prompt=prompt) as host:
        assert await host.approve_execution("bash", {"cmd": "ls"})
        assert prompt.executions == [], "nothing to gate before a skill is loaded"

        await host.load_skill("docs:pdf-processing")
        assert not await host.approve_execution("bash", {"cmd": "python scripts/extract.py"})
        assert await host.approve_execution("bash", {"cmd": "ls"})
        assert [(r.key, r.tool, dict(r.arguments)) for r in prompt.executions] == [
            (SkillKey("docs", PDF), "bash", {"cmd": "python scripts/extract.py"}),
            (SkillKey("docs", PDF), "bash", {"cmd": "ls"}),
        ]

        (skills_dir / "pdf-processing" / "templates" / "credit-note.md").write_bytes(CREDIT_NOTE_TEXT)
        with pytest.raises(SkillChanged):
            await host.read_skill_file("docs:pdf-processing", "templates/credit-note.md")
        assert not await host.approve_execution("bash", {"cmd": "ls"}), "still acting: still gated"
        assert len(prompt.executions) == 3

        host.unload("docs:pdf-processing")
        assert await host.approve_execution("bash", {"cmd": "ls"})
        assert len(prompt.executions) == 3


async def test_the_disk_cache_serves_verified_bytes_and_refetches_tampered_ones(
    skills_dir: Path, tmp_path: Path
) -> None:
    """Spec SHOULD (Lazy Retrieval): a cached file whose digest matches is served without fetching again.
    Spec MUST (Cache integrity): every cached file is re-verified on use; one that no longer matches is fetched
    again and verified. The disk alone: memory, asked first, would answer before the disk is (memory_cache_bytes=0)."""
    cache = SkillCache(tmp_path / "cache")
    async with docs_host("memory", skills_dir, prompt=ScriptedPrompt(), cache=cache, memory_cache_bytes=0) as host:
        reads = host.client("docs").reads
        await host.load_skill("docs:pdf-processing")
        await host.read_skill_file("docs:pdf-processing", "templates/invoice.md")
        assert reads == [PDF, INVOICE]
        cached = cache.path_for("docs", INVOICE)
        assert cached.read_bytes() == b"# Invoice\n\nCustomer:\nAmount:\n"

        host.unload("docs:pdf-processing")
        await host.load_skill("docs:pdf-processing")
        assert await host.read_skill_file("docs:pdf-processing", "templates/invoice.md") == cached.read_bytes()
        assert reads == [PDF, INVOICE], "served from the cache: no new resources/read"

        cached.write_bytes(b"# Invoice\n\nPay to: evil\n")  # same idea as a model-run script editing the cache
        data = await host.read_skill_file("docs:pdf-processing", "templates/invoice.md")
        assert data == b"# Invoice\n\nCustomer:\nAmount:\n"
        assert reads == [PDF, INVOICE, INVOICE], "the tampered copy was refetched"
        assert cached.read_bytes() == data


async def test_a_cache_and_approval_store_set_after_the_host_is_built_are_the_ones_used(
    skills_dir: Path, tmp_path: Path
) -> None:
    """`host.cache` and `host.approvals` are settings: assigned on a running host, the next load and read use them."""
    cache = SkillCache(tmp_path / "cache")
    async with docs_host("memory", skills_dir, prompt=ScriptedPrompt()) as host:
        host.cache = cache
        store = MemoryApprovalStore()
        host.approvals = store
        await host.load_skill("docs:pdf-processing")
        await host.read_skill_file("docs:pdf-processing", "templates/invoice.md")
        assert cache.path_for("docs", INVOICE).read_bytes() == b"# Invoice\n\nCustomer:\nAmount:\n"
        assert host.cache is cache
        assert host.approvals is store


async def test_removing_a_server_deletes_its_cache_and_approvals(skills_dir: Path, tmp_path: Path) -> None:
    """Spec SHOULD (Cache): a removed server's cached content is deleted; skillwire also forgets its approvals,
    its skills and its acting windows."""
    cache = SkillCache(tmp_path / "cache")
    store = JsonApprovalStore(tmp_path / "approvals.json")
    async with docs_host("memory", skills_dir, prompt=ScriptedPrompt(), cache=cache, approvals=store) as host:
        await host.load_skill("docs:pdf-processing")
        await host.read_skill_file("docs:pdf-processing", "templates/invoice.md")
        folder = cache.path_for("docs", INVOICE).parents[2]
        assert folder.is_dir()
        assert cache.origin_of(cache.path_for("docs", INVOICE)) == ("docs", INVOICE)

        await host.remove_server("docs")
        assert not folder.exists()
        assert store.get(SkillKey("docs", PDF)) is None
        assert JsonApprovalStore(tmp_path / "approvals.json").get(SkillKey("docs", PDF)) is None
        assert host.catalog() == ()
        assert host.acting() == ()
        with pytest.raises(UnknownSkill):
            await host.load_skill("docs:pdf-processing")


async def test_the_same_uri_from_two_servers_is_two_skills(
    shared_skills: Path, shared_http: str, tmp_path: Path
) -> None:
    """Spec MUST (Skill URIs): identity is (server label, uri) in the registry, approvals and cache; same-URI
    skills from two servers land at distinct cache paths from which the server is recoverable.
    Spec MUST (Names): a bare name shared across origins resolves only per origin."""
    cache = SkillCache(tmp_path / "cache")
    prompt = ScriptedPrompt()
    async with Host(prompt=prompt, cache=cache) as host:
        await host.add_server("a", build_server(SkillsExtension.from_paths([shared_skills])))
        await host.add_server("b", shared_http)
        pdf = [item for item in host.catalog() if item.uri == PDF]
        assert [(i.handle, i.origin) for i in pdf] == [("a:pdf-processing", "a"), ("b:pdf-processing", "b")]
        assert host.registry.get(SkillKey("a", PDF)) is not None
        assert host.registry.get(SkillKey("b", PDF)) is not None
        with pytest.raises(AmbiguousSkillName) as ambiguous:
            await host.load_skill("pdf-processing")
        assert ambiguous.value.handles == ("a:pdf-processing", "b:pdf-processing")

        for label in ("a", "b"):
            loaded = await host.load_skill(f"{label}:pdf-processing")
            assert loaded.text.startswith(f'<skill-content origin="mcp:{label}"')
            await host.read_skill_file(f"{label}:pdf-processing", "templates/invoice.md")
        assert [r.key for r in prompt.skills] == [SkillKey("a", PDF), SkillKey("b", PDF)]
        paths = {label: cache.path_for(label, INVOICE) for label in ("a", "b")}
        assert paths["a"] != paths["b"]
        for label, path in paths.items():
            assert path.is_file()
            assert cache.origin_of(path) == (label, INVOICE)
        assert host.client("a").reads == [PDF, INVOICE]
        assert host.client("b").reads == [PDF, INVOICE]


async def test_servers_can_be_removed_in_any_order() -> None:
    """skillwire choice: each connection lives in its own task, so removing the first of two servers (and closing
    the host afterwards) works."""
    async with Host() as host:
        await host.add_server("one", h.build_hostile_server("honest").server)
        await host.add_server("two", h.build_hostile_server("cross-origin").server)
        await host.remove_server("one")
        assert [item.handle for item in host.catalog()] == ["two:helper"]
        await host.add_server("one", h.build_hostile_server("honest").server)
    assert host.catalog() != ()


@pytest.mark.parametrize("enabled", [True, False])
async def test_a_listing_leaves_the_cycle_collector_as_it_found_it(enabled: bool) -> None:
    """skillwire choice (issue 13): the collector is paused while a listing becomes the registry, and only then."""
    was_enabled = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        async with Host() as host:
            await host.add_server("one", h.build_hostile_server("honest").server)
            assert gc.isenabled() is enabled
            await host.refresh("one")
            assert gc.isenabled() is enabled
            assert host.catalog() != ()
    finally:
        (gc.enable if was_enabled else gc.disable)()


async def test_a_server_that_cannot_be_reached_is_a_host_error() -> None:
    """skillwire choice: a failed connection is one HostError naming the label, and the label stays free."""
    async with Host() as host:
        with pytest.raises(HostError, match="'gone'"):
            await host.add_server("gone", [sys.executable, "-c", "raise SystemExit(3)"])
        with pytest.raises(HostError):
            host.client("gone")
        with pytest.raises(ValueError, match="reserved"):
            await host.add_server("local", h.build_hostile_server("honest").server)


async def test_a_host_must_be_opened_before_adding_servers() -> None:
    """skillwire choice: connections belong to the host's task group, so `async with Host()` is required."""
    with pytest.raises(HostError, match="async with"):
        await Host().add_server("h", h.build_hostile_server("honest").server)


async def test_a_skill_is_loadable_from_its_uri_alone() -> None:
    """Spec MUST (Listing Skills): an empty listing is no proof of no skills; a skill is loadable given only its
    URI, confirmed with skills/get."""
    server = h.build_hostile_server("honest")
    server.catalog.listed.clear()
    prompt = ScriptedPrompt()
    async with Host(prompt=prompt) as host:
        await host.add_server("h", server.server)
        assert host.catalog() == ()
        loaded = await host.load_skill(f"h:{PDF}")
        assert loaded.key == SkillKey("h", PDF)
        assert server.calls("skills/get") == [{"uri": PDF}]
        assert server.reads() == [PDF]
        assert [item.handle for item in host.catalog()] == ["h:pdf-processing"]
        with pytest.raises(UnknownSkill):
            await host.load_skill("h:skill://chargebacks/SKILL.md")


# -- the hostile server ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["inprocess", "stdio", "http"])
@pytest.mark.usefixtures("in_repo")
async def test_tampered_bytes_are_never_used(transport: HostileTransport) -> None:
    """Spec MUST (Verification on Read): content whose digest differs from the entry's is not used; the host
    refreshes with skills/get and reads nothing else."""
    prompt = ScriptedPrompt()
    async with hostile_host("tampered", transport, prompt=prompt) as (host, server):
        with pytest.raises(DigestMismatch) as mismatch:
            await host.load_skill("h:refund-policy")
        assert mismatch.value.uri == "skill://refund-policy/SKILL.md"
        assert host.client("h").reads == ["skill://refund-policy/SKILL.md"]
        assert host.acting() == ()
        with pytest.raises(NotLoaded):
            await host.read_skill_file("h:refund-policy", "SKILL.md")
        if server is not None:
            assert server.reads() == ["skill://refund-policy/SKILL.md"]
            assert server.calls("skills/get") == [{"uri": "skill://refund-policy/SKILL.md"}]


async def test_a_wrong_size_is_a_verification_failure() -> None:
    """Spec MUST (Resources): a read whose length differs from the entry's size is a verification failure."""
    async with hostile_host("wrong-size", prompt=ScriptedPrompt()) as (host, _):
        with pytest.raises(SizeMismatch) as mismatch:
            await host.load_skill("h:changelog")
    assert (mismatch.value.expected, mismatch.value.actual) == (len(h.WRONG_SIZE_HONEST), len(h.WRONG_SIZE_SERVED))
    assert host.acting() == ()


async def test_frontmatter_that_differs_is_not_loaded() -> None:
    """Spec MUST (Frontmatter Verification): SKILL.md frontmatter is compared field by field with the entry's;
    a discrepancy is a verification failure and the skill is not loaded."""
    async with hostile_host("frontmatter-differs", prompt=ScriptedPrompt()) as (host, server):
        with pytest.raises(FrontmatterMismatch) as mismatch:
            await host.load_skill("h:meeting-notes")
        with pytest.raises(NotLoaded):
            host.window("h:meeting-notes")
    assert set(mismatch.value.fields) >= {"description", "allowed-tools"}
    assert server is not None
    assert server.reads() == ["skill://meeting-notes/SKILL.md"]


async def test_a_file_added_after_listing_needs_re_approval() -> None:
    """Spec MUST (Acting Window; Directory Reads and the Held Entry): a file added after the listing is neither
    surfaced nor read under the held entry; refreshing revokes the approval and the next load re-prompts."""
    prompt = ScriptedPrompt()
    async with hostile_host("file-added", prompt=prompt) as (host, server):
        assert server is not None
        await host.load_skill("h:notes")
        assert await host.read_skill_file("h:notes", "a.md") == h.NOTES_A
        assert [i.name for i in await host.list_skill_directory("h:notes")] == ["SKILL.md", "a.md"]
        with pytest.raises(SkillChanged) as changed:
            await host.read_skill_file("h:notes", "b.md")
        assert changed.value.change.added == ("skill://notes/b.md",)
        assert "skill://notes/b.md" not in server.reads()

        await host.load_skill("h:notes")
        assert [(r.reason, r.change.added if r.change else ()) for r in prompt.skills] == [
            ("new", ()),
            ("changed", ("skill://notes/b.md",)),
        ]
        assert await host.read_skill_file("h:notes", "b.md") == h.NOTES_B


@pytest.mark.parametrize("transport", ["inprocess", "stdio", "http"])
@pytest.mark.usefixtures("in_repo")
async def test_a_read_outside_the_held_manifest_is_never_sent(transport: HostileTransport) -> None:
    """Spec MUST (Acting Window): reads resolve only to URIs the held entry lists; an unlisted file is a
    verification failure and the server never receives that read."""
    async with hostile_host("unlisted-read", transport, prompt=ScriptedPrompt()) as (host, server):
        loaded = await host.load_skill("h:onboarding")
        assert "secrets/extra.md" in loaded.text
        for path in ("secrets/extra.md", "skill://onboarding/secrets/extra.md", "./secrets/../secrets/extra.md"):
            with pytest.raises(UnlistedResource) as unlisted:
                await host.read_skill_file("h:onboarding", path)
            assert not isinstance(unlisted.value, SkillChanged)
            assert unlisted.value.uri == "skill://onboarding/secrets/extra.md"
        with pytest.raises(OutsideSkill):
            await host.read_skill_file("h:onboarding", "../other/SKILL.md")
        assert host.client("h").reads == ["skill://onboarding/SKILL.md"]
        assert host.acting() == (SkillKey("h", "skill://onboarding/SKILL.md"),)
        if server is not None:
            assert server.reads() == ["skill://onboarding/SKILL.md"]


async def test_two_skills_with_one_name_get_distinct_handles() -> None:
    """Spec MUST (Names): same-named entries in one listing are disambiguated, never dropped or preferred; a bare
    name that matches both is refused with every candidate. Spec SHOULD: collisions are surfaced."""
    prompt = ScriptedPrompt()
    async with hostile_host("same-name", prompt=prompt) as (host, _):
        handles = [item.handle for item in host.catalog()]
        assert handles == ["h:billing/refunds", "h:support/refunds"]
        assert host.collisions() == {"refunds": ("h:billing/refunds", "h:support/refunds")}
        with pytest.raises(AmbiguousSkillName) as ambiguous:
            await host.load_skill("refunds")
        assert ambiguous.value.handles == ("h:billing/refunds", "h:support/refunds")
        billing = await host.load_skill("h:billing/refunds")
        support = await host.load_skill("h:support/refunds")
    assert "billing ledger" in billing.text
    assert "Apologise first." in support.text
    assert [r.key.uri for r in prompt.skills] == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://acme/support/refunds/SKILL.md",
    ]


async def test_an_mcp_skill_never_shadows_a_local_one() -> None:
    """Spec MUST (Names; Security, name collisions): an MCP skill named like a filesystem skill is listed beside
    it, not in its place; the bare name is ambiguous; the two are never presented as indistinguishable."""
    local = LocalSkill("git-workflow", "Our real Git conventions", "skills/git-workflow")
    async with hostile_host("local-collision", prompt=ScriptedPrompt(), local_skills=[local]) as (host, _):
        items = {item.handle: item for item in host.catalog()}
        assert set(items) == {"h:git-workflow", "local:git-workflow"}
        assert (items["local:git-workflow"].mcp, items["local:git-workflow"].origin) == (False, "local")
        assert (items["h:git-workflow"].mcp, items["h:git-workflow"].origin) == (True, "h")
        assert host.collisions() == {"git-workflow": ("h:git-workflow", "local:git-workflow")}
        with pytest.raises(AmbiguousSkillName):
            await host.load_skill("git-workflow")
        with pytest.raises(SkillDeclined, match="host's own"):
            await host.load_skill("local:git-workflow")
        loaded = await host.load_skill("h:git-workflow")
    assert loaded.text.startswith('<skill-content origin="mcp:h"')
    assert 'trust="untrusted"' in loaded.text.splitlines()[0]


async def test_a_dynamic_skill_is_declined_by_default() -> None:
    """Spec MAY (Resources): a host may decline a "dynamic" skill; skillwire does by default, and says why."""
    prompt = ScriptedPrompt()
    async with hostile_host("dynamic", prompt=prompt) as (host, server):
        (item,) = host.catalog()
        assert item.declined is not None
        assert "dynamic" in item.declined
        with pytest.raises(SkillDeclined, match="dynamic"):
            await host.load_skill("h:daily")
    assert prompt.skills == []
    assert server is not None
    assert server.reads() == []


async def test_a_dynamic_skill_approval_is_never_persisted(tmp_path: Path) -> None:
    """Spec MUST (Content-bound approval): a persisted approval never covers a "dynamic" skill; skillwire keeps
    its approval for the session only, so a new host asks again."""
    path = tmp_path / "approvals.json"
    prompt = ScriptedPrompt()
    async with hostile_host("dynamic", prompt=prompt, allow_dynamic=True, approvals=JsonApprovalStore(path)) as (
        host,
        _,
    ):
        (item,) = host.catalog()
        assert item.declined is None
        first = await host.load_skill("h:daily")
        second = await host.load_skill("h:daily")
        assert "# Daily report #1" in first.text
        assert "# Daily report #2" in second.text
        assert [r.reason for r in prompt.skills] == ["dynamic"]
        approval = host.approvals.get(SkillKey("h", "skill://reports/daily/SKILL.md"))
        assert approval is not None
        assert approval.session_only
    assert not path.exists() or json.loads(path.read_text(encoding="utf-8"))["approvals"] == []

    again = ScriptedPrompt()
    async with hostile_host("dynamic", prompt=again, allow_dynamic=True, approvals=JsonApprovalStore(path)) as (
        host,
        _,
    ):
        await host.load_skill("h:daily")
    assert [r.reason for r in again.skills] == ["dynamic"]


async def test_over_limit_skills_are_declined_before_any_read() -> None:
    """Spec SHOULD (Limits): a skill over 512 files or 16 MiB is declined from its entry alone, before any read,
    and the user is told why."""
    prompt = ScriptedPrompt()
    async with hostile_host("over-limit", prompt=prompt) as (host, server):
        declined = {item.handle: item.declined for item in host.catalog()}
        assert set(declined) == {"h:too-big", "h:too-many"}
        assert "513 files" in (declined["h:too-many"] or "")
        assert "16 MiB" in (declined["h:too-big"] or "")
        for ref in ("h:too-many", "h:too-big"):
            with pytest.raises(SkillDeclined, match="not loadable"):
                await host.load_skill(ref)
    assert prompt.skills == []
    assert server is not None
    assert server.reads() == []


async def test_invalid_entries_are_reported_and_valid_ones_stay_loadable() -> None:
    """Spec MUST (Resources): an invalid entry is never loaded; skillwire reports each with its reason and keeps
    the valid entries of the same listing usable."""
    async with hostile_host("mixed-invalid", prompt=ScriptedPrompt()) as (host, _):
        assert [item.handle for item in host.catalog()] == ["h:good-one", "h:good-two"]
        problems = {p.uri: p.reason for p in host.problems("h") if isinstance(p, InvalidEntry)}
        assert set(problems) == {
            "skill://no-resources/SKILL.md",
            "skill://misnamed/SKILL.md",
            "skill://bad-digest/SKILL.md",
            "skill://sometimes/SKILL.md",
        }
        assert "resources is missing" in problems["skill://no-resources/SKILL.md"]
        assert "differs from frontmatter.name" in problems["skill://misnamed/SKILL.md"]
        with pytest.raises(InvalidEntry, match="resources is missing"):
            await host.load_skill("h:skill://no-resources/SKILL.md")
        await host.load_skill("h:good-one")
        assert await host.read_skill_file("h:good-one", "ref.md") == h.GOOD_ONE_REF


async def test_cross_origin_reads_need_per_call_approval_naming_both_servers() -> None:
    """Spec MUST (Origin-scoped resource reads): a skill from server A never causes a read on server B unless the
    user approves that one call, asked with both servers named; the default prompt denies."""
    a, b = h.build_hostile_server("cross-origin"), h.build_hostile_server("honest")
    store = MemoryApprovalStore()
    async with Host(approvals=store) as host:  # DenyAll: the non-interactive default
        await host.add_server("a", a.server)
        await host.add_server("b", b.server)
        approve_in(store, host, "a:helper")
        await host.load_skill("a:helper")
        with pytest.raises(ApprovalDenied) as denied:
            await host.read_cross_origin("a:helper", "b", "skill://other-skill/SKILL.md")
        assert "'b'" in str(denied.value)
        assert "'a'" in str(denied.value)
    assert b.reads() == []

    a, b = h.build_hostile_server("cross-origin"), h.build_hostile_server("honest")
    prompt = ScriptedPrompt(cross_origin=[True, False])
    async with Host(prompt=prompt) as host:
        await host.add_server("a", a.server)
        await host.add_server("b", b.server)
        await host.load_skill("a:helper")
        data = await host.read_cross_origin("a:helper", "b", "skill://other-skill/SKILL.md")
        assert data == h.OTHER_SKILL_MD
        with pytest.raises(ApprovalDenied):
            await host.read_cross_origin("a:helper", "b", "skill://other-skill/SKILL.md")
    assert [(r.source, r.target, r.uri) for r in prompt.cross_origin_reads] == [
        (SkillKey("a", "skill://helper/SKILL.md"), "b", "skill://other-skill/SKILL.md")
    ] * 2
    assert b.reads() == ["skill://other-skill/SKILL.md"]
    assert a.reads() == ["skill://helper/SKILL.md"]


async def test_a_refused_approval_loads_nothing() -> None:
    """Spec MAY (Provenance): loading may be gated behind user approval; a refusal reads nothing."""
    async with hostile_host("honest") as (host, server):  # DenyAll
        with pytest.raises(ApprovalDenied):
            await host.load_skill("h:pdf-processing")
    assert server is not None
    assert server.reads() == []


async def test_an_error_in_the_host_body_propagates_as_itself() -> None:
    """skillwire choice: the host's task group does not wrap the caller's exceptions in an exception group."""

    async def run() -> None:
        async with Host() as host:
            await host.add_server("h", h.build_hostile_server("honest").server)
            await host.load_skill("h:nothing-here")

    with pytest.raises(UnknownSkill):
        await run()


async def test_a_relisting_that_changes_a_skill_revokes_its_approval() -> None:
    """Spec MUST (Content-bound approval): a fresh skills/list entry with a different set revokes the approval;
    skillwire also stops reads under the held entry until the skill is approved again (execution stays gated)."""
    server = h.build_hostile_server("honest")
    prompt = ScriptedPrompt()
    async with Host(prompt=prompt) as host:
        await host.add_server("h", server.server)
        await host.load_skill("h:pdf-processing")
        key = SkillKey("h", PDF)
        assert host.approvals.get(key) is not None

        extra = b"# Extra\n"
        (listed,) = (e for e in server.catalog.listed if e["uri"] == PDF)
        listed["resources"].append({"uri": CREDIT_NOTE, "digest": h.digest_of(extra), "size": len(extra)})
        server.catalog.files[CREDIT_NOTE] = extra
        await host.refresh("h")
        assert host.approvals.get(key) is None
        with pytest.raises(SkillChanged) as changed:
            await host.read_skill_file("h:pdf-processing", "templates/invoice.md")
        assert changed.value.change.added == (CREDIT_NOTE,)
        assert host.acting() == (key,)
        assert not await host.approve_execution("bash", {})

        await host.load_skill("h:pdf-processing")
        assert [r.reason for r in prompt.skills] == ["new", "changed"]
        assert await host.read_skill_file("h:pdf-processing", "templates/credit-note.md") == extra
    assert server.reads() == [PDF, CREDIT_NOTE], "SKILL.md kept its digest: loaded again from memory"


# -- what a server may send (issue 9, holes 4 and 5) -----------------------------------------------------------------


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_a_huge_answer_to_a_101_byte_skill_md_is_a_verification_failure(
    transport: HostileTransport, tmp_path: Path
) -> None:
    """Attack: a 64 MiB resources/read answer for a SKILL.md listed at 101 bytes; the load fails as a verification
    failure, cut off at its bound, and nothing is cached or acted on (skillwire choice, issue 9)."""
    cache = SkillCache(tmp_path / "cache")
    flood = ("--flood-bytes", str(64 * 1024 * 1024))
    async with hostile_host("huge-read", transport, server_options=flood, prompt=ScriptedPrompt(), cache=cache) as (
        host,
        _,
    ):
        with anyio.fail_after(20), pytest.raises(ResponseTooLarge) as caught:
            await host.load_skill("h:huge")
        assert caught.value.uri == "skill://huge/SKILL.md"
        assert caught.value.expected == 101
        assert host.acting() == ()
    assert not [path for path in (tmp_path / "cache").rglob("*") if path.is_file()]


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_an_endless_dynamic_skill_md_stops_at_the_per_skill_limit(transport: HostileTransport) -> None:
    """Attack: a "dynamic" skill (no size listed) whose SKILL.md never ends; the per-skill total (the spec's 16 MiB,
    here `max_read_bytes`) bounds the read on the wire, and the load is declined (skillwire choice, issue 9)."""
    limits = ClientLimits(max_read_bytes=1024 * 1024)
    prompt = ScriptedPrompt()
    async with hostile_host("endless-dynamic", transport, prompt=prompt, allow_dynamic=True, limits=limits) as (
        host,
        _,
    ):
        with anyio.fail_after(20), pytest.raises(SkillDeclined, match="per-skill limit of 1,048,576 bytes"):
            await host.load_skill("h:flood")
        assert host.acting() == ()


async def test_an_endless_pager_is_a_public_incomplete_listing_named_by_the_hosts_label(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Attack: a new nextCursor forever; the page limit is a setting and the cut-off is part of `problems()`, naming
    the server by the host's label, never by its self-reported name (skillwire choice, issue 9)."""
    caplog.set_level(logging.INFO, logger="skillwire")
    limits = ClientLimits(max_listing_pages=10)
    async with hostile_host("endless-pager", label="pages", limits=limits) as (host, server):
        assert server is not None
        assert len(server.calls("skills/list")) == 10
        assert len(host.catalog()) == 10
        assert host.problems("pages") == (IncompleteListing("pages", "stopped after 10 pages"),)
        assert str(host.problems("pages")[0]) == (
            "the skill listing of server 'pages' is incomplete: stopped after 10 pages"
        )
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "'pages'" in logged
    assert "hostile-endless-pager" not in logged
