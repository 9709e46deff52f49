"""Peak memory of the host commands against a huge answer to a 101-byte entry (issue 9's acceptance figure).

Runs real `skillwire inspect --verify` and `skillwire host --load` subprocesses against the hostile
server's `huge-read` scenario over HTTP and stdio, and prints each one's peak RSS as the kernel
reports it when the process is reaped (`wait4`). The acceptance bound is 150 MB for a 500 MB answer.

    python -m bench.host_flood                   # 500 MB (524,288,000 bytes)
    python -m bench.host_flood --flood-bytes 67108864
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence

from tests.support.flood import Measured, hostile_command, hostile_http, run_measured

DEFAULT_FLOOD = 500 * 1024 * 1024


def _skillwire(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillwire", *args]


def _report(name: str, run: Measured) -> None:
    last = (run.stdout.strip().splitlines() or [""])[-1]
    print(f"{name:<24} peak RSS {run.peak_rss_mib:6.1f} MiB  exit {run.returncode}  {last[:70]}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.host_flood", description=__doc__.splitlines()[0])
    parser.add_argument("--flood-bytes", type=int, default=DEFAULT_FLOOD, help="the size of the answer")
    args = parser.parse_args(argv)
    flood = ("--flood-bytes", str(args.flood_bytes))
    stdio = shlex.join(hostile_command("huge-read", *flood))
    print(f"a {args.flood_bytes:,}-byte answer to a 101-byte SKILL.md")
    with hostile_http("huge-read", *flood) as url:
        _report("inspect --verify (http)", run_measured(_skillwire("inspect", url, "--verify"), timeout=300))
        load = ("--load", "h:huge", "--yes")
        _report("host --load (http)", run_measured(_skillwire("host", "--server", f"h={url}", *load), timeout=300))
    _report("inspect --verify (stdio)", run_measured(_skillwire("inspect", stdio, "--verify"), timeout=300))
    _report("host --load (stdio)", run_measured(_skillwire("host", "--server", f"h={stdio}", *load), timeout=300))


if __name__ == "__main__":
    main()
