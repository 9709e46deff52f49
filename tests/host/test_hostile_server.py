"""The hostile test server serves exactly what each scenario claims, so tests built on it can be trusted.

Each scenario is driven in-process through the SDK client (`mcp.Client(server)`), and once
over real stdio and streamable HTTP via `python -m tests.support.hostile`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from skillwire.core.errors import DigestMismatch, FrontmatterMismatch, InvalidEntry, SizeMismatch
from skillwire.core.hosting.entry import SkillEntry, parse_entry
from skillwire.core.hosting.verify import verify_bytes, verify_frontmatter
from tests.support import hostile as h
from tests.support.flood import hostile_http
from tests.support.servers import (
    EXTENSION_ID,
    INVALID_PARAMS,
    REPO_ROOT,
    directory_read,
    resources_list,
    resources_read,
    skills_get,
    skills_list,
    wire,
)
from tests.support.spec_example import SPEC_RESOURCES

pytestmark = pytest.mark.anyio

START_TIMEOUT_S = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def connected(scenario: str, *, legacy: bool = False) -> AsyncIterator[tuple[h.HostileServer, Client]]:
    server = h.build_hostile_server(scenario)
    async with Client(server.server, cache=None, mode="legacy" if legacy else "auto") as client:
        yield server, client


async def entries(client: Client) -> list[SkillEntry]:
    return [parse_entry(raw) for raw in (await skills_list(client)).skills]


async def read(client: Client, uri: str) -> bytes:
    contents = (await resources_read(client, uri)).contents
    assert len(contents) == 1
    assert contents[0]["uri"] == uri
    text: str = contents[0]["text"]
    return text.encode("utf-8")


async def invalid_params(call: Any) -> MCPError:
    with pytest.raises(MCPError) as info:
        await call
    assert info.value.error.code == INVALID_PARAMS
    return info.value


# -- every scenario ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", h.SCENARIOS)
async def test_every_scenario_declares_the_extension_with_directory_read(scenario: str) -> None:
    """Spec MUST: a server declaring the extension declares the resources capability and implements its methods."""
    async with connected(scenario) as (_, client):
        discovered = client.session.discover_result
        assert discovered is not None
        assert discovered.capabilities.extensions == {EXTENSION_ID: {"directoryRead": True}}
        assert discovered.capabilities.resources is not None
        first = await skills_list(client)
        assert first.skills or (scenario == "empty-pager" and first.next_cursor == "page-2")


@pytest.mark.parametrize(
    ("scenario", "skills", "children"),
    [
        ("endless-pager", ["page-1", "page-2", "page-3"], ["part-1.md", "part-2.md", "part-3.md"]),
        ("empty-pager", [], []),
        ("repeating-pager", ["page-1"] * 3, ["SKILL.md"] * 3),
    ],
)
async def test_the_pagers_give_a_fresh_cursor_forever_and_list_what_they_claim(
    scenario: str, skills: list[str], children: list[str]
) -> None:
    """skillwire choice (test support): each pager's first three skills/list and directory pages hold a new item
    each, nothing, or the same item, and always a fresh cursor."""
    async with connected(scenario) as (_, client):
        listed, cursors, cursor = [], [], None
        for _ in range(3):
            page = await skills_list(client, cursor)
            listed += [parse_entry(raw).uri.split("/")[2] for raw in page.skills]
            cursor = page.next_cursor
            cursors.append(cursor)
        assert listed == skills
        assert cursors == ["page-2", "page-3", "page-4"]
        names, cursor = [], None
        for _ in range(3):
            directory = await directory_read(client, "skill://page-1", cursor)
            names += [child["uri"].rsplit("/", 1)[1] for child in directory.resources]
            cursor = directory.next_cursor
        assert names == children
        assert cursor == "page-4"


async def test_the_declaration_survives_the_handshake_era() -> None:
    """skillwire choice: the hostile server also speaks the initialize handshake, declaring the extension there."""
    async with connected("honest", legacy=True) as (_, client):
        initialized = client.session.initialize_result
        assert initialized is not None
        assert initialized.capabilities.extensions == {EXTENSION_ID: {"directoryRead": True}}
        listing = wire(await skills_list(client))
        assert "ttlMs" not in listing


async def test_modern_results_carry_cache_hints() -> None:
    """Spec MUST: skills/list, skills/get and resources/read results carry ttlMs and cacheScope (CacheableResult)."""
    async with connected("honest") as (_, client):
        results = [
            wire(await skills_list(client)),
            wire(await skills_get(client, "skill://other-skill/SKILL.md")),
            wire(await resources_read(client, "skill://other-skill/SKILL.md")),
            wire(await resources_list(client)),
        ]
    for result in results:
        assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 300_000, "public")


async def test_each_server_keeps_its_own_request_log() -> None:
    """skillwire choice: requests are recorded per server object, never in module state; `_meta` is left out."""
    async with connected("honest") as (first, client):
        await skills_get(client, "skill://other-skill/SKILL.md")
        await read(client, "skill://other-skill/references/guide.md")
    second = h.build_hostile_server("honest")
    assert second.requests == []
    assert first.calls("skills/get") == [{"uri": "skill://other-skill/SKILL.md"}]
    assert first.reads() == ["skill://other-skill/references/guide.md"]


def test_an_unknown_scenario_is_refused() -> None:
    """skillwire choice: a typo in a scenario name fails loudly with the list of scenarios."""
    with pytest.raises(ValueError, match="honest"):
        h.build_hostile_server("honset")


# -- integrity scenarios ----------------------------------------------------------------------------------------------


async def test_tampered_serves_same_size_bytes_that_miss_the_digest() -> None:
    """Fixture check: `tampered` lists the honest digest and serves other bytes of the same length."""
    async with connected("tampered") as (_, client):
        (entry,) = await entries(client)
        record = entry.skill_md
        assert record is not None
        data = await read(client, entry.uri)
    assert data == h.TAMPERED_SERVED
    assert len(data) == record.size
    assert record.digest == h.digest_of(h.TAMPERED_HONEST)
    with pytest.raises(DigestMismatch):
        verify_bytes(record, data)


async def test_wrong_size_serves_extra_bytes() -> None:
    """Fixture check: `wrong-size` serves the honest bytes plus an appended instruction."""
    async with connected("wrong-size") as (_, client):
        (entry,) = await entries(client)
        record = entry.skill_md
        assert record is not None
        data = await read(client, entry.uri)
    assert data.startswith(h.WRONG_SIZE_HONEST)
    assert len(data) > record.size == len(h.WRONG_SIZE_HONEST)
    with pytest.raises(SizeMismatch):
        verify_bytes(record, data)


async def test_frontmatter_differs_serves_verified_bytes_with_other_frontmatter() -> None:
    """Fixture check: `frontmatter-differs` passes size and digest, and fails only the frontmatter comparison."""
    async with connected("frontmatter-differs") as (_, client):
        (entry,) = await entries(client)
        record = entry.skill_md
        assert record is not None
        data = await read(client, entry.uri)
    verify_bytes(record, data)
    with pytest.raises(FrontmatterMismatch) as info:
        verify_frontmatter(entry, data)
    assert info.value.fields == ("description", "allowed-tools")


async def test_file_added_shows_b_md_after_the_listing() -> None:
    """Fixture check: `file-added` lists SKILL.md and a.md; skills/get and directory reads then also show b.md."""
    async with connected("file-added") as (_, client):
        (listed,) = await entries(client)
        fresh = parse_entry((await skills_get(client, listed.uri)).skill)
        children = (await directory_read(client, "skill://notes")).resources
        b_md = await read(client, "skill://notes/b.md")
    assert {u for u, _ in listed.content_set} == {"skill://notes/SKILL.md", "skill://notes/a.md"}
    assert {u for u, _ in fresh.content_set} == {"skill://notes/SKILL.md", "skill://notes/a.md", "skill://notes/b.md"}
    assert [c["name"] for c in children] == ["SKILL.md", "a.md", "b.md"]
    record = fresh.resource("skill://notes/b.md")
    assert record is not None
    verify_bytes(record, b_md)


async def test_unlisted_read_points_at_a_readable_unlisted_file() -> None:
    """Fixture check: `unlisted-read` tells the model to read secrets/extra.md, which is served but not listed."""
    async with connected("unlisted-read") as (_, client):
        (entry,) = await entries(client)
        skill_md = await read(client, entry.uri)
        secret = await read(client, "skill://onboarding/secrets/extra.md")
        root = (await directory_read(client, "skill://onboarding")).resources
    assert b"secrets/extra.md" in skill_md
    assert entry.resource("skill://onboarding/secrets/extra.md") is None
    assert secret == h.UNLISTED_SECRET
    assert {c["name"]: c["mimeType"] for c in root} == {"SKILL.md": "text/markdown", "secrets": "inode/directory"}


# -- naming scenarios -------------------------------------------------------------------------------------------------


async def test_same_name_lists_two_refunds_skills() -> None:
    """Fixture check: `same-name` publishes two valid skills named refunds at different paths."""
    async with connected("same-name") as (_, client):
        listed = await entries(client)
        data = [await read(client, e.uri) for e in listed]
    assert [(e.name, e.uri) for e in listed] == [
        ("refunds", "skill://acme/billing/refunds/SKILL.md"),
        ("refunds", "skill://acme/support/refunds/SKILL.md"),
    ]
    assert data == [h.BILLING_REFUNDS_MD, h.SUPPORT_REFUNDS_MD]


async def test_local_collision_lists_git_workflow() -> None:
    """Fixture check: `local-collision` publishes a valid skill named like a popular local one."""
    async with connected("local-collision") as (_, client):
        (entry,) = await entries(client)
        data = await read(client, entry.uri)
    assert entry.name == "git-workflow"
    record = entry.skill_md
    assert record is not None
    verify_bytes(record, data)
    verify_frontmatter(entry, data)


async def test_cross_origin_points_at_a_skill_only_the_other_server_serves() -> None:
    """Fixture check: `cross-origin` names skill://other-skill/SKILL.md, which it does not serve and `honest` does."""
    async with connected("cross-origin") as (_, client):
        (entry,) = await entries(client)
        assert b"skill://other-skill/SKILL.md" in await read(client, entry.uri)
        await invalid_params(resources_read(client, "skill://other-skill/SKILL.md"))
    async with connected("honest") as (_, other):
        assert await read(other, "skill://other-skill/SKILL.md") == h.OTHER_SKILL_MD


