"""Every benchmark, one after the other, on catalogs of the same size: `python -m bench --skills 10000`.

  bench.index  cold index vs the floor (walk + read + sha256), warm start, rescans, one-file update, memory
  bench.git    the git source beside the folder source: cold index, restart, re-index after a one-file commit
  bench.live   a live server: startup, edit-to-visible latency, peak RSS
  bench.scale  issue 13 point 5: cold index vs the floor, warm restart vs cold, a served skills/list
               enumeration, index memory per file, beside their targets (`--only scale --skills 100000`)
  bench.peers  skillwire beside agentskills-mcp-server, FastMCP's and the TypeScript SDK's skills servers and a
               bare SDK server: startup, skills/list enumeration and resources/read throughput over HTTP
  bench.startup  spawn to first answer (no-watch, watching, warm digest cache) beside the hash floor and the SDK floor
  bench.gateway  a gateway in front of skillwire serve: first start, restart, reads/s through it vs direct, memory
  bench.floor  issue 23's table: skillwire (watcher on, --no-watch, warm cache) beside the bare SDK floor and the
               TypeScript SDK v2's skills server, three runs: startup, skills/list, verified reads/s, CPU, memory
  bench.memory   a live server's RSS when ready, after a full listing, 5,000 verified reads and a read load, peak

Each prints its own table; `--only index,live` runs a subset. The peers are installed on first use into
virtual environments inside the checkout, under .cache/peers (see bench/peers.py; the TypeScript one with npm).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

PARTS = ("index", "git", "live", "scale", "peers", "startup", "gateway", "memory", "floor")


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--only", default=",".join(PARTS), help="comma-separated subset of " + ", ".join(PARTS))
    args = parser.parse_args()
    chosen = [p for p in args.only.split(",") if p]
    unknown = sorted(set(chosen) - set(PARTS))
    if unknown:
        parser.error(f"unknown part(s): {', '.join(unknown)}")
    failed = []
    for part in chosen:
        print(f"\n== bench.{part} --skills {args.skills} ==", flush=True)
        start = time.perf_counter()
        command = [sys.executable, "-m", f"bench.{part}", "--skills", str(args.skills)]
        code = subprocess.run(command, cwd=Path(__file__).resolve().parent.parent, check=False).returncode
        print(f"(bench.{part}: {time.perf_counter() - start:.0f} s, exit {code})", flush=True)
        if code != 0:
            failed.append(part)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
