"""A skills HTTP server over any source kind of `source_makers.MAKERS`, built on the public API only.

    python -m tests.support.source_server KIND FOLDER SCRATCH

Reads every file under FOLDER, gives them to the KIND maker (its own files go in SCRATCH, a folder the test
owns: this process is stopped by a signal, so it cannot clean up after itself), and serves the
source with `SkillsExtension` over streamable HTTP on a free loopback port. Prints "listening on URL" on stderr,
as `skillwire serve --http` does, so `tests.support.servers.http_server(command=...)` can start it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

from skillwire import SkillService, SkillsExtension
from skillwire.service.run import bind, build_server, serve_http
from skillwire.service.watch import LiveReload
from tests.support.source_makers import MAKERS, read_tree


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=sorted(MAKERS))
    parser.add_argument("folder", type=Path)
    parser.add_argument("scratch", type=Path)
    args = parser.parse_args()
    made = MAKERS[args.kind](read_tree(args.folder), args.scratch)
    service = SkillService(made.source)
    server = build_server(SkillsExtension(service))
    live = LiveReload(service, watch=False)
    live.install(server)
    sock = bind("127.0.0.1", 0)

    def ready(url: str) -> None:
        print(f"listening on {url}", file=sys.stderr, flush=True)

    anyio.run(lambda: serve_http(server, sock, on_ready=ready, live=live, service=service))


if __name__ == "__main__":
    main()
