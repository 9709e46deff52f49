"""Hot paths with and without a scopes policy: skills/list of every page, and one small read, in process.

python -m bench.scopes --skills 10000

Times `SkillService.list_skills` (all pages) and `read_resource` (one small file) on a generated catalog,
first with no policy (everything visible: the path every unscoped server takes), then, if this version of
skillwire has scopes, as a caller whose grant matches about half the skills. Best of `--runs`.
"""

from __future__ import annotations

import argparse
import inspect
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from bench.generate import generate
from skillwire.server.skill_service import ServeOptions, SkillService
from skillwire.sources.folder.source import FolderSource


def _best(runs: int, fn: Callable[[], Awaitable[None]]) -> float:
    async def timed() -> float:
        start = time.perf_counter()
        await fn()
        return time.perf_counter() - start

    return min(anyio.run(timed) for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--reads", type=int, default=2_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate(root, skills=args.skills, files=3)
        service = SkillService(FolderSource([root]), ServeOptions(page_size=100))
        catalog = service.catalog
        uri = catalog.skill_uris[len(catalog.skill_uris) // 2]
        scoped = "scope" in inspect.signature(service.list_skills).parameters
        variants: list[tuple[str, Any]] = [("no policy", None)]
        if scoped:
            from skillwire.core.scopes import Caller, parse_policy

            first = catalog.skill(catalog.skill_uris[0])
            assert first is not None
            top = first.skill_path[0]
            policy = parse_policy(f'[[grant]]\nsubject = "a"\nskills = ["{top}/**", "*", "*/*-?x*"]\n', origin="bench")
            variants.append(("policy, scoped caller", policy.visibility(Caller(subject="a"))))
            uri = catalog.skill_uris[0]
        for label, scope in variants:
            extra: dict[str, Any] = {} if scope is None else {"scope": scope}

            async def list_all(extra: dict[str, Any] = extra) -> None:
                cursor: str | None = None
                while True:
                    page = service.list_skills(cursor, modern=True, **extra)
                    cursor = page.get("nextCursor")
                    if cursor is None:
                        return

            async def reads(extra: dict[str, Any] = extra) -> None:
                for _ in range(args.reads):
                    await service.read_resource(uri, modern=True, **extra)

            listed = _best(args.runs, list_all)
            read = _best(args.runs, reads) / args.reads
            print(
                f"{label:<24} skills/list, all pages of {args.skills}: {listed * 1000:8.2f} ms   "
                f"one read: {read * 1e6:7.1f} us"
            )
            if scope is not None:
                from skillwire.core.scoped_catalog import ScopedCatalog

                start = time.perf_counter()
                visible = len(ScopedCatalog(catalog, scope))
                built = time.perf_counter() - start
                print(
                    f"{'':<24} first request after a rebuild builds the view: {built * 1000:.2f} ms "
                    f"({visible} of {len(catalog)} skills visible)"
                )


if __name__ == "__main__":
    main()
