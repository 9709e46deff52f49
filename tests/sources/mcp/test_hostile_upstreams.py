"""A gateway in front of hostile upstreams (issue 21, "Bad input"): each costs only its own skills, each refusal is
named, and nothing unverified is kept or served. The upstreams are `tests/support/hostile.py`'s SDK servers, run
in-process (no process starts); the gateway is the real `McpSource` over a real `GatewayCache` on disk.
"""

from __future__ import annotations

import base64
import logging
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.lowlevel import Server

from skillwire.core.digest import sha256_digest
from skillwire.core.hosting.limits import ClientLimits
from skillwire.server.skill_service import SkillService
from skillwire.service.watch import watch_and_rebuild
from skillwire.sources.composite import CompositeSource, Member
from skillwire.sources.mcp import GatewayCache, McpSource, Settings, Upstream
from skillwire.sources.memory.source import MemorySource
from tests.sources.contract.cases import skill_md
from tests.support import hostile as h

pytestmark = pytest.mark.anyio

LABEL = "mcp in-process"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def gateway(server: Server[Any], root: Path, settings: Settings | None = None, *, name: str = "hostile") -> McpSource:
    """The gateway's source over an in-process upstream, its content kept under `root`."""
    return McpSource(Upstream(server, "in-process", f"in-process:{name}"), cache=GatewayCache(root), settings=settings)


def kept_files(root: Path) -> dict[str, bytes]:
    """Every content file the cache holds, by the digest it is filed under."""
    return {f"sha256:{p.parent.name}{p.name}": p.read_bytes() for p in (root / "content").glob("*/*")}


async def read_all(service: SkillService, uri: str) -> bytes:
    content = (await service.read_resource(uri, modern=True))["contents"][0]
    return base64.b64decode(content["blob"]) if "blob" in content else content["text"].encode()


async def test_a_tampered_byte_refuses_its_skill_only_and_is_never_kept(tmp_path: Path) -> None:
    """One file served with other bytes than listed: its skill is refused (naming the upstream and the file), the
    other skill is served and reads back verified, and the tampered bytes are nowhere in the cache."""
    hostile = h.build_hostile_server("honest")
    tampered = b"# Invoice\nSend the money to account 666.\n"
    hostile.catalog.files["skill://pdf-processing/templates/invoice.md"] = tampered
    source = gateway(hostile.server, tmp_path)
    service = SkillService(source)
    catalog = service.catalog
    assert [s.uri for s in catalog.skills] == ["skill://other-skill/SKILL.md"]
    [refusal] = [r for r in catalog.refusals if r.skill]
    assert refusal.rule == "upstream-mismatch"
    assert refusal.path == f"{LABEL}: skill://pdf-processing/SKILL.md"
    assert LABEL in refusal.message
    assert "skill://pdf-processing/templates/invoice.md" in refusal.message
    listed = service.list_skills(None, modern=True)["skills"]
    for resource in listed[0]["resources"]:
        data = await read_all(service, resource["uri"])
        assert (sha256_digest(data), len(data)) == (resource["digest"], resource["size"])
    kept = kept_files(tmp_path)
    assert tampered not in kept.values()
    assert all(sha256_digest(data) == digest for digest, data in kept.items())


def test_frontmatter_that_differs_from_the_entry_refuses_the_skill(tmp_path: Path) -> None:
    """SKILL.md's bytes match the digest, but its frontmatter is not the entry's: refused as a mismatch."""
    catalog = gateway(h.build_hostile_server("frontmatter-differs").server, tmp_path).scan()
    assert len(catalog) == 0
    [refusal] = catalog.refusals
    assert (refusal.rule, refusal.path) == ("upstream-mismatch", f"{LABEL}: skill://meeting-notes/SKILL.md")
    assert "frontmatter differs" in refusal.message


def test_invalid_entries_are_refused_by_name_and_the_valid_ones_served(tmp_path: Path) -> None:
    """mixed-invalid: an entry without resources, a misnamed one, a bad digest, a bad resources value, each
    refused by its uri; the two good skills are served with their files."""
    catalog = gateway(h.build_hostile_server("mixed-invalid").server, tmp_path).scan()
    assert [s.uri for s in catalog.skills] == ["skill://good-one/SKILL.md", "skill://good-two/SKILL.md"]
    invalid = sorted(r.path for r in catalog.refusals if r.rule == "upstream-entry-invalid")
    assert invalid == [
        f"{LABEL}: skill://{name}/SKILL.md" for name in ("bad-digest", "misnamed", "no-resources", "sometimes")
    ]