# -- entry-shape scenarios --------------------------------------------------------------------------------------------


async def test_dynamic_serves_different_bytes_on_every_read() -> None:
    """Fixture check: `dynamic` is "dynamic" in skills/list and skills/get; each read is new, frontmatter stays."""
    async with connected("dynamic") as (server, client):
        (entry,) = await entries(client)
        fresh = parse_entry((await skills_get(client, entry.uri)).skill)
        first, second = await read(client, entry.uri), await read(client, entry.uri)
    assert entry.is_dynamic
    assert fresh.is_dynamic
    assert (first, second) == (h.daily_md(1), h.daily_md(2))
    for data in (first, second):
        verify_frontmatter(entry, data)
    assert server.reads() == [entry.uri, entry.uri]


async def test_over_limit_entries_exceed_the_limits_and_nothing_is_read() -> None:
    """Fixture check: `over-limit` lists 513 files and 16 MiB + 1 byte; listing them reads no file."""
    async with connected("over-limit") as (server, client):
        many, big = await entries(client)
    assert isinstance(many.resources, tuple)
    assert isinstance(big.resources, tuple)
    assert len(many.resources) == 513
    assert sum(r.size for r in big.resources) == 16 * 1024 * 1024 + 1
    assert many.over_limits() is not None
    assert big.over_limits() is not None
    assert server.reads() == []
    for record in (*many.resources[:3], *big.resources):  # the manifest is honest about what would be served
        verify_bytes(record, server.catalog.files[record.uri])


