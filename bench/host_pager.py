"""Seconds `Host.add_server` takes against servers that page forever (issue 19, hole 8), and why each listing ended.

Runs the hostile server's pagers as real processes over HTTP and stdio: empty-pager (empty pages, a fresh cursor
each), repeating-pager (the same skill on every page) and endless-pager (one new skill a page), each page
`--page-delay` seconds away (a server across a network). A pager that adds nothing should end within 10 s; one
that keeps adding runs to the page, entry, byte or time limits. The seconds include starting a stdio server.

    python -m bench.host_pager                           # pages 10 ms apart
    python -m bench.host_pager --page-delay 0 --only empty-pager
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Sequence

from tests.support.flood import hostile_command, hostile_http

from skillwire.host.host import Host

PAGERS = ("empty-pager", "repeating-pager", "endless-pager")


async def _add(target: str | list[str]) -> tuple[float, int, str]:
    """add_server's seconds, the skills listed, and why the listing ended."""
    async with Host() as host:
        start = time.perf_counter()
        await host.add_server("pages", target)
        seconds = time.perf_counter() - start
        problems = host.problems("pages")
        ended = str(problems[-1]).split(": ", 1)[-1] if problems else "complete"
        return seconds, len(host.catalog()), ended


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.host_pager", description=__doc__.splitlines()[0])
    parser.add_argument("--page-delay", default="0.01", help="seconds before each page (default 0.01)")
    parser.add_argument("--only", choices=PAGERS, action="append", help="one pager (repeatable; default all)")
    args = parser.parse_args(argv)
    options = ("--page-delay", args.page_delay)
    print(f"Host.add_server against endless pagers, pages {args.page_delay} s apart")
    print(f"{'pager':<17}{'wire':<7}{'seconds':>9}{'skills':>8}  ended")
    for pager in args.only or PAGERS:
        with hostile_http(pager, *options) as url:
            rows = [("http", asyncio.run(_add(url)))]
        rows.append(("stdio", asyncio.run(_add(hostile_command(pager, *options, "--exit-on-hangup")))))
        for wire, (seconds, skills, ended) in rows:
            print(f"{pager:<17}{wire:<7}{seconds:>9.1f}{skills:>8,}  {ended}")


if __name__ == "__main__":
    main()
