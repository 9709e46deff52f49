"""`ByPath`, a rescan's view of the last scan's records: whatever the paths and whatever the order they are looked up
in (sorted, folder by folder, at random, some missing), it answers exactly as a dictionary of the records by path.

Its lookups start near the last record found and bisect everything only when the path lies elsewhere: a wrong
window would answer "not there" for a file that is, and the rescan would read and hash it again, or worse, pair a
path with another file's record.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillwire.sources.folder.records import ByPath, FileRecord, rel_of

# Names that sort around "/" and each other: "a" < "a-b" < "a.md" < "a/..." < "a0" < "aa".
_NAMES = st.sampled_from(("a", "b", "a-b", "a.md", "a0", "aa", "SKILL.md", "é", "名", "x y", "_", "~"))
_PATHS = st.lists(_NAMES, min_size=1, max_size=4).map("/".join)


def _records(paths: set[str]) -> list[FileRecord]:
    """One record per path in path order, split head + tail as a walk splits them (a folder's files share a head)."""
    records = []
    for path in sorted(paths):
        head, _, tail = path.rpartition("/")
        records.append(FileRecord(tail, None, head=head + "/" if head else ""))
    return records


@given(
    paths=st.sets(_PATHS, max_size=120),
    asked=st.lists(st.one_of(_PATHS, st.integers(min_value=0, max_value=200)), max_size=200),
)
def test_lookups_in_any_order_answer_as_a_dictionary(paths: set[str], asked: list[str | int]) -> None:
    records = _records(paths)
    by_path, expected = ByPath(records), {rel_of(r): r for r in records}
    ordered = sorted(paths)
    for item in asked:  # a path (maybe missing), or an index: a path that is there, from anywhere in the list
        rel = item if isinstance(item, str) else (ordered[item % len(ordered)] if ordered else "a")
        assert by_path.get(rel) is expected.get(rel)
    for rel in ordered:  # then in order, as the index looks them up, after the walk left the hint anywhere
        assert by_path[rel] is expected[rel]
    assert list(by_path) == ordered
    assert len(by_path) == len(expected)
