"""Search quality on labelled queries (host search and the server's search_skills tool), and speed at 100,000 skills.

python -m bench.search --corpus ../shared/corpus [--generated 2000] [--scale 100000] [--speed-queries 300]

Quality: `--corpus DIR` holds the collections named in bench/search_queries.json (hand-written queries, each with
the skill that should come first); a generated catalog (`bench.search_catalog`, distinct descriptions) adds seeded
queries. Each collection and the generated catalog is served by its own `skillwire serve --http --search-tool`
process. Host search: one `Host` connected to all of them (every query ranks every origin's skills). Server tool:
`search_skills` over HTTP on the server that holds the expected skill (it ranks that server's skills only).
recall@k: the expected skill is among the first k; MRR: mean of 1/rank over the first 10 (0 if absent). Each set is
split into halves (alternate entries, `tune` and `held`): tune the ranking on one, report both.

Speed: in process, `skillwire.core.search.SearchIndex` built from 100,000 generated skills (the documents the host
registry indexes, `skill_document`); query time over a few hundred generated queries; the index's memory is what
tracemalloc counts as allocated by the build and still held (a second build, traced). Wall and CPU time both.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import anyio
from mcp import Client

from bench.live import serve
from bench.search_catalog import catalog, queries, write
from skillwire import Host
from skillwire.core.search import Document, SearchIndex, skill_document

QUERIES = Path(__file__).with_name("search_queries.json")
DEPTH = 10  # results fetched per query: MRR counts ranks up to here


@dataclass(frozen=True, slots=True)
class Case:
    """One labelled query: the words, the server (label) that holds the answer, the answer's uri, its half."""

    query: str
    label: str
    uri: str
    half: str


def label_of(collection: str) -> str:
    """The host label for a corpus collection folder (`obra+superpowers` -> `superpowers`)."""
    return collection.rsplit("+", 1)[-1].lower()


