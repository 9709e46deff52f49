"""The digest cache's columns (skillwire choice, issue 13): a restore publishes what a cold scan does, and a body that
is truncated, or whose counts, indexes or lengths disagree, is ignored whole with a warning, never half used."""

from __future__ import annotations

import json
import logging
import os
import struct
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from skillwire.core.catalog import Catalog
from skillwire.sources.folder import source as filesystem
from skillwire.sources.folder.cache_layout import ColumnRows, decode, encode
from skillwire.sources.folder.snapshot import snapshot_of
from skillwire.sources.folder.source import FolderSource

LENGTH = struct.Struct("<Q")
ROOT_COLUMNS = ("folders", "hints", "lines", "no_rules", "counts", "rels", "digests", "mimes", "sizes", "stamps")


@pytest.fixture(autouse=True)
def trust_fresh_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files in these tests are seconds old: let the cache remember them anyway."""
    monkeypatch.setattr(filesystem, "RACY_NS", 0)


def skill_md(name: str) -> str:
    return f"---\nname: {name}\ndescription: Does {name}\nmetadata:\n  n: '1'\n---\n# {name}\n"


def varied_root(tmp_path: Path) -> Path:
    """Skills with what the layout keeps apart: a folder reached through a link, files recorded apart (links),
    empty folders, a nested skill, non-ASCII names, a refused skill, and a binary file."""
    root = tmp_path / "skills"
    for rel in ("real-team/pdf", "real-team/pdf/inner", "docs/receipts", "broken"):
        (root / rel).mkdir(parents=True)
        (root / rel / "SKILL.md").write_text(skill_md(rel.rsplit("/", 1)[-1]), encoding="utf-8")
    (root / "broken" / "SKILL.md").write_text("no frontmatter\n")
    (root / "real-team" / "pdf" / "forms" / "empty").mkdir(parents=True)
    (root / "real-team" / "pdf" / "blob.bin").write_bytes(b"\x00\xff" * 10)
    (root / "docs" / "receipts" / "reçu.md").write_text("reçu\n", encoding="utf-8")
    (root / "common" / "refs").mkdir(parents=True)
    (root / "common" / "shared.md").write_text("shared\n")
    (root / "common" / "refs" / "guide.md").write_text("guide\n")
    os.symlink(root / "common" / "shared.md", root / "docs" / "receipts" / "shared.md")
    os.symlink(root / "common" / "refs", root / "docs" / "receipts" / "refs")
    os.symlink(root / "real-team", root / "team")
    return root


def published(catalog: Catalog) -> list[object]:
    files = catalog.files_page(None, 10_000).items
    return [
        [s.to_entry() for s in catalog.skills],
        [(f.file, f.content, f.skills, f.is_skill_md) for f in files],
        [(r.path, r.rule, r.message) for r in catalog.refusals],
        [catalog.children_page(s.uri.rpartition("/")[0], None, 100).items for s in catalog.skills],
    ]


def test_a_restore_from_the_columns_publishes_what_a_cold_scan_does(tmp_path: Path) -> None:
    """Links (a skill folder and files recorded apart), empty folders, nested skills, non-ASCII names and refusals
    all come back: the restored catalog, and the scan after it, equal a cold scan."""
    root = varied_root(tmp_path)
    cache = tmp_path / "digests.bin"
    cold = FolderSource([root]).scan()
    assert {s.uri for s in cold.skills} >= {"skill://team/pdf/SKILL.md", "skill://docs/receipts/SKILL.md"}
    FolderSource([root], digest_cache=cache).scan()
    source = FolderSource([root], digest_cache=cache)
    restored = source.restore()
    assert restored is not None
    assert published(restored) == published(cold)
    assert restored.is_directory("skill://team/pdf/forms/empty")
    assert published(source.scan(1)) == published(cold)


def test_encoding_a_decoded_body_gives_the_same_bytes(tmp_path: Path) -> None:
    """The layout has one spelling of a snapshot: what `decode` reads, `encode` writes back byte for byte."""
    root = varied_root(tmp_path)
    cache = tmp_path / "digests.bin"
    FolderSource([root], digest_cache=cache).scan()
    body = cache.read_bytes().partition(b"\n")[2]
    snapshot = decode(body)
    part = snapshot.per_root[0]
    assert part is not None
    assert any(row.moved for row in part.rows)
    assert any(row.folders for row in part.rows)
    assert any(row.real_dir != part.real + "/" + row.folder for row in part.rows)  # team/pdf is real-team/pdf
    assert encode(snapshot) == body


def test_decoded_rows_are_made_when_asked_and_equal_the_rows_written(tmp_path: Path) -> None:
    """skillwire choice (issue 23): a decoded root keeps its columns and makes a row when asked (a restore asks for
    few); what it makes, from either end or a slice, is what `snapshot_of` wrote."""
    root = varied_root(tmp_path)
    source = FolderSource([root])
    source.scan()
    written = snapshot_of(source.roots, source._states, source._index, source._publish_refusals)
    part, decoded = written.per_root[0], decode(encode(written)).per_root[0]
    assert part is not None
    assert decoded is not None
    rows = decoded.rows
    assert isinstance(rows, ColumnRows)
    assert list(rows) == list(part.rows)
    assert rows[-1] == part.rows[-1]
    assert rows[1:3] == list(part.rows[1:3])
    with pytest.raises(IndexError):
        rows[len(rows)]
    assert [rows.real_dir(k) for k in range(len(rows))] == [row.real_dir for row in part.rows]
    assert [rows.file_count(k) for k in range(len(rows))] == [len(row.rels) for row in part.rows]
    usual = [part.real + "/" + row.folder if row.folder else part.real for row in part.rows]
    assert rows.unusual() == [k for k, row in enumerate(part.rows) if row.moved or row.real_dir != usual[k]]
    assert rows.unusual()  # team/pdf is reached through a link, docs/receipts records files apart
    assert ColumnRows.of(part.real, part.rows)[0] == part.rows[0]


def sections_of(body: bytes) -> list[bytes]:
    found, at = [], 0
    while at < len(body):
        (length,) = LENGTH.unpack_from(body, at)
        found.append(body[at + LENGTH.size : at + LENGTH.size + length])
        at += LENGTH.size + length
    return found


def joined(sections: list[bytes]) -> bytes:
    return b"".join(LENGTH.pack(len(s)) + s for s in sections)


def with_meta(edit: Callable[[dict[str, object]], None]) -> Callable[[list[bytes]], None]:
    def forge(sections: list[bytes]) -> None:
        meta = json.loads(sections[0])
        edit(meta)
        sections[0] = json.dumps(meta).encode()

    return forge


def column(name: str, change: Callable[[bytes], bytes]) -> Callable[[list[bytes]], None]:
    def forge(sections: list[bytes]) -> None:
        k = 1 + ROOT_COLUMNS.index(name)
        sections[k] = change(sections[k])

    return forge


def first_root(meta: dict[str, object]) -> dict[str, object]:
    parts = meta["per_root"]
    assert isinstance(parts, list)
    found: dict[str, object] = parts[0]
    return found


FORGERIES: dict[str, Callable[[list[bytes]], None]] = {
    "a-section-missing": lambda s: s.__delitem__(-1),
    "a-section-left-over": lambda s: s.append(b""),
    "other-byte-order": with_meta(lambda m: m.update(byteorder="big" if sys.byteorder == "little" else "little")),
    "a-skill-more-than-listed": with_meta(lambda m: first_root(m).update(skills=3)),
    "a-file-fewer-than-listed": column("rels", lambda c: c.rpartition(b"\n")[0]),
    "a-digest-more-than-listed": column("digests", lambda c: c + b"\nsha256:00"),
    "counts-that-do-not-add-up": column("counts", lambda c: struct.pack("<q", 1) + c[8:]),
    "a-skill-with-no-file": column("counts", lambda c: struct.pack("<q", 0) + c[8:]),
    "a-mime-index-past-the-table": column("mimes", lambda c: struct.pack("<H", 999) + c[2:]),
    "a-rule-flag-of-two": column("no_rules", lambda c: b"\x02" + c[1:]),
    "a-negative-size": column("sizes", lambda c: struct.pack("<q", -1) + c[8:]),
    "a-ragged-number-column": column("stamps", lambda c: c[:-3]),
    "a-name-not-utf8": column("rels", lambda c: b"\xff" + c),
    "a-name-with-a-control-character": column("rels", lambda c: c.replace(b"SKILL.md", b"SKILL\x07md", 1)),
    "a-name-with-a-c1-control": column("rels", lambda c: c.replace(b"SKILL.md", "SKILL\x85md".encode(), 1)),
    "a-name-with-a-backslash": column("folders", lambda c: c.replace(b"alpha", b"al\\pha", 1)),
    "a-file-climbing-out": column("rels", lambda c: c.replace(b"refs/a.md", b"refs/../../a.md", 1)),
    "a-folder-climbing-out": column("folders", lambda c: b"../../etc" + c[c.index(b"\n") :]),
    "an-empty-folder-of-another-skill": with_meta(lambda m: first_root(m).update(folders={"7": ["x"]})),
    "a-link-of-a-number": with_meta(lambda m: first_root(m).update(moved={"0": {"a": 1}})),
}


@pytest.mark.parametrize("forgery", FORGERIES.values(), ids=FORGERIES.keys())
def test_a_body_whose_columns_disagree_is_ignored_whole(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, forgery: Callable[[list[bytes]], None]
) -> None:
    """Every length, count, index and name is checked before anything is published: the restore declines with a
    warning, and the scan indexes the disk as if there were no cache (then rewrites it)."""
    root = tmp_path / "skills"
    for name in ("alpha", "beta"):
        (root / name / "refs").mkdir(parents=True)
        (root / name / "SKILL.md").write_text(skill_md(name))
        (root / name / "refs" / "a.md").write_text(f"{name}\n")
    cache = tmp_path / "digests.bin"
    cold = FolderSource([root], digest_cache=cache).scan()
    header, _, body = cache.read_bytes().partition(b"\n")
    sections = sections_of(body)
    assert len(sections) == 1 + len(ROOT_COLUMNS)
    forgery(sections)
    cache.write_bytes(header + b"\n" + joined(sections))
    with caplog.at_level(logging.WARNING, logger="skillwire.sources"):
        assert FolderSource([root], digest_cache=cache).restore() is None
    assert any("ignored" in r.getMessage() for r in caplog.records)
    assert published(FolderSource([root], digest_cache=cache).scan()) == published(cold)
    assert FolderSource([root], digest_cache=cache).restore() is not None  # rewritten whole


def test_every_truncation_of_the_body_is_ignored(tmp_path: Path) -> None:
    """A cache cut short anywhere (a crash while copying it, a full disk) never publishes part of a catalog."""
    root = tmp_path / "skills"
    (root / "alpha").mkdir(parents=True)
    (root / "alpha" / "SKILL.md").write_text(skill_md("alpha"))
    cache = tmp_path / "digests.bin"
    FolderSource([root], digest_cache=cache).scan()
    whole = cache.read_bytes()
    start = whole.index(b"\n") + 1
    for cut in range(start, len(whole)):
        cache.write_bytes(whole[:cut])
        assert FolderSource([root], digest_cache=cache).restore() is None, cut


DEEP = "[" * 100_000 + "]" * 100_000  # JSON nested past the interpreter's recursion limit


@pytest.mark.parametrize("where", ["header", "meta", "hint"])
def test_json_nested_too_deep_anywhere_in_the_cache_is_ignored_not_a_crash(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, where: str
) -> None:
    """A RecursionError while decoding (the header, the JSON section, or a recorded frontmatter that a scan
    compares) failed the start; the cache is ignored with a warning and the disk indexed as without one."""
    root = tmp_path / "skills"
    (root / "alpha").mkdir(parents=True)
    (root / "alpha" / "SKILL.md").write_text(skill_md("alpha"))
    cache = tmp_path / "digests.bin"
    cold = FolderSource([root], digest_cache=cache).scan()
    header, _, body = cache.read_bytes().partition(b"\n")
    sections = sections_of(body)
    if where == "header":
        header = DEEP.encode()
    elif where == "meta":
        sections[0] = DEEP.encode()
    else:
        sections[1 + ROOT_COLUMNS.index("hints")] = DEEP.encode()
    cache.write_bytes(header + b"\n" + joined(sections))
    with caplog.at_level(logging.WARNING, logger="skillwire.sources"):
        assert published(FolderSource([root], digest_cache=cache).scan()) == published(cold)
    assert any("ignored" in r.getMessage() for r in caplog.records)
