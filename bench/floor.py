"""skillwire beside the SDK floor and the official TypeScript server: issue 23's table, in one command.

python -m bench.floor --skills 10000 [--runs 3] [--catalog ROOT] [--json results.json]

The servers, one at a time, in this order in each run, over one generated catalog (bench.peers measures each: the
same client, the same checks):

  skillwire        `skillwire serve ROOT --http` with the watcher on: every row
  --no-watch       the same with `--no-watch`: spawn to first answer, RSS then
  warm cache       the watcher on and a `--digest-cache` written by an unmeasured start first: the same
  bare SDK floor   the `mcp` SDK answering every read with one static text (`bench/peer_servers/bare_sdk.py`)
  TS SDK v2        @modelcontextprotocol/server 2.4's ext/skills over the folder
                   (`bench/peer_servers/ts_sdk_skills.mjs`, installed into .cache/peers/ts-sdk on first use; left
                   out, with the reason, without node or npm)

Rows: spawn to first answer (watcher on, --no-watch, warm cache); the full skills/list; verified reads/s at each
concurrency (every answer's sha256 checked against the file; the floor's length against its one text) and their
ratio to the floor's in the same run; server CPU per read and its ratio to the floor's; RSS when ready and the peak
(VmHWM) after the listing and the reads. A cell is the median of the runs, with their range for single figures; each
run follows on a line of its own, with the machine's load: the 1-minute load average when each server started and
the share of the cores other processes used while it was read. Compare figures only from a quiet machine.

Each server is left to go quiet after its first answer before it is listed and read (at most one clock tick of CPU
in 0.3 s): work a server defers past its first answer (skillwire's watcher set-up and catch-up rescan) is shown in
rows of its own, "then busy until quiet" and its CPU, and not charged to the reads.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import platform
import shutil
import statistics
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.generate import generate
from bench.peers import Catalog, Launch, ServerResult, bench_server, launches, load_catalog, log

ORDER = ("skillwire-watch", "skillwire", "skillwire-warm", "bare-sdk", "ts-sdk")
FULL = ("skillwire-watch", "bare-sdk", "ts-sdk")  # listed and read; the others are measured to their first answer
COLUMNS = (("skillwire", "skillwire-watch"), ("bare SDK floor", "bare-sdk"), ("TS SDK v2 server", "ts-sdk"))

Runs = list[dict[str, ServerResult]]


def _launch(name: str, launch: Launch) -> Launch:
    full = name in FULL
    return dataclasses.replace(launch, enumerate=full and name != "bare-sdk", reads=full)


async def measure(args: argparse.Namespace, catalog: Catalog, work: Path) -> Runs:
    runs: Runs = []
    for run in range(1, args.runs + 1):
        results: dict[str, ServerResult] = {}
        for name in args.servers:
            log(f"run {run}/{args.runs}: {name}")
            launch = launches(catalog, work, [name])[name]
            if isinstance(launch, str):
                results[name] = ServerResult(name, setup_error=launch)
                continue
            results[name] = await bench_server(name, _launch(name, launch), catalog, args, work)
        runs.append(results)
    return runs


def _median(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    if not values:
        return ""
    middle = fmt(statistics.median(values))
    return middle if len(values) == 1 else f"{middle} ({fmt(min(values))}-{fmt(max(values))})"


def _seconds(value: float) -> str:
    return f"{value:.2f}"


def _per_level(
    runs: Runs, name: str, levels: Sequence[int], value: Callable[[ServerResult, int], float | None], fmt: str
) -> str:
    """The median over runs of `name`'s figure at each level."""
    cells = []
    for clients in levels:
        found = [v for results in runs if name in results if (v := value(results[name], clients)) is not None]
        cells.append(format(statistics.median(found), fmt) if found else "-")
    return " / ".join(cells) if any(c != "-" for c in cells) else ""


def _load(result: ServerResult, clients: int) -> float | None:
    return next((x.rps for x in result.loads if x.clients == clients and x.ok), None)