def labelled(corpus: Path | None, generated: int, tmp: Path) -> tuple[dict[str, list[Case]], dict[str, Path]]:
    """The labelled sets by name, and the folder each label serves (the generated catalog is written under `tmp`)."""
    roots: dict[str, Path] = {}
    sets: dict[str, list[Case]] = {}
    if corpus is not None:
        data = json.loads(QUERIES.read_text(encoding="utf-8"))
        cases = []
        for i, row in enumerate(data["queries"]):
            label = label_of(row["collection"])
            roots[label] = corpus / row["collection"]
            cases.append(Case(row["query"], label, row["uri"], ("tune", "held")[i % 2]))
        missing = [str(root) for root in roots.values() if not root.is_dir()]
        if missing:
            raise SystemExit(f"bench.search: --corpus has no {', '.join(missing)}")
        sets["corpus"] = cases
    if generated:
        skills = catalog(generated, distinct_tasks=True)
        write(tmp / "generated", skills)
        roots["generated"] = tmp / "generated"
        asked = queries(skills, max(60, generated // 30))
        sets["generated"] = [
            Case(text, "generated", f"skill://{skills[index].path}/SKILL.md", ("tune", "held")[i % 2])
            for i, (text, index) in enumerate(asked)
        ]
    return sets, roots


async def ranks(urls: dict[str, str], sets: dict[str, list[Case]]) -> dict[str, dict[str, list[int | None]]]:
    """For every case: the rank (1-based, None past DEPTH) of its answer, by host search and by the server tool."""
    host_ranks: dict[str, list[int | None]] = {name: [] for name in sets}
    tool_ranks: dict[str, list[int | None]] = {name: [None] * len(cases) for name, cases in sets.items()}
    async with Host() as host:
        for label, url in urls.items():
            await host.add_server(label, url)
        for name, cases in sets.items():
            for case in cases:
                found = [(item.origin, item.uri) for item in host.search(case.query, DEPTH)]
                host_ranks[name].append(rank_of((case.label, case.uri), found))
    for label, url in urls.items():
        async with Client(url, mode="auto", cache=None) as client:
            for name, cases in sets.items():
                for i, case in enumerate(cases):
                    if case.label != label:
                        continue
                    result = await client.call_tool("search_skills", {"query": case.query, "limit": DEPTH})
                    skills = (result.structured_content or {}).get("skills", [])
                    tool_ranks[name][i] = rank_of(case.uri, [skill["uri"] for skill in skills])
    return {"host search": host_ranks, "server tool": tool_ranks}


def rank_of(wanted: object, found: Sequence[object]) -> int | None:
    return found.index(wanted) + 1 if wanted in found else None


def scores(found: Sequence[int | None]) -> tuple[float, float, float]:
    """recall@1, recall@5 and MRR of a list of ranks."""
    n = max(1, len(found))
    return (
        sum(1 for r in found if r == 1) / n,
        sum(1 for r in found if r is not None and r <= 5) / n,
        sum(1 / r for r in found if r is not None) / n,
    )


def quality(corpus: Path | None, generated: int) -> None:
    with tempfile.TemporaryDirectory(prefix="skillwire-search-") as tmp, ExitStack() as stack:
        sets, roots = labelled(corpus, generated, Path(tmp))
        urls = {label: stack.enter_context(serve(root, "--search-tool")).url for label, root in roots.items()}
        measured = anyio.run(ranks, urls, sets)
    print("quality: one Host over", ", ".join(f"{label} ({root.name})" for label, root in roots.items()))
    print(f"{'searcher':<13}{'set':<11}{'half':<6}{'queries':>8}{'recall@1':>10}{'recall@5':>10}{'MRR':>7}")
    for searcher, by_set in measured.items():
        rows = [(name, found, sets[name]) for name, found in by_set.items()]
        if len(rows) > 1:  # every labelled query together: what the issue's recall target is judged on
            rows.append(("both", [r for _, f, _ in rows for r in f], [c for _, _, cs in rows for c in cs]))
        for name, found, cases in rows:
            for half in ("tune", "held", "all"):
                picked = [r for r, c in zip(found, cases, strict=True) if half in ("all", c.half)]
                r1, r5, mrr = scores(picked)
                print(f"{searcher:<13}{name:<11}{half:<6}{len(picked):>8}{r1:>10.2f}{r5:>10.2f}{mrr:>7.2f}")
    misses = [
        f"  {c.query!r} -> {c.label}:{c.uri} (host rank {r})"
        for name, found in measured["host search"].items()
        for r, c in zip(found, sets[name], strict=True)
        if r is None or r > 5
    ]
    if misses:
        print("host search, answer not in the first 5:", *misses, sep="\n")


def speed(scale: int, asked: int) -> None:
    skills = catalog(scale)
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
    wall, cpu = time.perf_counter(), time.process_time()
    index = SearchIndex(documents)
    build_wall, build_cpu = time.perf_counter() - wall, time.process_time() - cpu
    words = queries(skills, asked, seed=7, platform=1.0)  # tasks repeat across platforms: name it, one answer
    index.search(words[0][0])  # the first query sorts the frequent terms' postings: timed below with the rest
    walls, cpus, found = [], [], []
    for text, wanted in words:
        wall, cpu = time.perf_counter(), time.process_time()
        hits = index.search(text, DEPTH)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        found.append(rank_of(documents[wanted].key, [hit.key for hit in hits]))
    memory = traced_size(documents)
    print(f"\nspeed: SearchIndex over {scale:,} generated skills, {len(words)} queries (in process)")
    print(f"{'measure':<34}{'wall':>12}{'CPU':>12}")
    print(f"{'index build':<34}{build_wall:>11.2f}s{build_cpu:>11.2f}s")
    for label, q in (("query p50", 0.5), ("query p99", 0.99)):
        print(f"{label:<34}{quantile(walls, q) * 1000:>10.2f}ms{quantile(cpus, q) * 1000:>10.2f}ms")
    print(f"{'query mean':<34}{statistics.mean(walls) * 1000:>10.2f}ms{statistics.mean(cpus) * 1000:>10.2f}ms")
    print(f"index memory (tracemalloc, held after build): {memory / 1e6:.1f} MB = {memory / scale:,.0f} bytes/skill")
    r1, r5, mrr = scores(found)
    print(f"these queries (platform named): recall@1 {r1:.2f}, recall@5 {r5:.2f}, MRR {mrr:.2f}")


def traced_size(documents: Sequence[Document]) -> int:
    """Bytes the index's build allocates and still holds (documents and their keys are the caller's)."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    index = SearchIndex(documents)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del index
    return held


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.search", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, help="the folder holding the collections in search_queries.json")
    parser.add_argument("--generated", type=int, default=2_000, help="skills in the generated labelled catalog")
    parser.add_argument("--scale", type=int, default=100_000, help="skills for the speed measurement (0: skip)")
    parser.add_argument("--speed-queries", type=int, default=300)
    args = parser.parse_args()
    if args.corpus is None:
        print("no --corpus: the hand-labelled queries are skipped (generated ones only)", file=sys.stderr)
    if args.corpus is not None or args.generated:
        quality(args.corpus, args.generated)
    if args.scale:
        speed(args.scale, args.speed_queries)


if __name__ == "__main__":
    main()
