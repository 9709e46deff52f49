"""Cold index, warm restart (digest cache), rescans and peak RSS of a generated catalog, beside the floor.

python -m bench.index --skills 10000

Each measurement runs in a fresh subprocess (as after a process restart), so peak RSS
is that process's own; the page cache is warm for all of them. Modes:

  floor     a plain loop that walks, reads and sha256-hashes every file
  cold      FolderSource.scan() with no cache
  restore   FolderSource.restore(): the catalog from the digest cache, nothing on disk touched (a warm start)
  verified  restore() and then the scan that checks the disk (stat every file; nothing is read)
  rescan    scan() then a second scan() of the unchanged disk (the second is timed)
  edit      scan(), append to one file, update([that file]) (the update is timed)
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
from collections.abc import Callable
from pathlib import Path

from bench.generate import generate

LABELS = {
    "floor": "floor: walk+read+sha256",
    "cold": "cold scan (no cache)",
    "restore": "warm start: restore() from the digest cache",
    "verified": "warm start, disk checked: restore() + scan()",
    "rescan": "rescan of the unchanged disk (in process)",
    "edit": "one file edited: update([path])",
}


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
    from skillwire.sources.folder.source import FolderSource

    start = time.perf_counter()
    files = 0
    if mode == "floor":
        files = floor(Path(root))
    elif mode in ("restore", "verified"):
        source = FolderSource([root], digest_cache=cache)
        restored = source.restore()
        if restored is None:
            raise SystemExit("bench.index: the digest cache holds no catalog for this root")
        files = restored.file_count  # from the snapshot: no skill is built to count them
        if mode == "verified":
            files = source.scan(1).file_count
    elif mode in ("rescan", "edit"):
        source = FolderSource([root])
        files = source.scan().file_count
        target = next(Path(root).rglob("doc-0.md"))
        start = time.perf_counter()
        if mode == "rescan":
            files = source.scan(1).file_count
        else:
            with target.open("ab") as fh:
                fh.write(b"edited\n")
            files = source.update([str(target)], 1).file_count
    else:
        files = FolderSource([root]).scan().file_count
    elapsed = time.perf_counter() - start
    rss = peak_rss()
    print(json.dumps({"s": elapsed, "rss": rss, "files": files}))


def peak_rss() -> int:
    """This process's peak RSS in bytes (VmHWM: unlike ru_maxrss it is not inherited from the parent's peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run(mode: str, root: Path, cache: Path, *, module: str = "bench.index") -> dict[str, float]:
    """One measurement: `python -m MODULE --child MODE ROOT CACHE` in a fresh process; the JSON it printed."""
    out = subprocess.run(
        [sys.executable, "-m", module, "--child", mode, str(root), str(cache)],
        cwd=Path(__file__).resolve().parent.parent,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def baseline_rss() -> int:
    """Peak RSS of a process that only imports skillwire's scanner (to separate the index's own memory)."""
    code = "import bench.index, skillwire.sources.folder.source; print(bench.index.peak_rss())"
    here = Path(__file__).resolve().parent.parent
    return int(
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=here).stdout
    )


def arguments(child: Callable[[str, str, str], None], description: str | None) -> argparse.Namespace | None:
    """The --skills/--files/--runs options; None after running `child` when this process is one measurement
    (`--child MODE ROOT CACHE`, as `run` starts it)."""
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4])
        return None
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    return parser.parse_args()


def main() -> None:
    args = arguments(_child, __doc__)
    if args is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "skills")
        cache = Path(tmp, "digests.json")
        size = generate(root, skills=args.skills, files=args.files)
        time.sleep(2.1)  # the digest cache does not remember files changed in the last 2 s
        from skillwire.sources.folder.source import FolderSource  # here: a child measures its own import

        FolderSource([root], digest_cache=cache).scan()  # writes the cache
        results: dict[str, list[dict[str, float]]] = {m: [] for m in LABELS}
        for _ in range(args.runs):
            for mode, found in results.items():
                found.append(run(mode, root, cache))
        base = baseline_rss()
    files = int(results["cold"][0]["files"])
    print(f"catalog: {args.skills} skills x {args.files} files = {files} files, {size:,} bytes (page cache warm)")
    print("each measurement is a fresh process; best and median of", args.runs)
    print(f"{'measure':<48}{'best s':>9}{'median s':>10}{'vs floor':>10}{'peak RSS MB':>13}")
    floor_best = min(r["s"] for r in results["floor"])
    for mode, label in LABELS.items():
        times = [r["s"] for r in results[mode]]
        rss = max(r["rss"] for r in results[mode])
        best = min(times)
        print(f"{label:<48}{best:>9.3f}{statistics.median(times):>10.3f}{best / floor_best:>9.2f}x{rss / 1e6:>13.1f}")
    cold_best = min(r["s"] for r in results["cold"])
    cold_rss = max(r["rss"] for r in results["cold"])
    for mode, what in (("restore", "warm start"), ("verified", "warm start with the disk checked")):
        print(f"{what} = {min(r['s'] for r in results[mode]) / cold_best:.0%} of cold")
    print(
        f"index memory: {(cold_rss - base) / 1e6:.1f} MB over a {base / 1e6:.1f} MB interpreter"
        f" = {(cold_rss - base) / files:,.0f} bytes per file (peak, scan included)"
    )


if __name__ == "__main__":
    main()