def test_a_dynamic_skill_is_refused_and_a_skill_over_the_limits_is_never_fetched(tmp_path: Path) -> None:
    """Nothing binds a dynamic skill's bytes: refused. A skill over 512 files or 16 MiB is refused from its entry
    alone, before any read."""
    dynamic = gateway(h.build_hostile_server("dynamic").server, tmp_path / "a").scan()
    assert [(r.rule, r.path) for r in dynamic.refusals] == [
        ("upstream-dynamic", f"{LABEL}: skill://reports/daily/SKILL.md")
    ]
    over = h.build_hostile_server("over-limit")
    catalog = gateway(over.server, tmp_path / "b").scan()
    assert sorted(r.rule for r in catalog.refusals) == ["limit-files", "limit-size"]
    assert over.reads() == []


def test_an_endless_pager_costs_only_its_own_skills(tmp_path: Path) -> None:
    """A listing that never ends is cut off by the client's limits: that upstream serves nothing (it has no
    verified state yet) and says why, beside a source that is served as usual."""
    limits = ClientLimits(max_listing_pages=20, max_stalled_seconds=2, max_listing_seconds=5)
    pager = gateway(h.build_hostile_server("endless-pager").server, tmp_path, Settings(limits=limits))
    local = MemorySource({"notes/SKILL.md": skill_md("notes")})
    catalog = CompositeSource([Member(local), Member(pager, ("vendor",))]).scan()
    assert [s.uri for s in catalog.skills] == ["skill://notes/SKILL.md"]
    [said] = catalog.refusals
    assert (said.rule, said.skill, said.path) == ("upstream-unavailable", False, LABEL)
    assert "stopped early" in said.message
    assert pager.health.stale


def test_an_upstream_that_hangs_is_given_up_in_bounded_time(tmp_path: Path) -> None:
    """Every page waits 30 s: the refresh stops at its own deadline, not the upstream's."""
    slow = h.build_hostile_server("honest", page_delay=30)
    source = gateway(slow.server, tmp_path, Settings(refresh_timeout_s=1))
    started = time.monotonic()
    catalog = source.scan()
    assert time.monotonic() - started < 10
    assert len(catalog) == 0
    assert "no complete answer within 1 s" in catalog.refusals[0].message


