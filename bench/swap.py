"""A served file swapped after indexing (issue 9, hole 2): the server's memory and everyone else's latency.

python -m bench.swap --skills 1000 [--reads 50] [--watch]

Starts `skillwire serve ROOT --http 127.0.0.1:0` (with --no-watch unless --watch: the read meets the swap
before any watcher does) on a generated catalog, then for each kind of swap (a symlink to /dev/zero, a
FIFO) replaces one served file and makes `--reads` reads of it from one client while a second client
keeps reading other files; prints the answers the swapped reads got, the other requests' latency
(median / max) while that happened, and the server's peak RSS (VmHWM).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError

from bench.generate import generate
from bench.live import serve, vm_kib


def served_files(root: Path) -> list[tuple[str, Path]]:
    """(URI, path) of every reference file of the generated catalog."""
    found = []
    for path in sorted(root.glob("*/*/*/references/*.md")):
        rel = path.relative_to(root)
        found.append(("skill://" + "/".join(rel.parts), path))
    return found


def swap(path: Path, kind: str) -> None:
    new = path.with_name(".swap")
    if kind == "dev-zero":
        os.symlink("/dev/zero", new)
    else:
        os.mkfifo(new)
    os.replace(new, path)


async def measure(url: str, target: str, others: list[str], reads: int) -> tuple[dict[str, int], list[float]]:
    answers: dict[str, int] = {}
    latencies: list[float] = []
    done = anyio.Event()
    async with Client(url, mode="auto", cache=None) as swapped, Client(url, mode="auto", cache=None) as other:

        async def background() -> None:
            rng = random.Random(7)
            while not done.is_set():
                start = time.perf_counter()
                with anyio.fail_after(60):
                    await other.read_resource(rng.choice(others))
                latencies.append(time.perf_counter() - start)

        async with anyio.create_task_group() as tg:
            tg.start_soon(background)
            await anyio.sleep(0.2)  # the background reader is going
            for _ in range(reads):
                try:
                    with anyio.fail_after(60):
                        await swapped.read_resource(target)
                    key = "bytes"
                except MCPError as err:
                    key = f"error {err.error.code}"
                answers[key] = answers.get(key, 0) + 1
            await anyio.sleep(0.2)
            done.set()
    return answers, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--reads", type=int, default=50)
    parser.add_argument("--watch", action="store_true", help="keep the file watcher on (it may re-index first)")
    args = parser.parse_args()
    print(f"swapped served file, {args.skills:,} skills x 5 files (python {sys.version.split()[0]})")
    for kind in ("dev-zero", "fifo"):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp, "skills")
            generate(root, skills=args.skills, files=5)
            files = served_files(root)
            target, path = files[0]
            skill = target.rsplit("/references/", 1)[0]  # the swap refuses this skill: read others meanwhile
            others = [uri for uri, _ in files[1:300] if not uri.startswith(skill + "/")]
            with serve(root, *([] if args.watch else ["--no-watch"])) as served:
                before = vm_kib(served.process.pid, "VmHWM") / 1024
                swap(path, kind)
                answers, latencies = anyio.run(measure, served.url, target, others, args.reads)
                peak = vm_kib(served.process.pid, "VmHWM") / 1024
                alive = served.process.poll() is None
        shown = ", ".join(f"{n} x {key}" for key, n in sorted(answers.items()))
        print(f"{kind}: {args.reads} reads of the swapped file -> {shown}; server alive: {alive}")
        print(
            f"  other reads meanwhile: {len(latencies)}, median {statistics.median(latencies) * 1000:.1f} ms, "
            f"max {max(latencies) * 1000:.1f} ms"
        )
        print(f"  peak RSS (VmHWM): {before:.0f} MB before the swap, {peak:.0f} MB after")


if __name__ == "__main__":
    main()
