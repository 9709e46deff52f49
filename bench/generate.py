"""Generate a synthetic catalog of skills for benchmarks.

python -m bench.generate OUT --skills 1000 --files 5
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path


def generate(out: Path, *, skills: int, files: int, seed: int = 2640) -> int:
    """Write `skills` skills of `files` files each (SKILL.md included) under `out`; return bytes written."""
    rng = random.Random(seed)
    written = 0
    for i in range(skills):
        prefix = ("team-a", "team-b", "team-c")[i % 3] + f"/area-{i % 17}"
        name = f"skill-{i:05d}"
        folder = out / prefix / name
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
            size = int(rng.lognormvariate(7.5, 1.2))  # median ~1.8 KB, long tail
            data = rng.randbytes(size // 2).hex().encode()[:size]
            (folder / "references" / f"doc-{j}.md").write_bytes(data)
            written += len(data)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--files", type=int, default=5)
    args = parser.parse_args()
    total = generate(args.out, skills=args.skills, files=args.files)
    print(f"wrote {args.skills} skills x {args.files} files, {total:,} bytes, under {args.out}")


if __name__ == "__main__":
    main()