def test_an_unreadable_new_version_keeps_the_last_verified_one_and_a_mismatch_does_not(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """After a good refresh, the upstream changes both skills: one's new file cannot be read at all (an error
    answer), the other's is served with bytes its manifest does not list. The first keeps its verified version,
    said in the log; the second is refused, never served old or new."""
    upstream = h.build_hostile_server("honest")
    source = gateway(upstream.server, tmp_path)
    first = source.scan()
    assert len(first) == 2
    before = first.skill("skill://other-skill/SKILL.md")
    edited = h.PDF_MD.replace(b"Choose", b"Pick")
    for listed in upstream.catalog.listed:
        if listed["uri"] == "skill://other-skill/SKILL.md":
            changed = {"SKILL.md": h.OTHER_SKILL_MD, "references/guide.md": h.OTHER_SKILL_GUIDE, "new.md": b"new\n"}
            listed["resources"] = h.manifest("skill://other-skill", changed)  # new.md: an error answer
        else:
            listed["resources"][0] = h.manifest("skill://pdf-processing", {"SKILL.md": edited})[0]
    upstream.catalog.files["skill://pdf-processing/SKILL.md"] = edited.replace(b"Pick", b"Kcip")
    with caplog.at_level(logging.WARNING, logger="skillwire.sources.mcp.source"):
        second = source.scan()
    assert [s.uri for s in second.skills] == ["skill://other-skill/SKILL.md"]
    assert second.skill("skill://other-skill/SKILL.md") == before
    assert "skill://other-skill/SKILL.md could not be read" in caplog.text
    assert [(r.rule, r.path) for r in second.refusals] == [
        ("upstream-mismatch", f"{LABEL}: skill://pdf-processing/SKILL.md")
    ]


async def test_a_tampered_cache_file_is_deleted_and_fetched_again(tmp_path: Path) -> None:
    """Someone rewrites a kept file: the next read finds it is not what was kept, deletes it, and the server's
    rebuild fetches it from the upstream again; the reader gets the upstream's bytes."""
    upstream = h.build_hostile_server("honest")
    service = SkillService(gateway(upstream.server, tmp_path))
    digest = h.digest_of(h.OTHER_SKILL_GUIDE)
    path = tmp_path / "content" / digest[7:9] / digest[9:]
    path.write_bytes(b"# Guide\n"[::-1])  # the same size, other bytes
    data = await read_all(service, "skill://other-skill/references/guide.md")
    assert data == h.OTHER_SKILL_GUIDE
    assert upstream.reads().count("skill://other-skill/references/guide.md") == 2
    assert path.read_bytes() == h.OTHER_SKILL_GUIDE


def test_content_no_state_needs_is_evicted_and_the_byte_cap_refuses_what_does_not_fit(tmp_path: Path) -> None:
    """A skill gone upstream takes its content with it at the next refresh; under a cap too small for a skill's
    files the skill is refused (`gateway-cache-full`) and the cap is never passed."""
    upstream = h.build_hostile_server("honest")
    source = gateway(upstream.server, tmp_path)
    assert len(source.scan()) == 2
    pdf = h.digest_of(h.PDF_INVOICE)
    assert pdf in kept_files(tmp_path)
    upstream.catalog.listed[:] = [e for e in upstream.catalog.listed if "pdf-processing" not in e["uri"]]
    assert len(source.scan()) == 1
    assert pdf not in kept_files(tmp_path)
    assert set(kept_files(tmp_path)) == {h.digest_of(h.OTHER_SKILL_MD), h.digest_of(h.OTHER_SKILL_GUIDE)}

    small = GatewayCache(tmp_path / "small", max_bytes=len(h.OTHER_SKILL_MD) + len(h.OTHER_SKILL_GUIDE))
    capped = McpSource(Upstream(h.build_hostile_server("honest").server, "in-process", "x"), cache=small)
    catalog = capped.scan()
    assert [s.uri for s in catalog.skills] == ["skill://other-skill/SKILL.md"]
    assert [r.rule for r in catalog.refusals] == ["gateway-cache-full"]
    assert small.used_bytes <= small.max_bytes
    assert sum(len(d) for d in kept_files(tmp_path / "small").values()) <= small.max_bytes


def test_content_already_kept_is_not_fetched_again(tmp_path: Path) -> None:
    """A digest names its bytes: a second refresh, or a second upstream serving the same files, reads nothing."""
    first = h.build_hostile_server("honest")
    gateway(first.server, tmp_path, name="one").scan()
    assert len(first.reads()) == 5
    again = h.build_hostile_server("honest")
    assert len(gateway(again.server, tmp_path, name="two").scan()) == 2
    assert again.reads() == []


async def test_gateways_restored_in_a_composite_are_refreshed_once_watching_starts(tmp_path: Path) -> None:
    """A restart beside another source serves the kept state at once; the watcher then refreshes the gateway (it
    cannot watch, so the composite rescans it once, in the background) and the service is verified."""
    upstream = h.build_hostile_server("honest")
    gateway(upstream.server, tmp_path).scan()
    upstream.catalog.listed[:] = [e for e in upstream.catalog.listed if "pdf-processing" not in e["uri"]]
    local = MemorySource({"notes/SKILL.md": skill_md("notes")})
    service = SkillService(CompositeSource([Member(gateway(upstream.server, tmp_path), ("vendor",)), Member(local)]))
    assert service.restored
    assert not service.stats.verified
    assert len(service.catalog) == 3
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            await tasks.start(lambda task_status: watch_and_rebuild(service, task_status=task_status))
            while not service.stats.verified:
                await anyio.sleep(0.05)
            tasks.cancel_scope.cancel()
    assert [s.uri for s in service.catalog.skills] == ["skill://notes/SKILL.md", "skill://vendor/other-skill/SKILL.md"]