def _cpu(result: ServerResult, clients: int) -> float | None:
    return next((x.server_cpu_ms_per_read for x in result.loads if x.clients == clients), None)


def _ratios(runs: Runs, name: str, levels: Sequence[int], value: Callable[[ServerResult, int], float | None]) -> str:
    """The median over runs of `name`'s figure over the floor's in the same run, at each level."""
    cells = []
    for clients in levels:
        found = []
        for results in runs:
            mine, floor = results.get(name), results.get("bare-sdk")
            a = value(mine, clients) if mine is not None else None
            b = value(floor, clients) if floor is not None else None
            if a is not None and b:
                found.append(a / b)
        cells.append(f"{statistics.median(found):.2f}x" if found else "-")
    return " / ".join(cells) if any(c != "-" for c in cells) else ""


def table(runs: Runs, catalog: Catalog, args: argparse.Namespace) -> str:
    levels = args.concurrency
    counts = " / ".join(str(c) for c in levels)
    rows: list[tuple[str, list[str]]] = []

    def scalar(label: str, value: Callable[[ServerResult], float | None], fmt: Callable[[float], str]) -> None:
        cells = []
        for _, name in COLUMNS:
            found = [v for results in runs if name in results if (v := value(results[name])) is not None]
            cells.append(_median(found, fmt))
        rows.append((label, cells))

    scalar("spawn to first answer, watcher on (s)", lambda r: r.ready_s, _seconds)
    for label, variant in (("  --no-watch", "skillwire"), ("  warm --digest-cache", "skillwire-warm")):
        found = [results[variant].ready_s for results in runs if variant in results]
        rows.append((f"{label} (s)", [_median([v for v in found if v is not None], _seconds), "", ""]))
    scalar("  then busy until quiet (s)", lambda r: r.settle_s, _seconds)
    scalar("  CPU used meanwhile (s)", lambda r: r.settle_cpu_s, _seconds)
    pages = max((r.enumeration.pages for results in runs for r in results.values() if r.enumeration), default=0)
    scalar(
        f"full skills/list, {pages} pages (s)",
        lambda r: r.enumeration.seconds if r.enumeration and r.enumeration.status == "ok" else None,
        _seconds,
    )
    rows.append(
        (f"verified reads/s, {counts} clients", [_per_level(runs, n, levels, _load, ",.0f") for _, n in COLUMNS])
    )
    rows.append(("  ratio to the floor (same run)", [_ratios(runs, n, levels, _load) for _, n in COLUMNS]))
    rows.append((f"server CPU ms per read, {counts}", [_per_level(runs, n, levels, _cpu, ".2f") for _, n in COLUMNS]))
    rows.append(("  ratio to the floor (same run)", [_ratios(runs, n, levels, _cpu) for _, n in COLUMNS]))
    rss = []
    for _, name in COLUMNS:
        ready = [r.rss_ready_mib for results in runs if (r := results.get(name)) and r.rss_ready_mib is not None]
        peak = [r.peak_rss_mib for results in runs if (r := results.get(name)) and r.peak_rss_mib is not None]
        rss.append(f"{statistics.median(ready):.0f} / {statistics.median(peak):.0f}" if ready and peak else "")
    rows.append(("RSS when ready / peak under load (MiB)", rss))

    width0 = max(len(label) for label, _ in rows)
    widths = [max(len(title), *(len(cells[i]) for _, cells in rows)) for i, (title, _) in enumerate(COLUMNS)]
    head = " " * width0 + "  " + "  ".join(t.ljust(w) for (t, _), w in zip(COLUMNS, widths, strict=True))
    lines = [
        f"catalog: {len(catalog.skills):,} skills, {catalog.files:,} files, {catalog.total_bytes / 2**20:.0f} MiB"
        f" | machine: {os.cpu_count()} cores, {platform.machine()}, Linux {platform.release()}"
        f" | {args.runs} run(s), reads {args.duration:g} s per level | load average at start"
        f" {args.load_before[0]:.2f}, at end {os.getloadavg()[0]:.2f}",
        "",
        head,
        "-" * len(head),
    ]
    lines += [
        label.ljust(width0) + "  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))
        for label, cells in rows
    ]
    lines += [
        "",
        "runs (load: 1-minute load average at the server's start; others: share of the cores other"
        " processes used while it was read, per level)",
    ]
    for number, results in enumerate(runs, 1):
        for name in args.servers:
            r = results.get(name)
            if r is not None:
                lines.append(f"  {number} {name:<16} {_run_line(r)}")
    problems = [
        f"[{name}] {text}"
        for results in runs
        for name, r in results.items()
        for text in (r.setup_error, r.ready_error, r.load_error, r.crashed, *(x.error for x in r.loads))
        if text
    ]
    if problems:
        lines += ["", *dict.fromkeys(problems)]
    return "\n".join(line.rstrip() for line in lines)


