"""The optional on-disk digest cache: a warm start equals a cold one, and never vouches for changed bytes."""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import pytest

from skillwire.core.catalog import Catalog
from skillwire.sources.folder import source as filesystem
from skillwire.sources.folder.cache_layout import SkillRow, Snapshot
from skillwire.sources.folder.source import FolderSource
from tests.support.digest_cache_file import read_cache, write_cache


@pytest.fixture(autouse=True)
def trust_fresh_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files in these tests are seconds old: let the cache remember them anyway."""
    monkeypatch.setattr(filesystem, "RACY_NS", 0)


def make_catalog(root: Path) -> None:
    for name in ("alpha", "beta"):
        folder = root / "team" / name
        (folder / "scripts").mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Does {name}\nextra:\n  n: 1.5\n---\n")
        (folder / "scripts" / "run.py").write_text("print('hi')\n")
        (folder / "notes").write_bytes(b"plain text, no extension\n")
        (folder / "blob").write_bytes(b"\x00\x01binary")


def entries(catalog: Catalog) -> list[object]:
    return [
        [s.to_entry() for s in catalog.skills],
        [(f.file, f.content, f.skills, f.is_skill_md) for f in catalog.files_page(None, 10_000).items],
        [(r.path, r.rule) for r in catalog.refusals],
    ]


def digest_of(catalog: Catalog, suffix: str) -> str:
    return next(f.file.digest for f in catalog.files_page(None, 10_000).items if f.file.uri.endswith(suffix))


def test_warm_scan_equals_cold_scan_and_reads_only_skill_md(tmp_path: Path, opened: list[str]) -> None:
    """Digests and types of unchanged files come from the cache; frontmatter never does (SKILL.md is re-read)."""
    root, cache = tmp_path / "skills", tmp_path / "cache" / "digests.json"
    make_catalog(root)
    cold = FolderSource([root]).scan()
    first = FolderSource([root], digest_cache=cache).scan()
    assert cache.is_file()
    opened.clear()
    warm = FolderSource([root], digest_cache=cache).scan()  # a fresh source, as after a restart
    assert entries(warm) == entries(cold) == entries(first)
    assert sorted(os.path.relpath(p, tmp_path) for p in opened) == [
        "cache/digests.json",
        "skills/team/alpha/SKILL.md",
        "skills/team/beta/SKILL.md",
    ]


def test_same_size_edit_with_restored_mtime_is_rehashed(tmp_path: Path) -> None:
    """ctime covers it: any write (and utime itself) sets ctime to now, and no unprivileged call can set it back."""
    root, cache = tmp_path / "skills", tmp_path / "digests.json"
    make_catalog(root)
    target = root / "team" / "alpha" / "scripts" / "run.py"
    FolderSource([root], digest_cache=cache).scan()
    before = os.stat(target)
    target.write_text("print('yo')\n")  # same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(target)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    warm = FolderSource([root], digest_cache=cache).scan()
    assert digest_of(warm, "alpha/scripts/run.py") == "sha256:" + hashlib.sha256(b"print('yo')\n").hexdigest()


def test_touched_and_edited_files_get_their_new_digest(tmp_path: Path) -> None:
    root, cache = tmp_path / "skills", tmp_path / "digests.json"
    make_catalog(root)
    FolderSource([root], digest_cache=cache).scan()
    notes = root / "team" / "beta" / "notes"
    notes.write_bytes(b"\x00 now binary and longer\n")
    skill_md = root / "team" / "beta" / "SKILL.md"
    skill_md.write_text("---\nname: beta\ndescription: Changed\n---\n")
    os.utime(root / "team" / "alpha" / "blob")  # touched only: same bytes, same digest
    warm = FolderSource([root], digest_cache=cache).scan()
    cold = FolderSource([root]).scan()
    assert entries(warm) == entries(cold)
    assert digest_of(warm, "beta/notes") == "sha256:" + hashlib.sha256(notes.read_bytes()).hexdigest()
    served = next(f for f in warm.files_page(None, 100).items if f.file.uri.endswith("beta/notes"))
    assert served.file.mime_type == "application/octet-stream"  # re-sniffed, not the cached text/plain
    assert warm.skill("skill://team/beta/SKILL.md") is not None
    assert warm.skill("skill://team/beta/SKILL.md").frontmatter["description"] == "Changed"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "content",
    [b"not json", b'{"format": "skillwire-digest-cache", "version": 1, "entries": [[1, 2]]}', b"[]", b"\xff\xfe"],
)
def test_corrupt_cache_is_ignored_with_a_warning(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    root, cache = tmp_path / "skills", tmp_path / "digests.json"
    make_catalog(root)
    cache.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="skillwire.sources"):
        catalog = FolderSource([root], digest_cache=cache).scan()
    assert entries(catalog) == entries(FolderSource([root]).scan())
    assert any("corrupt" in r.getMessage() for r in caplog.records)
    restored = FolderSource([root], digest_cache=cache).restore()  # rewritten, whole
    assert restored is not None
    assert entries(restored) == entries(catalog)


def test_unreadable_or_unwritable_cache_never_fails_a_scan(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "skills"
    make_catalog(root)
    cache = tmp_path / "a-folder"
    cache.mkdir()
    with caplog.at_level(logging.WARNING, logger="skillwire.sources"):
        catalog = FolderSource([root], digest_cache=cache).scan()
    assert len(catalog) == 2
    assert caplog.records


def test_recently_changed_files_are_not_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    """A write in the same timestamp tick as the scan's stat would keep the key: such files are not cached."""
    monkeypatch.setattr(filesystem, "RACY_NS", 3600 * 10**9)
    root, cache = tmp_path / "skills", tmp_path / "digests.json"
    make_catalog(root)
    FolderSource([root], digest_cache=cache).scan()
    opened.clear()
    FolderSource([root], digest_cache=cache).scan()
    assert len([p for p in opened if not p.endswith("digests.json")]) == 8  # 2 skills x 4 files, all read again


