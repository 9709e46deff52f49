"""`PackageSource.watch` in process, on an import-path folder the test writes as pip does (skillwire choices).

The whole path through pip and a served venv is tests/server/test_packages_watched.py; here the order of pip's
writes is taken apart, which pip itself does too quickly to show.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from skillwire.sources.packages.source import PackageSource
from skillwire.sources.port import WatchPace
from tests.support.wheels import package_files

pytestmark = pytest.mark.anyio

DEADLINE_S = 30.0  # detects a freeze only
QUIET_S = 1.0  # no rescan for this long: the watcher has settled on what it saw
PACE = WatchPace(debounce_ms=200, step_ms=20)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Rescans:
    """A rebuild callback that rescans the source, keeping the last catalog and how many rescans ran."""

    def __init__(self, source: PackageSource) -> None:
        self.source = source
        self.catalog = source.scan()
        self.count = 0

    async def __call__(self, places: Sequence[str] | None) -> None:
        self.catalog = await anyio.to_thread.run_sync(self.source.scan)
        self.count += 1

    def uris(self) -> list[str]:
        return [s.uri for s in self.catalog.skills]

    async def settle(self) -> None:
        """Wait until no rescan has run for QUIET_S."""
        with anyio.fail_after(DEADLINE_S):
            while True:
                seen = self.count
                await anyio.sleep(QUIET_S)
                if self.count == seen:
                    return


async def test_entry_points_written_into_a_metadata_folder_after_it_appeared_are_seen(tmp_path: Path) -> None:
    """pip creates `NAME-VERSION.dist-info` before writing `entry_points.txt` into it: a rescan between the two
    finds no skills, and the later write must still bring them in (metadata folders are watched themselves)."""
    site = tmp_path / "site"
    late = {"late/SKILL.md": b"---\nname: late\ndescription: Late.\n---\n"}
    for rel, data in package_files("late_skills", late).items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(data)
    source = PackageSource(path=[str(site)])
    rescans = Rescans(source)
    async with anyio.create_task_group() as tg:
        await tg.start(lambda task_status: source.watch(rescans, pace=PACE, task_status=task_status))
        metadata = site / "late_skills-1.0.dist-info"
        metadata.mkdir()
        (metadata / "METADATA").write_bytes(b"Metadata-Version: 2.1\nName: late-skills\nVersion: 1.0\n")
        before = rescans.count
        await rescans.settle()
        assert rescans.count > before  # the metadata folder was seen...
        assert rescans.uris() == []  # ...with no entry points yet
        (metadata / "entry_points.txt").write_bytes(b"[skillwire.skills]\nmain = late_skills:skills\n")
        with anyio.fail_after(DEADLINE_S):
            while rescans.uris() != ["skill://late/SKILL.md"]:
                await anyio.sleep(0.05)
        tg.cancel_scope.cancel()
