"""A live skillwire server on a large catalog: startup, edit-to-visible latency and peak RSS, over HTTP.

python -m bench.live --skills 10000

Starts `skillwire serve ROOT --http 127.0.0.1:0` (watching) on a generated catalog and measures
(edits start once the watcher's catch-up rescan after startup is done):
  - spawn to listening, cold (no cache) and warm (--digest-cache, second start), and the server's RSS;
  - edit to visible: append to one file of a random skill, then time (a) the `notifications/resources/list_changed`
    that the watcher's update sends on `subscriptions/listen` (the published catalog changed), and the new digest in
    `skills/get` right after it; (b) in separate trials, `skills/get` sent at once after the write (it re-checks its
    own folder, so it never needs the watcher);
  - peak RSS (VmHWM) of the server at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mcp import Client
from mcp.client.extension import advertise
from mcp.server.subscriptions import ResourcesListChanged

from bench.generate import generate
from skillwire.client.session import SkillsClient
from skillwire.core.wire import EXTENSION_ID


@dataclass
class Served:
    url: str
    process: subprocess.Popen[str]
    ready_s: float


def vm_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


@contextmanager
def serve(root: Path, *options: str) -> Iterator[Served]:
    command = [sys.executable, "-m", "skillwire", "serve", str(root), "--http", "127.0.0.1:0", "--quiet", *options]
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    found: list[str] = []
    ready = threading.Event()

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            if "listening on " in line and not found:
                found.append(line.rsplit("listening on ", 1)[1].strip())
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    ready.wait(600)
    if not found:
        process.kill()
        raise SystemExit(f"bench.live: `{' '.join(command)}` did not start")
    served = Served(found[0], process, time.perf_counter() - start)
    try:
        yield served
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def sha256(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def skill_of(root: Path, rng: random.Random, skills: int) -> tuple[str, Path]:
    i = rng.randrange(skills)
    prefix = ("team-a", "team-b", "team-c")[i % 3] + f"/area-{i % 17}"
    name = f"skill-{i:05d}"
    return f"skill://{prefix}/{name}/SKILL.md", root / prefix / name / "references" / "doc-0.md"


async def digest_in_get(client: SkillsClient, uri: str, target: Path) -> str:
    entry = await client.get_entry(uri)
    rel = target.parent.name + "/" + target.name
    assert not isinstance(entry.resources, str), "a folder skill is never dynamic"
    return next(r.digest for r in entry.resources if r.uri.endswith(rel))


async def edit_latencies(url: str, root: Path, skills: int, trials: int, settle_s: float) -> dict[str, list[float]]:
    rng = random.Random(7)
    out: dict[str, list[float]] = {"notified": [], "get_after_notice": [], "get_direct": []}
    async with Client(url, mode="auto", cache=None, extensions=[advertise(EXTENSION_ID)]) as sdk:
        client = SkillsClient(sdk)
        await asyncio.sleep(settle_s)  # the watcher's catch-up rescan after startup
        async with sdk.listen(resources_list_changed=True) as events:
            for trial in range(trials):
                uri, target = skill_of(root, rng, skills)
                await asyncio.sleep(0.3)  # let the previous update settle
                start = time.perf_counter()
                with target.open("ab") as fh:
                    fh.write(f"edit {trial} {time.time_ns()}\n".encode())
                expected = sha256(target)
                if trial % 2 == 0:
                    event = await asyncio.wait_for(events.__anext__(), 30)
                    assert isinstance(event, ResourcesListChanged)
                    out["notified"].append(time.perf_counter() - start)
                    assert await digest_in_get(client, uri, target) == expected
                    out["get_after_notice"].append(time.perf_counter() - start)
                else:
                    got = await digest_in_get(client, uri, target)
                    out["get_direct"].append(time.perf_counter() - start)
                    assert got == expected, "skills/get answered with an old digest"
                    await asyncio.wait_for(events.__anext__(), 30)  # drain the watcher's notice for this edit
    return out


def ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    return f"{statistics.median(values) * 1000:.0f} / {max(values) * 1000:.0f}"


def run(root: Path, skills: int, trials: int) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp, "digests.json")
        with serve(root) as cold:
            rows.append(("cold start: spawn to listening (s)", f"{cold.ready_s:.2f}"))
            rows.append(("  RSS at ready (MB)", f"{vm_kib(cold.process.pid, 'VmRSS') / 1024:.0f}"))
            lat = asyncio.run(edit_latencies(cold.url, root, skills, trials, settle_s=5.0))
            rows.append(("edit -> list_changed sent, median / max (ms)", ms(lat["notified"])))
            rows.append(("edit -> new digest in skills/get after it (ms)", ms(lat["get_after_notice"])))
            rows.append(("edit -> skills/get sent at once: new digest (ms)", ms(lat["get_direct"])))
            rows.append(("peak RSS, VmHWM, 10k loaded + edits (MB)", f"{vm_kib(cold.process.pid, 'VmHWM') / 1024:.0f}"))
        with serve(root, "--digest-cache", str(cache)):
            pass  # writes the cache
        time.sleep(2.1)  # files changed in the last 2 s are not remembered by their stamps
        with serve(root, "--digest-cache", str(cache)):
            pass
        with serve(root, "--digest-cache", str(cache), "--no-watch") as warm:
            rows.append(("warm start (--digest-cache): spawn to listening (s)", f"{warm.ready_s:.2f}"))
            time.sleep(3)  # the background check of the disk
            rows.append(
                ("  peak RSS after the background check (MB)", f"{vm_kib(warm.process.pid, 'VmHWM') / 1024:.0f}")
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--root", type=Path, help="an existing catalog made by bench.generate (default: generate one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.root or Path(tmp, "skills")
        if args.root is None:
            generate(root, skills=args.skills, files=5)
        rows = run(root, args.skills, args.trials)
    python = sys.version.split()[0]
    print(
        f"live server, {args.skills:,} skills x 5 files, {args.trials} edits (python {python}, {os.cpu_count()} cores)"
    )
    width = max(len(r[0]) for r in rows) + 2
    for label, value in rows:
        print(f"{label:<{width}}{value:>12}")


if __name__ == "__main__":
    main()
