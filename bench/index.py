"""Cold-index time of a generated catalog, beside the floor (walk + read + sha256 of the same files).

python -m bench.index --skills 1000
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.generate import generate
from skillwire.sources.filesystem import FolderSource


def floor(root: Path) -> int:
    """The physical floor: walk, read and hash every file, nothing else."""
    count = 0
    for folder, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(folder, name), "rb") as fh:
                hashlib.sha256(fh.read()).hexdigest()
            count += 1
    return count


def best_of(runs: int, fn: object) -> tuple[float, float]:
    assert callable(fn)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        size = generate(root, skills=args.skills, files=args.files)
        source = FolderSource([root])
        catalog = source.scan()
        assert len(catalog) == args.skills, catalog.refusals[:3]
        floor_best, floor_med = best_of(args.runs, lambda: floor(root))
        index_best, index_med = best_of(args.runs, source.scan)
        print(f"catalog: {args.skills} skills x {args.files} files, {size:,} bytes (page cache warm)")
        print(f"{'measure':<34}{'best s':>9}{'median s':>10}")
        print(f"{'floor: walk+read+sha256':<34}{floor_best:>9.3f}{floor_med:>10.3f}")
        print(f"{'skillwire FolderSource.scan':<34}{index_best:>9.3f}{index_med:>10.3f}")
        print(f"ratio (best): {index_best / floor_best:.2f}x the floor")


if __name__ == "__main__":
    main()
