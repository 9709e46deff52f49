"""Generate a synthetic catalog of skills for benchmarks.

python -m bench.generate OUT --skills 1000 --files 5 [--prefixes 51] [--median-bytes 1808] [--nested 0.1]

Skills sit under `team-X/area-Y/` prefixes; each has a SKILL.md and `files - 1` reference files whose sizes
follow a log-normal distribution around `median_bytes` (a long tail of larger files); with `nested`, that
fraction of skills also holds a nested skill (counted in `skills`). The same seed gives the same catalog.
"""

from __future__ import annotations

import argparse
import math
import random
from pathlib import Path


def generate(
    out: Path,
    *,
    skills: int,
    files: int,
    seed: int = 2640,
    prefixes: int = 51,
    median_bytes: int = 1808,
    nested: float = 0.0,
) -> int:
    """Write `skills` skills of `files` files each (SKILL.md included) under `out`; return bytes written."""
    rng = random.Random(seed)
    written = 0
    mu = math.log(median_bytes)
    areas = max(1, prefixes // 3)
    outer: Path | None = None
    for i in range(skills):
        name = f"skill-{i:05d}"
        if nested and outer is not None and rng.random() < nested:
            prefix = str(outer.relative_to(out))  # a skill inside the previous one
            outer = None
        else:
            prefix = ("team-a", "team-b", "team-c")[i % 3] + f"/area-{i % areas}"
        folder = out / prefix / name
        outer = folder
        (folder / "references").mkdir(parents=True, exist_ok=True)
        skill_md = (
            f"---\nname: {name}\ndescription: Synthetic skill number {i} for benchmarks\n"
            f"license: MIT\nmetadata:\n  owner: {prefix}\n  version: '1.{i % 10}'\n---\n\n# {name}\n\n"
            + "Follow the steps.\n"
            * rng.randint(5, 40)
        )
        (folder / "SKILL.md").write_text(skill_md)
        written += len(skill_md)
        for j in range(files - 1):
            size = int(rng.lognormvariate(mu, 1.2))
            data = rng.randbytes(size // 2).hex().encode()[:size]
            (folder / "references" / f"doc-{j}.md").write_bytes(data)
            written += len(data)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--prefixes", type=int, default=51, help="how many team/area folders (default 51)")
    parser.add_argument("--median-bytes", type=int, default=1808, help="median reference file size")
    parser.add_argument("--nested", type=float, default=0.0, help="fraction of skills nested in another")
    args = parser.parse_args()
    total = generate(
        args.out,
        skills=args.skills,
        files=args.files,
        prefixes=args.prefixes,
        median_bytes=args.median_bytes,
        nested=args.nested,
    )
    print(f"wrote {args.skills} skills x {args.files} files, {total:,} bytes, under {args.out}")


if __name__ == "__main__":
    main()
