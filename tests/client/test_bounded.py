"""SkillsClient against the hostile server's floods, over real HTTP and stdio: what a server sends is bounded.

skillwire choices (issue 9, hole 4): a resources/read answer may take at most the listed size grown
by its worst encoding plus an envelope, and is cut off while it arrives (ResponseTooLarge, a
VerificationError); listings stop at their page, entry and byte caps and say they are incomplete
(hole 5). The connection stays usable after a cut-off answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Literal

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, PARSE_ERROR

from skillwire.client import SkillsClient
from skillwire.core.errors import RequestFailed, ResponseTooLarge, VerificationError
from skillwire.core.hosting.limits import DEFAULT_LIMITS, ClientLimits
from tests.support import hostile as h
from tests.support.flood import hostile_command, hostile_http

pytestmark = pytest.mark.anyio

Wire = Literal["http", "stdio"]
WIRES: tuple[Wire, ...] = ("http", "stdio")
MIB = 1024 * 1024
FREEZE_TIMEOUT_S = 20.0
HUGE_URI = "skill://huge/SKILL.md"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def endless_read_url() -> Iterator[str]:
    """One `endless-read` server over HTTP for the module: it answers every read alike, whoever asked before."""
    with hostile_http("endless-read") as url:
        yield url


@asynccontextmanager
async def hostile_client(
    wire: Wire, scenario: str, *options: str, limits: ClientLimits = DEFAULT_LIMITS, url: str | None = None
) -> AsyncIterator[SkillsClient]:
    """A SkillsClient connected to the hostile server for `scenario`, run as a real process over `wire` (over HTTP,
    the running one at `url` if given)."""
    if wire == "stdio":
        argv = hostile_command(scenario, *options, "--exit-on-hangup")  # a flood ends with its client, not 2 s later
        async with SkillsClient.connect(argv, limits=limits) as client:
            yield client
    elif url is not None:
        async with SkillsClient.connect(url, limits=limits) as client:
            yield client
    else:
        with hostile_http(scenario, *options) as started:
            async with SkillsClient.connect(started, limits=limits) as client:
                yield client


@pytest.mark.parametrize("wire", WIRES)
async def test_a_huge_answer_to_a_101_byte_file_is_cut_off_and_the_connection_survives(wire: Wire) -> None:
    """Attack: a 64 MiB resources/read answer for an entry listing 101 bytes; the read stops at its bound."""
    with anyio.fail_after(FREEZE_TIMEOUT_S):
        async with hostile_client(wire, "huge-read", "--flood-bytes", str(64 * MIB)) as client:
            (entry,) = (await client.list_entries()).entries
            assert entry.skill_md is not None
            assert entry.skill_md.size == 101
            with pytest.raises(ResponseTooLarge) as caught:
                await client.read(HUGE_URI, size=101)
            assert isinstance(caught.value, VerificationError)
            assert caught.value.uri == HUGE_URI
            assert caught.value.expected == 101
            assert caught.value.limit == DEFAULT_LIMITS.read_bound(101) < 100 * 1024
            # The same connection still answers (over stdio, after the rest of the flood was skipped).
            assert (await client.get_entry(HUGE_URI)).uri == HUGE_URI


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_huge_answer_in_an_sse_stream_is_cut_off(mode: str) -> None:
    """Attack: the 64 MiB answer as one server-sent event (both eras); the SSE path is bounded the same way."""
    with anyio.fail_after(FREEZE_TIMEOUT_S), hostile_http("huge-read", "--flood-bytes", str(64 * MIB), "--sse") as url:
        async with SkillsClient.connect(url, mode=mode) as client:
            with pytest.raises(ResponseTooLarge):
                await client.read(HUGE_URI, size=101)
            assert (await client.get_entry(HUGE_URI)).uri == HUGE_URI


async def test_a_gzip_bomb_is_never_inflated() -> None:
    """Attack: a listing page of 256 MiB sent gzipped (about 256 KB on the wire) to a client that asked for identity;
    the body is counted and parsed as sent, so it fails to parse instead of inflating past every bound."""
    flood = ("--flood-bytes", str(256 * MIB), "--gzip")
    with anyio.fail_after(FREEZE_TIMEOUT_S), hostile_http("huge-listing", *flood) as url:
        async with SkillsClient.connect(url) as client:
            with pytest.raises(RequestFailed) as caught:
                await client.list_entries()
    assert (caught.value.method, caught.value.code) == ("skills/list", PARSE_ERROR)
    assert caught.value.message.startswith("Failed to parse JSON response")  # the SDK's words: the body was gzip
    assert isinstance(caught.value.__cause__, MCPError)


@pytest.mark.parametrize("wire", WIRES)
async def test_an_endless_answer_is_cut_off_instead_of_exhausting_memory(
    wire: Wire, request: pytest.FixtureRequest
) -> None:
    """Attack: a resources/read answer that never ends (it hit MemoryError in 7 s); the read stops at its bound."""
    url = request.getfixturevalue("endless_read_url") if wire == "http" else None
    with anyio.fail_after(FREEZE_TIMEOUT_S):
        async with hostile_client(wire, "endless-read", url=url) as client:
            with pytest.raises(ResponseTooLarge):
                await client.read(HUGE_URI, size=101)
            if wire == "http":
                assert (await client.get_entry(HUGE_URI)).uri == HUGE_URI  # one response failed, not the connection
            else:
                # Nothing could follow a stdout line that never ends: the connection ends instead of stalling
                # every later request until its timeout.
                with pytest.raises(RequestFailed) as closed:
                    await client.get_entry(HUGE_URI)
                assert (closed.value.method, closed.value.code, closed.value.message) == (
                    "skills/get",
                    CONNECTION_CLOSED,
                    "Connection closed",
                )


async def test_a_read_with_no_listed_size_is_bounded_by_max_read_bytes(endless_read_url: str) -> None:
    """Attack: a flood answering a read whose size no entry lists (dynamic, cross-origin); max_read_bytes bounds it."""
    limits = ClientLimits(max_read_bytes=1024)
    with anyio.fail_after(FREEZE_TIMEOUT_S):
        async with hostile_client("http", "endless-read", limits=limits, url=endless_read_url) as client:
            with pytest.raises(ResponseTooLarge) as caught:
                await client.read(HUGE_URI)
    assert caught.value.expected is None
    assert caught.value.limit == limits.read_bound(None)


@pytest.mark.parametrize("wire", WIRES)
async def test_a_huge_listing_page_is_cut_off_and_the_listing_marked_incomplete(wire: Wire) -> None:
    """Attack: a skills/list page padded to 8 MiB; past max_response_bytes the page is cut off, the listing partial."""
    limits = ClientLimits(max_response_bytes=MIB)
    with anyio.fail_after(FREEZE_TIMEOUT_S):
        async with hostile_client(wire, "huge-listing", "--flood-bytes", str(8 * MIB), limits=limits) as client:
            listing = await client.list_entries()
    assert not listing.complete
    assert listing.cutoff == f"page 1 passed {MIB:,} bytes"
    assert listing.entries == ()


async def test_an_endless_pager_stops_at_the_page_limit_setting() -> None:
    """Attack: a new nextCursor on every skills/list page, forever; `max_listing_pages` ends the walk."""
    server = h.build_hostile_server("endless-pager")
    async with SkillsClient.connect(server.server, limits=ClientLimits(max_listing_pages=25)) as client:
        listing = await client.list_entries()
    assert not listing.complete
    assert listing.cutoff == "stopped after 25 pages"
    assert len(listing.entries) == 25
    assert len(server.calls("skills/list")) == 25


async def test_an_endless_pager_stops_at_the_entry_limit() -> None:
    """Attack: a listing that never ends; `max_listing_entries` bounds what is kept, whatever the page count."""
    server = h.build_hostile_server("endless-pager")
    async with SkillsClient.connect(server.server, limits=ClientLimits(max_listing_entries=7)) as client:
        listing = await client.list_entries()
    assert not listing.complete
    assert listing.cutoff == "the listing passed 7 entries"
    assert len(listing.entries) == 7
    assert len(server.calls("skills/list")) == 8


@pytest.mark.parametrize("wire", WIRES)
async def test_an_endless_pager_stops_at_the_listing_byte_limit(wire: Wire) -> None:
    """Attack: small pages forever; `max_listing_bytes` bounds the bytes of the whole walk on the wire."""
    limits = ClientLimits(max_listing_bytes=20_000, max_response_bytes=10_000)
    with anyio.fail_after(FREEZE_TIMEOUT_S):
        async with hostile_client(wire, "endless-pager", limits=limits) as client:
            listing = await client.list_entries()
    assert not listing.complete
    assert listing.cutoff is not None
    assert listing.cutoff.startswith("the listing passed 20,000 bytes in ")
    assert 10 < len(listing.entries) < 100