# -- the catalog snapshot: restore() publishes without touching the disk ----------------------------------------------


def test_restore_publishes_the_last_catalog_reading_only_skill_md(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    """No folder is walked and, until a skill is used, nothing but the cache is read (skillwire choice, issue 23:
    a 100,000-skill restart publishes without reading 100,000 files); each skill's SKILL.md is read when it is
    first built, so its frontmatter comes from its bytes."""
    root, cache = tmp_path / "skills", tmp_path / "digests.json"
    make_catalog(root)
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text("no frontmatter\n")
    scanned = FolderSource([root], digest_cache=cache).scan()
    opened.clear()
    real_scandir = os.scandir

    def spy_scandir(path: str) -> object:
        opened.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", spy_scandir)
    source = FolderSource([root], digest_cache=cache)
    restored = source.restore(generation=0)
    assert restored is not None
    assert [os.path.relpath(p, tmp_path) for p in opened] == ["digests.json"]
    assert list(restored.skill_uris) == ["skill://team/alpha/SKILL.md", "skill://team/beta/SKILL.md"]
    assert entries(restored) == entries(scanned)
    assert sorted(os.path.relpath(p, tmp_path) for p in opened) == [
        "digests.json",
        "skills/team/alpha/SKILL.md",
        "skills/team/beta/SKILL.md",
    ]
    assert entries(restored) == entries(scanned)
    assert len(opened) == 3  # each SKILL.md read once: a skill is built once
    assert not source.verified
    assert source.changed("skill://team/alpha/SKILL.md")  # nothing checked yet: every skill may have changed
    monkeypatch.undo()
    assert entries(source.scan(1)) == entries(scanned)
    assert source.verified
    assert not source.changed("skill://team/alpha/SKILL.md")


def test_a_restored_catalog_is_corrected_by_the_first_scan(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root, cache = tmp_path / "skills", tmp_path / "digests.json"
    make_catalog(root)
    FolderSource([root], digest_cache=cache).scan()
    (root / "team" / "beta" / "SKILL.md").write_text("---\nname: beta\ndescription: Edited while down\n---\n")
    source = FolderSource([root], digest_cache=cache)
    stale = source.restore()
    assert stale is not None
    assert stale.skill("skill://team/alpha/SKILL.md") is not None
    assert stale.skill("skill://team/beta/SKILL.md") is None  # its SKILL.md no longer matches: left for the scan
    # Withdrawn from every answer, however asked (it was listed before anything was read).
    assert [s.uri for s in stale.skills] == ["skill://team/alpha/SKILL.md"]
    assert [s.uri for s in stale.skills_page(None, 10).items] == ["skill://team/alpha/SKILL.md"]
    assert stale.file("skill://team/beta/scripts/run.py") is None
    assert not any("Edited" in str(s.frontmatter) for s in stale.skills)
    assert caplog.text.count("does not match the disk") == 1, caplog.text  # said once, however often asked
    fresh = source.update([str(root / "team" / "beta" / "SKILL.md")], generation=1)  # the first change: a full scan
    assert entries(fresh) == entries(FolderSource([root]).scan())


def test_restore_needs_a_snapshot_for_the_same_roots(tmp_path: Path) -> None:
    root, cache = tmp_path / "skills", tmp_path / "digests.json"
    make_catalog(root)
    assert FolderSource([root], digest_cache=cache).restore() is None  # no cache file yet
    FolderSource([root], digest_cache=cache).scan()
    other = tmp_path / "other"
    other.mkdir()
    assert FolderSource([root, other], digest_cache=cache).restore() is None
    assert FolderSource([root]).restore() is None  # no cache configured


def test_a_snapshot_naming_a_file_outside_the_roots_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A cache file edited by someone else must not publish /etc/passwd as a skill file."""
    root, cache = tmp_path / "skills", tmp_path / "digests.json"
    make_catalog(root)
    FolderSource([root], digest_cache=cache).scan()
    honest = cache.read_bytes()
    secret = tmp_path / "secret.txt"
    secret.write_text("do not serve\n")

    def recorded_apart(row: SkillRow) -> SkillRow:
        return row._replace(moved={"scripts/run.py": str(secret)})

    def climbing_out(row: SkillRow) -> SkillRow:
        return row._replace(rels=[r.replace("scripts/run.py", "../../secret.txt") for r in row.rels])

    for tamper in (recorded_apart, climbing_out):
        cache.write_bytes(honest)
        header, snapshot = read_cache(cache)
        rows = first_rows(snapshot)
        rows[0] = tamper(rows[0])
        write_cache(cache, header, snapshot)
        assert cache.read_bytes() != honest
        with caplog.at_level(logging.WARNING, logger="skillwire.sources"):
            assert FolderSource([root], digest_cache=cache).restore() is None
        assert any("outside every root" in r.getMessage() for r in caplog.records)
        caplog.clear()


@pytest.mark.parametrize(
    "snapshot",
    [
        b"not json",
        b"[]",
        b'{"roots": []}',
        b'{"roots": ["ROOT"], "per_root": [{"real": "ROOT", "skills": [[1]]}], "refusals": []}',
        b'{"roots": ["ROOT"], "per_root": [{"real": "ROOT", "skills": []}], "refusals": [["x"]]}',
    ],
)
def test_a_corrupt_snapshot_is_ignored(tmp_path: Path, snapshot: bytes) -> None:
    root, cache = tmp_path / "skills", tmp_path / "digests.json"
    make_catalog(root)
    FolderSource([root], digest_cache=cache).scan()
    header, _ = cache.read_bytes().split(b"\n", 1)
    cache.write_bytes(header + b"\n" + snapshot.replace(b"ROOT", os.path.realpath(root).encode()))
    source = FolderSource([root], digest_cache=cache)
    assert source.restore() is None
    assert entries(source.scan()) == entries(FolderSource([root]).scan())


@pytest.mark.parametrize("restore_first", [False, True], ids=["scan", "restore-then-scan"])
def test_forged_frontmatter_that_python_calls_equal_is_replaced_by_the_parsed_one(
    tmp_path: Path, restore_first: bool
) -> None:
    """A cache whose frontmatter says 1 where SKILL.md says true (1 == True in Python) must not be published."""
    root, cache = tmp_path / "skills", tmp_path / "digests.json"
    make_catalog(root)
    (root / "team" / "alpha" / "SKILL.md").write_text("---\nname: alpha\ndescription: Does alpha\nbeta: true\n---\n")
    FolderSource([root], digest_cache=cache).scan()
    header, snapshot = read_cache(cache)
    rows = first_rows(snapshot)
    assert '"beta":true' in rows[0].hint
    rows[0] = rows[0]._replace(hint=rows[0].hint.replace('"beta":true', '"beta":1'))
    write_cache(cache, header, snapshot)
    source = FolderSource([root], digest_cache=cache)
    if restore_first:
        restored = source.restore()
        assert restored is not None
        assert restored.skill("skill://team/alpha/SKILL.md").frontmatter["beta"] is True  # type: ignore[union-attr]
    fm = source.scan(1).skill("skill://team/alpha/SKILL.md").frontmatter  # type: ignore[union-attr]
    assert fm["beta"] is True


@pytest.mark.parametrize("version", [3, 4, 5])
def test_a_cache_in_an_older_layout_is_ignored_not_trusted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, version: int
) -> None:
    """A cache written in another layout is never read (3 to 5 held JSON rows; 6 holds columns): the warning
    says why, the scan indexes the disk, and the cache is rewritten in the current layout."""
    root, cache = tmp_path / "skills", tmp_path / "digests.json"
    make_catalog(root)
    (root / "team" / "alpha" / "drafts").mkdir()
    FolderSource([root], digest_cache=cache).scan()
    header, _, body = cache.read_bytes().partition(b"\n")
    assert b'"version":6' in header
    old = header.replace(b'"version":6', f'"version":{version}'.encode())
    cache.write_bytes(old + b"\n" + body)
    with caplog.at_level(logging.WARNING, logger="skillwire.sources"):
        assert FolderSource([root], digest_cache=cache).restore() is None
    assert any(f"another layout (version {version})" in r.getMessage() for r in caplog.records)
    catalog = FolderSource([root], digest_cache=cache).scan()
    assert b'"version":6' in cache.read_bytes().partition(b"\n")[0]
    assert entries(catalog) == entries(FolderSource([root]).scan())
    assert catalog.is_directory("skill://team/alpha/drafts")


def first_rows(snapshot: Snapshot) -> list[SkillRow]:
    part = snapshot.per_root[0]
    assert part is not None
    assert isinstance(part.rows, list)  # read_cache makes them a list, to edit
    return part.rows
