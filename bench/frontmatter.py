"""Frontmatter parse speed on real SKILL.md files: the usual route, and the general parser alone.

python -m bench.frontmatter FOLDER [FOLDER...]

Reads every SKILL.md below the folders and times, in microseconds per file (min and median of rounds):
  parse_skill_md   what a source does with each file (the fast paths take most real frontmatter)
  general parser   the same YAML with a leading comment line, which the fast path declines
Files that are refused (no frontmatter, bad YAML) are counted and left out of the timings.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from skillwire.core.errors import FrontmatterError
from skillwire.core.frontmatter import FRONTMATTER_BLOCK, parse_skill_md, parse_yaml_mapping


def _accepted(folders: list[Path]) -> tuple[list[bytes], int]:
    """The SKILL.md files below `folders` that parse, and how many were refused."""
    accepted: list[bytes] = []
    refused = 0
    for folder in folders:
        for path in sorted(folder.rglob("SKILL.md")):
            if not path.is_file():
                continue
            raw = path.read_bytes()
            try:
                parse_skill_md(raw)
            except FrontmatterError:
                refused += 1
            else:
                accepted.append(raw)
    return accepted, refused


def _time(label: str, work: Callable[[], None], count: int, rounds: int) -> None:
    """Run `work` `rounds` times and print min and median microseconds per item."""
    work()  # warm up
    per_item = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        per_item.append((time.perf_counter() - start) / count * 1e6)
    print(f"{label:<16} min {min(per_item):6.1f} us/file   median {statistics.median(per_item):6.1f} us/file")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    files, refused = _accepted(args.folders)
    if not files:
        parser.error("no SKILL.md with valid frontmatter below those folders")
    texts = []
    for raw in files:
        match = FRONTMATTER_BLOCK.match(raw.decode("utf-8").removeprefix("\ufeff"))
        assert match is not None  # parse_skill_md accepted it
        texts.append("# forces the general parser\n" + match.group(1))
    print(f"{len(files)} SKILL.md files with frontmatter ({refused} refused, not timed), {args.rounds} rounds")

    def skill_md() -> None:
        for raw in files:
            parse_skill_md(raw)

    def general() -> None:
        for text in texts:
            parse_yaml_mapping(text)

    _time("parse_skill_md", skill_md, len(files), args.rounds)
    _time("general parser", general, len(texts), args.rounds)


if __name__ == "__main__":
    main()
