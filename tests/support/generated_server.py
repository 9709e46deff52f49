"""A real MCP server of generated skills, built on skillwire's public API, for the generated-skill tests.

    python tests/support/generated_server.py                         # stdio
    python tests/support/generated_server.py --http 127.0.0.1:0      # prints "listening on URL" on stderr

`reports/daily` is generated: its SKILL.md body and `data/today.csv` change at every read (a counter), and
`broken/*` are generators that fail in each way a generator can: raise (with a secret in the message), hang,
produce more than the per-skill limit, return a value that is not content. `timeout` is 1 s so a hang is quick.
"""

from __future__ import annotations

import argparse
import itertools
import sys

import anyio

from skillwire import GeneratedSkill, GeneratedSource, ServeOptions, SkillService, SkillsExtension
from skillwire.service.run import bind, build_server, serve_http, serve_stdio

SECRET = "postgres://admin:hunter2@db.internal/reports"
"""What the failing generator's exception says: it must never reach a client."""

_reads = itertools.count(1)


def _today() -> str:
    """Blocking work is fine in a plain function: it runs on a worker thread."""
    return f"region,read\nnorth,{next(_reads)}\n"


async def _instructions() -> str:
    return f"# Daily report\n\nRead `data/today.csv` (read {next(_reads)}).\n"


def _raises() -> bytes:
    raise ConnectionError(f"cannot reach {SECRET}")


async def _hangs() -> str:
    await anyio.sleep_forever()
    return ""


def _too_large() -> bytes:
    return b"x" * (16 * 1024 * 1024 + 1)


def _not_content() -> object:
    return {"rows": 3}


SKILLS = [
    GeneratedSkill(
        "reports/daily",
        description="Assemble today's operational report from live data",
        instructions=_instructions,
        files={"data/today.csv": _today, "templates/summary.md": "# Summary\n"},
        frontmatter={"license": "MIT"},
    ),
    GeneratedSkill(
        "broken",
        description="Generators that fail",
        instructions="Each file fails differently.\n",
        files={
            "raises.txt": _raises,
            "hangs.txt": _hangs,
            "too-large.bin": _too_large,
            "not-content.txt": _not_content,  # type: ignore[dict-item]  # a typing mistake the server survives
        },
    ),
]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", metavar="HOST:PORT")
    args = parser.parse_args(argv)
    extension = SkillsExtension(SkillService(GeneratedSource(SKILLS, timeout=1.0), ServeOptions()))
    server = build_server(extension, name="generated")
    if args.http is None:
        anyio.run(serve_stdio, server)
        return
    host, _, port = args.http.rpartition(":")
    sock = bind(host, int(port))

    def ready(url: str) -> None:
        print(f"listening on {url}", file=sys.stderr, flush=True)

    anyio.run(lambda: serve_http(server, sock, on_ready=ready, service=extension.service))


if __name__ == "__main__":
    main(sys.argv[1:])
