"""search_skills for scoped callers at 100,000 skills: many callers, few distinct scopes (issue 19, hole 3).

python -m bench.search_scopes [--scale 100000] [--callers 2000] [--queries 300]

In process, the server's own parts: a `SearchIndex` over `--scale` generated skills (`bench.search_catalog`, the
documents `serve --search-tool` indexes), a real scopes policy (`skillwire.core.scopes`: one grant per team scope, eight
distinct visible sets from one area of about 16,700 skills to five areas of about 83,300), `--callers` callers
spread over them, and `ScopedSearch`, which answers each caller from a view of the index over its scope's skills.

Prints, wall and CPU: the index build; each scope's first request (its view built in steps, the event loop free
between them) with the longest the loop was held meanwhile; query times for callers once the views are built,
beside the unscoped index and beside the old way (rank everything, then drop what the caller may not see, which
leaked); recall@1 of queries whose answer the caller may see; each view's memory per skill it holds (tracemalloc:
held after its build, and after every query was asked of it, with its sorted postings and stand-ins).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable, Sequence
from functools import partial

import anyio

from bench.search import quantile
from bench.search_catalog import catalog, queries
from skillwire.core.scopes import Caller, Visibility, parse_policy
from skillwire.core.search import SearchHit, SearchIndex, skill_document
from skillwire.server.search_scopes import ScopedSearch

AREAS = ("finance", "engineering", "people", "growth", "operations", "support")
SCOPES = (*((area,) for area in AREAS), ("finance", "people"), AREAS[:5])  # eight distinct visible sets
LIMIT = 10


def policy_text() -> str:
    """One grant per scope name: `team:finance` sees finance/**, `team:finance+people` both, ..."""
    grants = []
    for areas in SCOPES:
        patterns = ", ".join(f'"{area}/**"' for area in areas)
        grants.append(f'[[grant]]\nscope = "team:{"+".join(areas)}"\nskills = [{patterns}]\n')
    return "\n".join(grants)


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def old_way(index: SearchIndex, scope: Visibility, query: str) -> list[SearchHit]:
    """What search_skills did before: rank every skill, drop the hidden ones, look through everything if too few."""
    wanted = max(LIMIT * 5, 50)
    while True:
        hits = index.search(query, wanted)
        found = [hit for hit in hits if scope.allows_uri(str(hit.key))][:LIMIT]
        if len(found) == LIMIT or len(hits) < wanted or wanted >= len(index):
            return found
        wanted = len(index)


async def first_requests(scoped: ScopedSearch, scopes: Sequence[Visibility]) -> list[tuple[float, float, float]]:
    """Per scope: wall and CPU of its first request (the view's build), and the longest the event loop was held."""
    measured = []
    for scope in scopes:
        gaps: list[float] = []

        async def ticker(gaps: list[float] = gaps) -> None:
            last = time.perf_counter()
            while True:
                await anyio.sleep(0)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            await anyio.sleep(0)
            wall, cpu = time.perf_counter(), time.process_time()
            ranking = await scoped.ranking_for(scope)
            ranking.search("warm up", LIMIT)
            measured.append((time.perf_counter() - wall, time.process_time() - cpu, max(gaps, default=0.0)))
            tg.cancel_scope.cancel()
    return measured


def view_bytes(index: SearchIndex, scope: Visibility, asked: Sequence[str]) -> tuple[int, int, int]:
    """Bytes a view of `scope` holds once built and once `asked` (sorted postings, stand-ins), and its skills."""
    scoped = ScopedSearch(index)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    view = anyio.run(scoped.ranking_for, scope)
    built = tracemalloc.get_traced_memory()[0] - before
    for text in asked:
        view.search(text, LIMIT)
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return built, used, len(view)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.search_scopes", description=__doc__)
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--callers", type=int, default=2_000)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    skills = catalog(args.scale)
    documents = [
        skill_document(
            f"skill://{s.path}/SKILL.md",
            f"skill://{s.path}/SKILL.md",
            s.name,
            s.description,
            {"name": s.name, "description": s.description, "metadata": {"platform": s.platform}},
        )
        for s in skills
    ]
    index = SearchIndex()
    build = timed(lambda: index.update(documents))
    policy = parse_policy(policy_text(), origin="bench")
    callers = [
        Caller(subject=f"user-{i}", scopes=frozenset({f"team:{'+'.join(SCOPES[i % len(SCOPES)])}"}))
        for i in range(args.callers)
    ]
    visibility = [policy.visibility(caller) for caller in callers]
    distinct = list({v.key: v for v in visibility}.values())
    scoped = ScopedSearch(index)
    first = anyio.run(first_requests, scoped, distinct)
    asked = queries(skills, args.queries, seed=7, platform=1.0)
    index.search(asked[0][0])  # sorts the frequent terms' postings, as bench.search does

    async def scoped_queries() -> tuple[list[float], list[float], list[int | None]]:
        walls, cpus, ranks = [], [], []
        for i, (text, wanted) in enumerate(asked * max(1, args.callers // len(asked))):
            scope = visibility[i % len(visibility)]
            wall, cpu = time.perf_counter(), time.process_time()
            hits = (await scoped.ranking_for(scope)).search(text, LIMIT)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            if scope.allows_uri(documents[wanted].key):
                keys = [hit.key for hit in hits]
                ranks.append(keys.index(documents[wanted].key) + 1 if documents[wanted].key in keys else None)
        return walls, cpus, ranks

    walls, cpus, ranks = anyio.run(scoped_queries)
    unscoped = [d.key for d in documents]
    plain_ranks = []
    for text, wanted in asked:
        keys = [hit.key for hit in index.search(text, LIMIT)]
        plain_ranks.append(keys.index(unscoped[wanted]) + 1 if unscoped[wanted] in keys else None)
    plain = [timed(partial(index.search, text, LIMIT)) for text, _ in asked]
    old = [timed(partial(old_way, index, visibility[i % len(visibility)], text)) for i, (text, _) in enumerate(asked)]
    print(
        f"search_skills, scoped callers: {args.scale:,} generated skills, {len(callers):,} callers, "
        f"{len(distinct)} distinct scopes, {len(walls):,} scoped queries (in process)"
    )
    print(f"{'measure':<52}{'wall':>10}{'CPU':>10}{'loop held':>11}")
    print(f"{'index build (every skill)':<52}{build[0]:>9.2f}s{build[1]:>9.2f}s")
    for scope, (wall, cpu, held) in zip(distinct, first, strict=True):
        areas = "+".join(p[:-3] for p in scope.key) if len(scope.key) < 3 else f"{len(scope.key)} areas"
        label = f"first request, {areas} ({len(scoped._views[scope.key]):,} skills)"
        print(f"{label:<52}{wall:>9.2f}s{cpu:>9.2f}s{held * 1000:>9.1f}ms")
    rows = (
        ("scoped query (views built)", walls, cpus),
        ("unscoped query (the index)", [w for w, _ in plain], [c for _, c in plain]),
        ("old way: rank all, then filter (leaked)", [w for w, _ in old], [c for _, c in old]),
    )
    for label, w, c in rows:
        for name, q in (("p50", 0.5), ("p99", 0.99)):
            print(f"{label + ' ' + name:<52}{quantile(w, q) * 1000:>8.2f}ms{quantile(c, q) * 1000:>8.2f}ms")
    found = sum(1 for r in ranks if r == 1) / max(1, len(ranks))
    print(f"recall@1, scoped queries whose answer the caller sees: {found:.2f} ({len(ranks)} queries)")
    found = sum(1 for r in plain_ranks if r == 1) / max(1, len(plain_ranks))
    print(f"recall@1, every query unscoped (all skills compete): {found:.2f} ({len(plain_ranks)} queries)")
    print(f"views held: {len(scoped)} ({scoped.held:,} skills)")
    print("view memory (tracemalloc): held after its build, then after every query above was asked of it")
    whole = Visibility([f"{area}/**" for area in AREAS])  # every skill, by name: a view, not the index
    for scope in (distinct[0], distinct[-2], distinct[-1], whole):
        built, used, size = view_bytes(index, scope, [text for text, _ in asked])
        print(
            f"  {size:>7,} skills: {built / 1e6:5.1f} MB = {built / size:3.0f} B/skill built, "
            f"{used / 1e6:5.1f} MB = {used / size:3.0f} B/skill used"
        )


if __name__ == "__main__":
    main()