def _run_line(r: ServerResult) -> str:
    if r.setup_error or r.ready_error:
        return f"not measured: {r.setup_error or r.ready_error}"
    parts = [f"ready {r.ready_s:.2f} s" if r.ready_s is not None else "ready ?"]
    if r.settle_s is not None:
        parts.append(f"quiet {r.settle_s:.2f} s later ({r.settle_cpu_s or 0:.2f} s CPU)")
    if r.enumeration is not None:
        parts.append(f"list {r.enumeration.seconds:.2f} s ({r.enumeration.found} skills)")
    if r.loads:
        parts.append("reads/s " + " / ".join(f"{x.rps:,.0f}" for x in r.loads))
        parts.append("cpu ms " + " / ".join(f"{x.server_cpu_ms_per_read or 0:.2f}" for x in r.loads))
        bad = sum(x.errors + x.wrong for x in r.loads)
        if bad:
            parts.append(f"{bad} bad answers")
    parts.append(f"RSS {r.rss_ready_mib or 0:.0f}/{r.peak_rss_mib or 0:.0f} MiB")
    parts.append(f"load {r.load_average[0]:.2f}")
    if r.loads:
        parts.append("others " + " / ".join(f"{100 * (x.other_cpu_share or 0):.0f}%" for x in r.loads))
    return ", ".join(parts)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.floor", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--skills", type=int, default=10000, help="catalog size (default 10000)")
    parser.add_argument("--files", type=int, default=5, help="files per skill, SKILL.md included (default 5)")
    parser.add_argument("--catalog", type=Path, help="serve this existing catalog instead of generating one")
    parser.add_argument("--runs", type=int, default=3, help="runs of every server (default 3)")
    parser.add_argument(
        "--servers",
        type=lambda text: [p for p in text.split(",") if p],
        default=list(ORDER),
        help=f"comma-separated subset of {','.join(ORDER)}",
    )
    parser.add_argument("--concurrency", type=lambda t: [int(p) for p in t.split(",")], default=[1, 8, 32])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds counted per concurrency level")
    parser.add_argument("--warmup", type=float, default=1.0, help="uncounted seconds before each level")
    parser.add_argument("--timeout", type=float, default=300.0, help="limit for the listing (s)")
    parser.add_argument("--startup-timeout", type=float, default=600.0, help="limit for a start (s)")
    parser.add_argument("--json", type=Path, help="write every run's raw results here")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.servers) - set(ORDER))
    if unknown:
        parser.error(f"unknown server(s): {', '.join(unknown)}")
    args.load_before = os.getloadavg()

    work = Path(tempfile.mkdtemp(prefix="skillwire-floor-"))
    try:
        root = args.catalog.resolve() if args.catalog is not None else work / "catalog"
        if args.catalog is None:
            log(f"generating {args.skills} skills x {args.files} files under {root}")
            generate(root, skills=args.skills, files=args.files)
        catalog = load_catalog(root)
        runs = asyncio.run(measure(args, catalog, work))
        print(table(runs, catalog, args))
        if args.json is not None:
            raw = [{name: dataclasses.asdict(r) for name, r in results.items()} for results in runs]
            args.json.write_text(json.dumps({"load_before": args.load_before, "runs": raw}, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
