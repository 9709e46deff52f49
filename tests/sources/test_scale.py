"""A large index stays cheap to hold (skillwire choice, issue 13): what a scan leaves behind is out of the cyclic
collector's way, and the folder source keeps no second copy of what it wrote to the digest cache."""

from __future__ import annotations

import gc
from pathlib import Path

from skillwire.sources.filesystem import FolderSource
from tests.sources.test_incremental import write_skill


def test_a_scan_freezes_its_index_so_full_collections_do_not_walk_it(tmp_path: Path) -> None:
    """Every skill object a scan built is in the permanent generation afterwards: a request that triggers a full
    collection does not walk the whole index (seconds at 100,000 skills)."""
    for i in range(20):
        write_skill(tmp_path / f"s{i:02d}")
    gc.unfreeze()
    catalog = FolderSource([tmp_path]).scan()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    tracked = {id(o) for o in gc.get_objects()}
    assert not any(id(s) in tracked or id(s.files) in tracked for s in catalog.skills)
    assert gc.isenabled()