async def test_mixed_invalid_keeps_its_valid_entries_usable() -> None:
    """Fixture check: `mixed-invalid` mixes two valid entries with four that break a distinct entry rule each."""
    async with connected("mixed-invalid") as (_, client):
        raw = (await skills_list(client)).skills
        valid: list[SkillEntry] = []
        reasons: dict[str, str] = {}
        for item in raw:
            try:
                valid.append(parse_entry(item))
            except InvalidEntry as err:
                reasons[item["uri"]] = err.reason
        contents = {
            r.uri: await read(client, r.uri) for e in valid if isinstance(e.resources, tuple) for r in e.resources
        }
    assert [e.name for e in valid] == ["good-one", "good-two"]
    assert set(reasons) == {
        "skill://no-resources/SKILL.md",
        "skill://misnamed/SKILL.md",
        "skill://bad-digest/SKILL.md",
        "skill://sometimes/SKILL.md",
    }
    assert "resources is missing" in reasons["skill://no-resources/SKILL.md"]
    assert "differs from frontmatter.name" in reasons["skill://misnamed/SKILL.md"]
    assert "64 lowercase hex" in reasons["skill://bad-digest/SKILL.md"]
    assert "array or the string 'dynamic'" in reasons["skill://sometimes/SKILL.md"]
    for entry in valid:
        assert isinstance(entry.resources, tuple)
        for record in entry.resources:
            verify_bytes(record, contents[record.uri])


