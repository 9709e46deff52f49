"""Cold index, warm restart (digest cache) and peak RSS of a generated catalog, beside the floor.

python -m bench.index --skills 10000

Each measurement runs in a fresh subprocess (as after a process restart), so peak RSS
is that process's own; the page cache is warm for all of them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.generate import generate


def floor(root: Path) -> int:
    """The physical floor: walk, read and hash every file, nothing else."""
    count = 0
    for folder, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(folder, name), "rb") as fh:
                hashlib.sha256(fh.read()).hexdigest()
            count += 1
    return count


def _child(mode: str, root: str, cache: str) -> None:
    """One measurement in this (fresh) process; prints JSON."""
    from skillwire.sources.filesystem import FolderSource

    start = time.perf_counter()
    files = 0
    if mode == "floor":
        files = floor(Path(root))
    else:
        source = FolderSource([root], digest_cache=cache if mode == "warm" else None)
        catalog = source.scan()
        files = catalog.file_count
    elapsed = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    print(json.dumps({"s": elapsed, "rss": rss, "files": files}))


def run(mode: str, root: Path, cache: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.index", "--child", mode, str(root), str(cache)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def baseline_rss() -> int:
    """Peak RSS of a process that only imports skillwire's scanner (to separate the index's own memory)."""
    code = (
        "import resource, skillwire.sources.filesystem;print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)"
    )
    return int(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "skills")
        cache = Path(tmp, "digests.json")
        size = generate(root, skills=args.skills, files=args.files)
        time.sleep(2.1)  # the digest cache does not remember files changed in the last 2 s
        run("warm", root, cache)  # writes the cache
        results: dict[str, list[dict[str, float]]] = {"floor": [], "cold": [], "warm": []}
        for _ in range(args.runs):
            for mode, found in results.items():
                found.append(run(mode, root, cache))
        base = baseline_rss()
    files = int(results["cold"][0]["files"])
    print(f"catalog: {args.skills} skills x {args.files} files = {files} files, {size:,} bytes (page cache warm)")
    print("each measurement is a fresh process; best and median of", args.runs)
    print(f"{'measure':<44}{'best s':>9}{'median s':>10}{'vs floor':>10}{'peak RSS MB':>13}")
    floor_best = min(r["s"] for r in results["floor"])
    labels = {
        "floor": "floor: walk+read+sha256",
        "cold": "skillwire cold scan (no cache)",
        "warm": "skillwire warm restart (digest cache)",
    }
    for mode, label in labels.items():
        times = [r["s"] for r in results[mode]]
        rss = max(r["rss"] for r in results[mode])
        best = min(times)
        print(f"{label:<44}{best:>9.3f}{statistics.median(times):>10.3f}{best / floor_best:>9.2f}x{rss / 1e6:>13.1f}")
    cold_best = min(r["s"] for r in results["cold"])
    warm_best = min(r["s"] for r in results["warm"])
    cold_rss = max(r["rss"] for r in results["cold"])
    print(f"warm restart = {warm_best / cold_best:.0%} of cold")
    print(
        f"index memory: {(cold_rss - base) / 1e6:.1f} MB over a {base / 1e6:.1f} MB interpreter"
        f" = {(cold_rss - base) / files:,.0f} bytes per file (peak, scan included)"
    )


if __name__ == "__main__":
    main()
