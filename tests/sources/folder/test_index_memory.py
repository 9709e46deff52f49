"""What an index keeps in memory (issue 23): bytes per indexed file bounded, and a rescan that keeps what it had.

Both are skillwire choices, measured without timing: tracemalloc counts the bytes the index holds (the same on
any machine for one Python version), and object identity shows what a rescan kept.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from pathlib import Path

import pytest
from bench.generate import generate

from skillwire.sources.digest_cache import RACY_NS
from skillwire.sources.folder.records import FileRecord, RootState, merged, rel_of
from skillwire.sources.folder.source import FolderSource

SKILLS, FILES = 300, 5
BYTES_PER_FILE = 680  # CPython 3.11: 635 (886 before issue 23), the skills' own share included


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated catalog (bench's generator), old enough that its files' stamps vouch for their bytes."""
    base = tmp_path_factory.mktemp("catalog")
    generate(base, skills=SKILLS, files=FILES)
    time.sleep(RACY_NS / 1e9 + 0.1)
    return base


def test_an_index_holds_a_bounded_number_of_bytes_per_file(root: Path) -> None:
    """Everything a scan keeps (the catalog's skills and files, the source's records for the next rescan) stays
    under BYTES_PER_FILE per file: no URI string per file, no second copy of what a skill shares."""
    FolderSource([root]).scan()  # what a scan imports on first use is not the index
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        source = FolderSource([root])
        catalog = source.scan()
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert catalog.file_count == SKILLS * FILES
    assert held / catalog.file_count <= BYTES_PER_FILE, held / catalog.file_count


def test_a_rescan_of_an_unchanged_tree_keeps_the_objects_it_had(root: Path) -> None:
    """A rescan (the watcher's catch-up, SIGHUP) of an unchanged tree keeps its file records, skill folders and
    published skills, so it frees the walk's copies together instead of leaving a second set beside holes."""
    source = FolderSource([root])
    first = source.scan()
    state = source._states[0]
    assert isinstance(state, RootState)
    records, folders, rules = list(state.files), list(state.skill_dirs), list(state.rules.values())
    second = source.scan()
    again = source._states[0]
    assert isinstance(again, RootState)
    assert again is not state
    assert len(again.files) == len(records) == SKILLS * FILES
    assert all(a is b for a, b in zip(again.files, records, strict=True))
    assert all(a is b for a, b in zip(again.skill_dirs, folders, strict=True))
    assert all(a is b for a, b in zip(again.rules.values(), rules, strict=True))
    assert all(a is b for a, b in zip(second.skills, first.skills, strict=True))


@pytest.mark.parametrize(
    "runs",
    [
        [["b/1", "b/2"], ["a/1", "a/x/2"], ["c"]],  # disjoint subtrees, out of order: put in order
        [["a/1", "c/1"], ["b/1", "b/2"], []],  # interleaving: merged one path at a time
        [["a-b/1"], ["a/1", "a/b/2"]],  # "-" sorts before "/"
    ],
)
def test_sorted_runs_of_records_come_out_in_path_order(runs: list[list[str]]) -> None:
    """`merged` (a cold scan's handed-off folders joined) gives the order a sort by path gives."""
    records = [
        [FileRecord(rel.rpartition("/")[2], None, head=rel.rpartition("/")[0] + "/") for rel in run] for run in runs
    ]
    everything = sorted((f for run in records for f in run), key=rel_of)
    assert [f.rel for f in merged(records)] == [f.rel for f in everything]


def test_a_rescan_never_changes_a_record_of_the_last_scan_in_place(tmp_path: Path) -> None:
    """The walk lists the last scan's own record for a file found where it was (`Walk.reuse`); if the file changed,
    a new record takes its place and the old one keeps what the last scan published."""
    generate(tmp_path, skills=3, files=2)
    time.sleep(RACY_NS / 1e9 + 0.1)
    source = FolderSource([tmp_path])
    source.scan()
    state = source._states[0]
    assert isinstance(state, RootState)
    [edited] = [f for f in state.files if f.rel.endswith("skill-00001/references/doc-0.md")]
    kept = [f for f in state.files if f is not edited]
    before = (edited.digest, edited.size, edited.stamp)
    (tmp_path / edited.rel).write_bytes(b"other bytes\n")
    catalog = source.scan()
    again = source._states[0]
    assert isinstance(again, RootState)
    assert (edited.digest, edited.size, edited.stamp) == before
    [now] = [f for f in again.files if f.rel == edited.rel]
    assert now is not edited
    assert now.size == len(b"other bytes\n")
    assert all(any(f is k for f in again.files) for k in kept)
    served = catalog.file("skill://" + edited.rel)
    assert served is not None
    assert served.file.size == now.size
