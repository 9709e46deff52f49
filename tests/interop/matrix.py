"""The interop matrix from the last run of tests/interop: one row per client, server, transport and era.

    .venv/bin/pytest tests/interop && .venv/bin/python -m tests.interop.matrix

Reads the summaries the tests left in test-artifacts/interop/ and prints a Markdown table (also written to
test-artifacts/interop/matrix.md). "files verified" counts distinct files whose bytes the client checked
against the manifest digest and which equal the file on disk; "reads" counts every verified read (a nested
skill's files are also files of the skill around it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.interop.clients import ARTIFACTS

HEADER = ("client", "server", "transport", "era (protocol version)", "skills", "files verified", "reads", "failures")


def rows(folder: Path) -> list[dict[str, Any]]:
    """The recorded runs, sorted by client, server, transport and era."""
    found = [json.loads(path.read_text(encoding="utf-8")) for path in folder.glob("*.json")]
    return sorted(found, key=lambda r: (r["client"], r["server"], r["transport"], r["era"]))


def table(runs: list[dict[str, Any]]) -> str:
    """A Markdown table of `runs`."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for run in runs:
        era = f"{run['era']} ({run['protocol_version'] or 'as requested'})"
        cells = (
            run["client"],
            run["server"],
            run["transport"],
            era,
            str(len(run["skills"])),
            str(run["files_verified"]),
            str(run["verified"]),
            str(len(run["failures"])),
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    runs = rows(ARTIFACTS)
    if not runs:
        sys.stderr.write(f"no interop runs recorded in {ARTIFACTS}: run `pytest tests/interop` first\n")
        return 1
    text = table(runs)
    (ARTIFACTS / "matrix.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
