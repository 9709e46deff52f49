"""A skills/list walk that makes no progress ends soon (issue 19, hole 8), over real hostile server processes.

skillwire choices: a page "adds" when it lists a valid skill the walk has not seen; `max_stalled_pages` pages in a
row that add nothing, or `max_stalled_seconds` without a page that adds, end the walk as an `IncompleteListing`;
`max_listing_seconds` bounds a walk that keeps adding (slowly) as a whole. A real catalog in small pages still
lists completely. The 10 s bound is the issue's; every other figure is a reason text, not a time.

The hostile servers over HTTP are started once per scenario and options for the module (`hostile_urls`) and shared:
a pager keeps no state (each cursor names its page), so a test only reads from them.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from bench.generate import generate

from skillwire.client import SkillsClient
from skillwire.core.errors import InvalidEntry, ResponseTooLarge, UnexpectedResponse
from skillwire.core.hosting.limits import DEFAULT_LIMITS, ClientLimits
from skillwire.host.host import Host, IncompleteListing
from tests.support.flood import hostile_command, hostile_http
from tests.support.servers import http_server, serve_command

pytestmark = pytest.mark.anyio

Wire = Literal["http", "stdio"]
WIRES: tuple[Wire, ...] = ("http", "stdio")
ISSUE_BOUND_S = 10.0  # the issue's bound for an endless listing that adds nothing
HARNESS_TIMEOUT_S = 30.0  # a walk still running then has failed (before the fix it ran ~110 s): stop waiting
SERVER_LATENCY = ("--page-delay", "0.01")  # each page 10 ms away, as a server across a network would be
SLOW_ADDING = ("--page-delay", "0.1")  # ten pages a second: a walk that keeps adding, slowly
REAL_CATALOG = 400  # skills, in 40 pages of ten: well past the 16 pages in a row that may add nothing


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


HostileUrl = Callable[..., str]


@pytest.fixture(scope="module")
def hostile_urls() -> Iterator[HostileUrl]:
    """`url(scenario, *options)`: the URL of a `hostile SCENARIO OPTIONS --http` process, started on first use and
    shared by the module's tests (each only reads from it); all are stopped when the module ends."""
    with ExitStack() as servers:
        started: dict[tuple[str, ...], str] = {}

        def url(scenario: str, *options: str) -> str:
            key = (scenario, *options)
            if key not in started:
                started[key] = servers.enter_context(hostile_http(scenario, *options))
            return started[key]

        yield url


@asynccontextmanager
async def host_with(
    target: str | list[str], limits: ClientLimits = DEFAULT_LIMITS
) -> AsyncIterator[tuple[Host, float]]:
    """A Host that added the hostile server at `target` (a URL, or a stdio command) as "pages"; add_server's s."""
    async with Host(limits=limits) as host:
        yield host, await _timed_add(host, target)


def _target(wire: Wire, urls: HostileUrl, scenario: str, *options: str) -> str | list[str]:
    """Where the hostile server for `scenario` is: spawned over stdio by the client, or the module's HTTP one."""
    if wire == "stdio":
        return hostile_command(scenario, *options, "--exit-on-hangup")
    return urls(scenario, *options)


async def _timed_add(host: Host, target: str | list[str]) -> float:
    start = time.monotonic()
    with anyio.fail_after(HARNESS_TIMEOUT_S):
        await host.add_server("pages", target)
    return time.monotonic() - start


@pytest.mark.parametrize("wire", WIRES)
async def test_hole_8_an_endless_pager_of_empty_pages_ends_add_server_within_10_s(
    wire: Wire, hostile_urls: HostileUrl
) -> None:
    """Attack (issue 19, hole 8): empty skills/list pages with a fresh cursor each, forever, 10 ms apart; with the
    default limits `add_server` held on for about 110 s (10,000 pages). It ends within the issue's 10 s, as an
    `IncompleteListing` saying why, with the host's label."""
    async with host_with(_target(wire, hostile_urls, "empty-pager", *SERVER_LATENCY)) as (host, seconds):
        assert host.problems("pages") == (IncompleteListing("pages", "16 pages in a row added no skill"),)
        assert host.catalog() == ()
    assert seconds < ISSUE_BOUND_S


async def test_pages_that_repeat_a_listed_skill_add_nothing_and_end_the_listing(hostile_urls: HostileUrl) -> None:
    """Attack: the same skill on every page with a fresh cursor; a repeat adds nothing, so the walk ends after the
    first page and 16 repeats, each repeat dropped as a problem, the first entry kept."""
    async with host_with(hostile_urls("repeating-pager", *SERVER_LATENCY)) as (host, seconds):
        assert [item.handle for item in host.catalog()] == ["pages:page-1"]
        *dropped, incomplete = host.problems("pages")
        assert incomplete == IncompleteListing("pages", "16 pages in a row added no skill")
        repeat = str(InvalidEntry("skill://page-1/SKILL.md", "listed more than once; the first entry is kept"))
        assert [str(problem) for problem in dropped] == [repeat] * 16
    assert seconds < ISSUE_BOUND_S


