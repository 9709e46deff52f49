"""A real skills HTTP server whose source fails unexpectedly for one skill, for the -32603 tests.

    python -m tests.support.faulty_server ROOT --fail-on skill://broken/SKILL.md

Everything is the production path (`SkillService`, `SkillsExtension`, `build_server`, `serve_http` with its guard
and limits) over a real `FolderSource`; only the source's disk check (`changed`, run before `skills/get` and
directory reads) raises for the named skill, as a failing disk or network share might. The error's text names the
skill's folder and `SECRET`, which must never reach the wire. Prints "listening on URL" on stderr, as
`skillwire serve --http` does.
"""

from __future__ import annotations

import argparse
import logging
import sys

import anyio

from skillwire.server.extension import SkillsExtension
from skillwire.server.skill_service import SkillService
from skillwire.service.run import bind, build_server, serve_http
from skillwire.sources.folder.source import FolderSource

SECRET = "internal-detail-7f3a"


class FailingSource(FolderSource):
    """A folder source whose check of one skill raises an error no handler expects."""

    def __init__(self, roots: list[str], fail_on: str) -> None:
        super().__init__(roots)
        self.fail_on = fail_on

    def changed(self, skill_uri: str) -> bool:
        if skill_uri == self.fail_on:
            raise RuntimeError(f"disk check failed under {self.roots[0].resolve()}: {SECRET}")
        return super().changed(skill_uri)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--fail-on", required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    service = SkillService(FailingSource(args.roots, args.fail_on))
    server = build_server(SkillsExtension(service))
    sock = bind("127.0.0.1", 0)

    def ready(url: str) -> None:
        print(f"listening on {url}", file=sys.stderr, flush=True)

    anyio.run(lambda: serve_http(server, sock, on_ready=ready, service=service))


if __name__ == "__main__":
    main()