# -- the honest server ------------------------------------------------------------------------------------------------


async def test_honest_serves_every_listed_file_as_listed() -> None:
    """Fixture check: `honest` passes every check a host makes: size, digest and frontmatter."""
    async with connected("honest") as (_, client):
        listed = await entries(client)
        for entry in listed:
            assert isinstance(entry.resources, tuple)
            for record in entry.resources:
                verify_bytes(record, await read(client, record.uri))
            verify_frontmatter(entry, await read(client, entry.uri))
    assert [e.name for e in listed] == ["other-skill", "pdf-processing"]


async def test_honest_pdf_processing_is_the_spec_example_byte_for_byte() -> None:
    """Spec example: SKILL.md is 151 bytes with the published digest; the templates are 29 and 35 bytes."""
    async with connected("honest") as (_, client):
        entry = parse_entry((await skills_get(client, "skill://pdf-processing/SKILL.md")).skill)
    assert entry.to_wire()["resources"] == SPEC_RESOURCES


async def test_honest_answers_errors_with_invalid_params() -> None:
    """Spec MUST: unknown skills, unknown resources and non-directories get -32602."""
    async with connected("honest") as (_, client):
        await invalid_params(skills_get(client, "skill://acme/billing/chargebacks/SKILL.md"))
        await invalid_params(resources_read(client, "skill://pdf-processing/templates/credit-note.md"))
        await invalid_params(directory_read(client, "skill://pdf-processing/SKILL.md"))
        templates = (await directory_read(client, "skill://pdf-processing/templates")).resources
    assert [c["name"] for c in templates] == ["invoice.md", "purchase-order.md"]


# -- as a process -----------------------------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


async def test_runs_as_a_process_over_http() -> None:
    """skillwire choice: `python -m tests.support.hostile SCENARIO --http HOST:0` serves over streamable HTTP."""
    with hostile_http("unlisted-read") as url:
        async with Client(url, cache=None) as client:
            (entry,) = await entries(client)
            assert entry.uri == "skill://onboarding/SKILL.md"
            assert await read(client, "skill://onboarding/secrets/extra.md") == h.UNLISTED_SECRET


async def test_runs_as_a_process_over_stdio() -> None:
    """skillwire choice: `python -m tests.support.hostile SCENARIO` serves over stdio."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tests.support.hostile", "tampered"], cwd=REPO_ROOT, env=_env()
    )
    async with Client(stdio_client(params), cache=None) as client:
        (entry,) = await entries(client)
        assert await read(client, entry.uri) == h.TAMPERED_SERVED
