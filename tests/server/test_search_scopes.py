"""`ScopedSearch`: one ranking per distinct scope for `search_skills`, bounded whatever callers do, built in steps."""

from __future__ import annotations

import anyio

from skillwire.core.scopes import Caller, Visibility, parse_policy
from skillwire.core.search import Document, SearchIndex, SearchView
from skillwire.server.search_scopes import MAX_VIEWS, VIEW_CATALOGS, ScopedSearch

TEAMS = 100


def index() -> SearchIndex:
    """Five skills in each of TEAMS teams, all saying "deploy"."""
    return SearchIndex(
        Document(f"skill://team-{t}/s{i}/SKILL.md", f"s{i}", f"deploy the service of team {t}")
        for t in range(TEAMS)
        for i in range(5)
    )


def scopes_of_many_combinations() -> list[Visibility]:
    """What callers holding tokens with ever other scope combinations see: one grant per scope, callers with 1-3."""
    grants = "".join(f'[[grant]]\nscope = "s{t}"\nskills = ["team-{t}/**"]\n' for t in range(TEAMS))
    policy = parse_policy(grants, origin="scopes.toml")
    callers = [
        Caller(subject="x", scopes=frozenset(f"s{t}" for t in range(first, first + width)))
        for first in range(0, TEAMS - 3)
        for width in (1, 2, 3)
    ]
    return [policy.visibility(caller) for caller in callers]


def test_distinct_scopes_never_grow_the_views_past_their_bounds() -> None:
    """skillwire choice (issue 19): ~300 distinct scope combinations leave at most MAX_VIEWS views holding at most
    VIEW_CATALOGS catalogs' worth of skills, and each caller is still answered over its own skills only."""
    scoped = ScopedSearch(index())

    async def run() -> None:
        for scope in scopes_of_many_combinations():
            ranking = await scoped.ranking_for(scope)
            found = [hit.key for hit in ranking.search("deploy service", 50)]
            assert found, scope
            assert all(scope.allows_uri(str(key)) for key in found)
            assert len(scoped) <= MAX_VIEWS
            assert scoped.held <= VIEW_CATALOGS * len(scoped.index)

    anyio.run(run)
    assert len(scoped) == MAX_VIEWS  # the bound was reached, so it was the bound that held


def test_the_skills_views_hold_are_bounded_even_when_each_view_sees_most_of_the_catalog() -> None:
    """Views of nearly the whole catalog: evicted by the skills they hold long before their count bound."""
    scoped = ScopedSearch(index())
    scopes = [Visibility([f"team-{t}/**" for t in range(TEAMS) if t != skip]) for skip in range(20)]

    async def run() -> None:
        for scope in scopes:
            await scoped.ranking_for(scope)
            assert scoped.held <= VIEW_CATALOGS * len(scoped.index)

    anyio.run(run)
    assert len(scoped) == VIEW_CATALOGS


def test_callers_with_one_scope_share_one_view_and_the_most_recent_survive() -> None:
    """The same key reuses its view (no rebuild); the least recently used goes first."""
    scoped = ScopedSearch(index(), max_views=2)
    a, b, c = (Visibility([f"team-{t}/**"]) for t in range(3))

    async def run() -> None:
        first = await scoped.ranking_for(a)
        assert await scoped.ranking_for(Visibility([f"team-{0}/**"])) is first
        await scoped.ranking_for(b)
        assert await scoped.ranking_for(a) is first  # a is now the most recent
        await scoped.ranking_for(c)  # b goes
        assert await scoped.ranking_for(a) is first
        assert isinstance(await scoped.ranking_for(Visibility(["**"])), SearchIndex)  # everything: the index itself

    anyio.run(run)


def test_a_large_build_lets_other_requests_run_between_its_steps() -> None:
    """skillwire choice: a new scope's view is built in steps with the event loop free in between."""
    scoped = ScopedSearch(index(), build_step=100)
    ran: list[int] = []

    async def other_request() -> None:
        while True:
            ran.append(1)
            await anyio.sleep(0)

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(other_request)
            await anyio.sleep(0)
            before = len(ran)
            view = await scoped.ranking_for(Visibility(["team-1*/**"]))
            during = len(ran) - before
            tg.cancel_scope.cancel()
        assert isinstance(view, SearchView)
        assert during >= 5  # 500 skills checked, then 55 ranked, in steps of 100: the other request ran between them

    anyio.run(run)