async def test_slow_pages_that_add_nothing_end_at_the_stall_time() -> None:
    """Attack: empty pages slow enough that 16 of them take longer than the stall time (0.3 s each, stall time 1 s);
    the walk ends when no page has added a skill for `max_stalled_seconds`, whatever the page count."""
    limits = ClientLimits(max_stalled_seconds=1)
    pager = hostile_command("empty-pager", "--page-delay", "0.3", "--exit-on-hangup")
    async with host_with(pager, limits) as (host, _):
        assert host.problems("pages") == (IncompleteListing("pages", "no page added a skill for 1 s"),)


async def test_a_slow_listing_that_keeps_adding_skills_ends_at_the_listing_time(hostile_urls: HostileUrl) -> None:
    """Attack: one new skill per page, each page slow; every page adds, so only `max_listing_seconds` ends the walk,
    keeping what came before."""
    limits = ClientLimits(max_listing_seconds=1)
    async with host_with(hostile_urls("endless-pager", *SLOW_ADDING), limits) as (host, _):
        assert host.problems("pages") == (IncompleteListing("pages", "the listing took more than 1 s"),)
        assert 1 <= len(host.catalog()) <= 10


@pytest.fixture(scope="module")
def real_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """REAL_CATALOG generated skills of one file each, written once for the module (the walks only read them)."""
    root = tmp_path_factory.mktemp("catalog")
    generate(root, skills=REAL_CATALOG, files=1)
    return root


@pytest.mark.parametrize("wire", WIRES)
async def test_a_real_catalog_in_pages_of_ten_still_lists_completely(wire: Wire, real_catalog: Path) -> None:
    """skillwire choice: the progress rules never cut a real catalog: 400 generated skills served by `skillwire
    serve --page-size 10` (40 pages) list completely with the default limits. Forty pages is 2.5 times
    `max_stalled_pages` (16): a walk that counted every page, not the pages that add nothing in a row, would stop
    part way (at 160 skills); here each page adds ten. More pages of the same kind add nothing the rules look at,
    only CPU (2,000 skills in 200 pages, as this test had, cost twice its CPU), and neither size comes near the
    8 s stall time (2,000 listed in about 2 s)."""
    options = ("--page-size", "10", "--no-watch")
    async with Host() as host:
        with anyio.fail_after(HARNESS_TIMEOUT_S):
            if wire == "stdio":
                await host.add_server("big", serve_command([real_catalog], *options))
                listed = len(host.catalog())
            else:
                with http_server([real_catalog], *options) as server:
                    await host.add_server("big", server.url)
                    listed = len(host.catalog())
        assert host.problems("big") == ()
    assert listed == REAL_CATALOG


@pytest.mark.parametrize(
    ("slow", "settings", "reason"),
    [
        (False, {}, "16 pages in a row added no child"),
        (True, {"max_stalled_seconds": 1}, "no page added a child for 1 s"),
    ],
    ids=["fast-http", "slow-stdio"],
)
async def test_a_directory_that_repeats_its_child_forever_is_refused_once_it_stops_adding(
    hostile_urls: HostileUrl, slow: bool, settings: dict[str, Any], reason: str
) -> None:
    """Attack: resources/directory/read pages that list the same child again with a fresh cursor, fast (10 ms a page,
    from the module's HTTP server) or slow (0.3 s a page, spawned over stdio) (100 pages of up to a request timeout
    each were followed); the same progress rules refuse the directory as a whole."""
    if slow:
        target: str | list[str] = hostile_command("repeating-pager", "--page-delay", "0.3", "--exit-on-hangup")
    else:
        target = hostile_urls("repeating-pager", *SERVER_LATENCY)
    with anyio.fail_after(HARNESS_TIMEOUT_S):
        async with SkillsClient.connect(target, limits=ClientLimits(**settings)) as client:
            with pytest.raises(UnexpectedResponse) as caught:
                await client.read_directory("skill://page-1")
    assert caught.value.uri == "skill://page-1"
    assert str(caught.value).endswith(f"paging stopped: {reason}")


async def test_a_directory_that_adds_a_child_a_page_forever_is_bounded_by_the_listing_bytes(
    hostile_urls: HostileUrl,
) -> None:
    """Attack: directory pages that each add a new child, forever (from the module's slow endless pager over HTTP);
    they keep adding, so the bytes of the whole walk (`max_listing_bytes`, as for skills/list) end it, refused as a
    whole."""
    limits = ClientLimits(max_listing_bytes=4_000, max_response_bytes=1_000)
    with anyio.fail_after(HARNESS_TIMEOUT_S):
        async with SkillsClient.connect(hostile_urls("endless-pager", *SLOW_ADDING), limits=limits) as client:
            with pytest.raises(ResponseTooLarge) as caught:
                await client.read_directory("skill://page-1")
    assert caught.value.uri == "skill://page-1"
    assert caught.value.limit < 1_000
