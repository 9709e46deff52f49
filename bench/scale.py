"""One node, 100,000 skills (issue 13, point 5): the index, the restart, the listing and the memory, beside targets.

python -m bench.scale --skills 100000 [--files 5] [--root DIR]

`--root DIR` keeps the generated catalog (generated there once if DIR does not exist, reused as it is
otherwise); without it the catalog lives in a temporary folder. Each index measure runs once, in a fresh
process (as after a restart), with the page cache warm (a first plain read of every file comes before):

  floor      walk + read + sha256 of every file in one plain loop (one core): what indexing cannot beat alone
  cold       FolderSource.scan() with no digest cache, hashing on every core
  warm       FolderSource.restore() from the digest cache a scan wrote: what a restarting server publishes first
  memory     RSS kept after the cold scan (collected) over an interpreter that only imported the scanner, per file
  enumerate  `skills/list` from a real `skillwire serve --http` (after /readyz), page after page until no
             `nextCursor`, every skill checked present once

Wall time and CPU time (user + system, this process and its workers) are both printed: the machine may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

from bench.generate import generate
from bench.index import floor, peak_rss
from bench.peers import HOST, Catalog, cpu_seconds, enumerate_catalog, free_port, load_catalog, stop, wait_ready

HERE = Path(__file__).resolve().parent.parent


def current_rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def cpu_now() -> float:
    """CPU seconds (user + system) of this process and of its children that ended (pool workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _child(mode: str, root: str, cache: str) -> None:
    """One measurement in this fresh process; prints JSON."""
    from skillwire.sources.folder.source import FolderSource

    base = current_rss()
    start, cpu = time.perf_counter(), cpu_now()
    if mode == "floor":
        files = floor(Path(root))
    elif mode == "warm":
        restored = FolderSource([root], digest_cache=cache).restore()
        if restored is None:
            raise SystemExit("bench.scale: the digest cache holds no catalog for this root")
        files = restored.file_count
    else:
        source = FolderSource([root], digest_cache=cache if mode == "write" else None)
        files = source.scan().file_count
    wall, used = time.perf_counter() - start, cpu_now() - cpu
    gc.collect()
    print(json.dumps({"s": wall, "cpu": used, "files": files, "kept": current_rss() - base, "peak": peak_rss()}))


def run(mode: str, root: Path, cache: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.scale", "--child", mode, str(root), str(cache)],
        cwd=HERE,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


async def enumerate_served(catalog: Catalog, cache: Path, files: int) -> dict[str, float | str]:
    """Start `skillwire serve` on the catalog, wait for /readyz, then list every skill; figures and status."""
    port = free_port()
    url = f"http://{HOST}:{port}/mcp"
    exe = Path(sys.executable).parent / "skillwire"
    argv = [str(exe), "serve", str(catalog.root), "--http", f"{HOST}:{port}", "--no-watch", "--quiet"]
    argv += ["--digest-cache", str(cache)]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            async with httpx2.AsyncClient(timeout=httpx2.Timeout(120), trust_env=False) as http:
                session = await wait_ready(proc, http, url, 600)
                while (await http.get(f"http://{HOST}:{port}/readyz")).status_code != 200:
                    await asyncio.sleep(0.2)
                before = cpu_seconds(proc.pid)
                found = await enumerate_catalog(session, catalog, files, 600)
                used = cpu_seconds(proc.pid) - before
        finally:
            stop(proc)
    return {
        "s": found.seconds,
        "server_cpu": used,
        "pages": found.pages,
        "slowest": found.slowest_page_s,
        "status": found.status if not (found.missing or found.unexpected or found.incomplete) else "incomplete",
        "found": found.found,
    }


def prepare(args: argparse.Namespace, work: Path) -> tuple[Path, str]:
    root: Path = args.root or work / "skills"
    if root.exists():
        return root, "reused"
    generate(root, skills=args.skills, files=args.files)
    return root, "generated"


def warm_page_cache(root: Path) -> None:
    """Read every file once, so no measure pays for the disk (the floor then reads what all others read)."""
    for folder, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(folder, name), "rb") as fh:
                hashlib.sha256(fh.read())


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skills", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--root", type=Path, help="keep the catalog here (generated once, then reused)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        root, how = prepare(args, work)
        cache = work / "digests.json"
        warm_page_cache(root)
        load = os.getloadavg()
        floor_r = run("floor", root, cache)
        cold = run("cold", root, cache)
        time.sleep(2.1)  # the digest cache does not trust files changed in the last 2 s
        run("write", root, cache)
        warm = run("warm", root, cache)
        catalog = load_catalog(root)
        listing = asyncio.run(enumerate_served(catalog, cache, args.files))
        load_after = os.getloadavg()
    files = int(cold["files"])
    per_file = cold["kept"] / files
    print(f"catalog: {len(catalog.skills):,} skills, {files:,} files, {catalog.total_bytes:,} bytes ({how}: {root})")
    print(f"machine: {os.cpu_count()} cores; load average {load[0]:.1f} before, {load_after[0]:.1f} after")
    print(f"{'measure':<44}{'wall s':>9}{'CPU s':>9}   {'target':<26}{'result':<10}")

    def row(label: str, wall: float, cpu: float | None, target: str, ok: bool) -> None:
        cpu_cell = f"{cpu:>9.2f}" if cpu is not None else f"{'':>9}"
        print(f"{label:<44}{wall:>9.2f}{cpu_cell}   {target:<26}{'met' if ok else 'MISSED':<10}")

    row("floor: walk+read+sha256, one plain loop", floor_r["s"], floor_r["cpu"], "(reference)", True)
    ratio = cold["s"] / floor_r["s"]
    row(f"cold index = {ratio:.2f}x floor", cold["s"], cold["cpu"], "<= 1.0x floor", ratio <= 1.0)
    share = warm["s"] / cold["s"]
    row(f"warm restart (restore) = {share:.0%} of cold", warm["s"], warm["cpu"], "< 10% of cold", share < 0.10)
    status = listing["status"]
    label = f"skills/list, {int(listing['pages'])} pages ({status}; server CPU)"
    seconds = float(listing["s"])
    row(label, seconds, float(listing["server_cpu"]), "< 8 s", status == "ok" and seconds < 8)
    print(
        f"{'index memory kept: ' + f'{per_file:,.0f} B/file':<44}{cold['kept'] / 1e6:>8.0f}M{'':>9}   "
        f"{'< 1 KB (1024 B) per file':<26}{'met' if per_file < 1024 else 'MISSED':<10}"
    )
    print(
        f"cold scan peak RSS {cold['peak'] / 1e6:.0f} MB (scan included);"
        f" warm restore kept {warm['kept'] / 1e6:.0f} MB;"
        f" slowest skills/list page {float(listing['slowest']) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
