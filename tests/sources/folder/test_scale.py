"""A large index stays cheap to hold (skillwire choice, issue 13): what a scan leaves behind is out of the cyclic
collector's way, and the folder source keeps no second copy of what it wrote to the digest cache."""

from __future__ import annotations

import gc
from pathlib import Path

from skillwire.sources.folder.source import FolderSource
from tests.sources.folder.test_incremental import write_skill


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


def test_skills_share_the_strings_they_repeat(tmp_path: Path) -> None:
    """File names, frontmatter keys and short values, and path prefixes repeated across skills are held once."""
    for i in range(2):
        write_skill(tmp_path / f"team/s{i}")
        (tmp_path / f"team/s{i}/references").mkdir()
        (tmp_path / f"team/s{i}/references/guide.md").write_text(f"guide {i}\n")
    a, b = FolderSource([tmp_path]).scan().skills
    assert a.files[1].rel_path == "references/guide.md"
    assert a.files[1].rel_path is b.files[1].rel_path
    assert a.skill_path[0] is b.skill_path[0]
    key_a, key_b = next(iter(a.frontmatter)), next(iter(b.frontmatter))
    assert key_a is key_b
    assert a.frontmatter["description"] is b.frontmatter["description"]


def test_the_digest_cache_keeps_no_copy_of_what_it_wrote(tmp_path: Path) -> None:
    """After a scan writes the cache, no attribute of it holds the snapshot's text (100 MB at 100,000 skills), and
    an unchanged snapshot is still not written again."""
    for i in range(50):
        write_skill(tmp_path / "skills" / f"s{i:02d}", description="x" * 100)
    cache_file = tmp_path / "digests.json"
    source = FolderSource([tmp_path / "skills"], digest_cache=cache_file)
    source.scan()
    written = cache_file.stat()
    cache = source._cache
    assert cache is not None
    assert max((len(v) for v in vars(cache).values() if isinstance(v, (str, bytes))), default=0) < 1000
    source.scan(1)
    assert cache_file.stat().st_ino == written.st_ino  # not replaced: the same snapshot
