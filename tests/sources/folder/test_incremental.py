"""Incremental re-indexing (skillwire choice): `FolderSource.update(paths)` re-walks only what the paths touch,
and the catalog it builds always equals a fresh scan of the same disk."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillwire.core.catalog import Catalog
from skillwire.sources.folder import index as folder_index
from skillwire.sources.folder import source as filesystem
from skillwire.sources.folder.source import FolderSource


def write_skill(folder: Path, description: str = "A skill", name: str | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name or folder.name}\ndescription: {description}\n---\n# Hi\n"
    (folder / "SKILL.md").write_text(text)


def picture(catalog: Catalog) -> dict[str, Any]:
    """Everything a client can observe of a catalog, plus its refusals."""
    return {
        "skills": [s.to_entry() for s in catalog.skills],
        "mime": {f.uri: f.mime_type for s in catalog.skills for f in s.files},
        "refusals": sorted((r.path, r.rule, r.skill) for r in catalog.refusals),
        "dirs": {
            s.root_uri: [c.uri for c in catalog.children_page(s.root_uri, None, 10_000).items] for s in catalog.skills
        },
        "folders": {s.uri: s.folders for s in catalog.skills},
    }


def make_tree(root: Path, skills: int = 30) -> None:
    for i in range(skills):
        folder = root / f"team-{i % 3}" / f"s{i:02d}"
        write_skill(folder)
        (folder / "refs").mkdir()
        (folder / "refs" / "a.md").write_text(f"ref {i}\n")


def test_an_edit_rereads_only_the_edited_file(
    tmp_path: Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filesystem, "RACY_NS", 0)  # trust stamps at once (the test cannot wait 2 s)
    make_tree(tmp_path)
    source = FolderSource([tmp_path])
    source.scan()
    edited = tmp_path / "team-1" / "s04" / "refs" / "a.md"
    edited.write_text("changed\n")
    opened.clear()
    catalog = source.update([str(edited)], generation=1)
    assert [os.path.basename(p) for p in opened] == ["a.md"]
    assert catalog.generation == 1
    assert picture(catalog) == picture(FolderSource([tmp_path]).scan())


def test_a_rescan_reads_only_files_whose_stat_changed(
    tmp_path: Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filesystem, "RACY_NS", 0)  # trust stamps at once (the test cannot wait 2 s)
    make_tree(tmp_path)
    source = FolderSource([tmp_path])
    source.scan()
    (tmp_path / "team-0" / "s03" / "SKILL.md").write_text("---\nname: s03\ndescription: New\n---\n")
    opened.clear()
    catalog = source.scan(1)
    assert [Path(p).relative_to(tmp_path).as_posix() for p in opened] == ["team-0/s03/SKILL.md"]
    skill = catalog.skill("skill://team-0/s03/SKILL.md")
    assert skill is not None
    assert skill.frontmatter["description"] == "New"


def test_a_file_written_just_before_a_scan_is_read_again(tmp_path: Path, opened: list[str]) -> None:
    """Stamps are coarser than writes: a file changed within RACY_NS of the last scan is not trusted by its stat."""
    make_tree(tmp_path, skills=2)
    source = FolderSource([tmp_path])
    source.scan()
    opened.clear()
    source.scan(1)
    assert len(opened) == 4  # every file was written moments ago, so every file is read again


# Each mutation changes the disk and returns the paths a watcher would report.
Mutation = Callable[[Path, random.Random], list[Path]]


def _skills(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("SKILL.md"))


def edit_file(root: Path, rng: random.Random) -> list[Path]:
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    target = rng.choice(files)
    target.write_bytes(target.read_bytes() + b"more\n")
    return [target]


def add_file(root: Path, rng: random.Random) -> list[Path]:
    folder = rng.choice([*_skills(root), root])
    target = folder / "deep" / f"new-{rng.randrange(10**6)}.md"
    target.parent.mkdir(exist_ok=True)
    target.write_text("new\n")
    return [target.parent, target]


def delete_skill(root: Path, rng: random.Random) -> list[Path]:
    skills = _skills(root)
    if not skills:
        return []
    target = rng.choice(skills)
    files = list(target.rglob("*"))
    shutil.rmtree(target)
    return [target, *files]


def add_skill(root: Path, rng: random.Random) -> list[Path]:
    parent = rng.choice([root, *[p for p in root.rglob("*") if p.is_dir()]])
    target = parent / f"n{rng.randrange(10**6)}"
    write_skill(target)
    return [target, target / "SKILL.md"]


def rename_folder(root: Path, rng: random.Random) -> list[Path]:
    folders = [p for p in root.rglob("*") if p.is_dir()]
    if not folders:
        return []
    source = rng.choice(folders)
    target = source.with_name(f"r{rng.randrange(10**6)}")
    moved = [target / p.relative_to(source) for p in source.rglob("*")]
    old = list(source.rglob("*"))
    source.rename(target)
    return [source, target, *old, *moved]


def break_frontmatter(root: Path, rng: random.Random) -> list[Path]:
    skills = _skills(root)
    if not skills:
        return []
    target = rng.choice(skills) / "SKILL.md"
    target.write_text(rng.choice(["no frontmatter\n", "---\nname: Wrong Name\ndescription: x\n---\n"]))
    return [target]


def ignore_file(root: Path, rng: random.Random) -> list[Path]:
    folder = rng.choice([root, *[p for p in root.rglob("*") if p.is_dir()]])
    target = folder / ".skillwireignore"
    target.write_text(rng.choice(["*.md\n!SKILL.md\n", "refs/\n", "deep\n", ""]))
    return [target]


def dangling_link(root: Path, rng: random.Random) -> list[Path]:
    folder = rng.choice([root, *[p for p in root.rglob("*") if p.is_dir()]])
    target = folder / f"link-{rng.randrange(10**6)}"
    target.symlink_to(folder / "nowhere")
    return [target]


def remove_skill_md(root: Path, rng: random.Random) -> list[Path]:
    skills = _skills(root)
    if not skills:
        return []
    target = rng.choice(skills) / "SKILL.md"
    target.unlink()
    return [target]


def unreadable_name(root: Path, rng: random.Random) -> list[Path]:
    """A file whose name no read can carry: a control character (C0, DEL, C1) or a backslash."""
    folder = rng.choice([root, *[p for p in root.rglob("*") if p.is_dir()]])
    odd = rng.choice(["tab\t", "esc\x1b[2J", "del\x7f", "c1\x9b", "back\\"])
    target = folder / f"{odd}{rng.randrange(10**6)}.md"
    target.write_text("odd\n")
    return [target]


def long_uri(root: Path, rng: random.Random) -> list[Path]:
    """A file so deep that its URI is longer than a read may be (MAX_URI_LENGTH)."""
    folder = rng.choice([root, *_skills(root)]) / "/".join(["\u00e9" * 120] * 6)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"deep-{rng.randrange(10**6)}.md"
    target.write_text("deep\n")
    return [target]


def ignored_broken_link(root: Path, rng: random.Random) -> list[Path]:
    """A dangling or self-looping link that the ignore rules name (built in, or a .skillwireignore)."""
    folder = rng.choice([root, *[p for p in root.rglob("*") if p.is_dir()]])
    name = rng.choice([".DS_Store", f"x{rng.randrange(10**6)}.tmp"])
    target = folder / name
    if target.is_symlink() or target.exists():
        return []
    (folder / ".skillwireignore").write_text("*.tmp\n")
    target.symlink_to(rng.choice(["nowhere", name]))
    return [folder / ".skillwireignore", target]


def add_empty_folder(root: Path, rng: random.Random) -> list[Path]:
    """An empty folder, maybe two deep, in a skill or beside one: a directory with no children."""
    folder = rng.choice([*_skills(root), root]) / f"empty-{rng.randrange(100)}"
    if rng.random() < 0.5:
        folder = folder / "deeper"
    folder.mkdir(parents=True, exist_ok=True)
    return [folder]


def empty_a_folder(root: Path, rng: random.Random) -> list[Path]:
    """Every file of a folder removed but an ignored one: the folder stays a directory, now with no children."""
    folders = sorted(p for p in root.rglob("*") if p.is_dir() and not p.is_symlink() and not (p / "SKILL.md").exists())
    if not folders:
        return []
    folder = rng.choice(folders)
    gone = [p for p in folder.iterdir() if p.is_file() or p.is_symlink()]
    for path in gone:
        path.unlink()
    (folder / ".DS_Store").write_bytes(b"ignored\n")
    return [*gone, folder / ".DS_Store"]


MUTATIONS: list[Mutation] = [
    add_empty_folder,
    empty_a_folder,
    unreadable_name,
    long_uri,
    ignored_broken_link,
    edit_file,
    add_file,
    delete_skill,
    add_skill,
    rename_folder,
    break_frontmatter,
    ignore_file,
    dangling_link,
    remove_skill_md,
]


@pytest.mark.parametrize("seed", range(12))
def test_updates_always_equal_a_fresh_scan(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "root"
    make_tree(root, skills=12)
    write_skill(root / "team-0" / "s00" / "inner")  # a nested skill
    source = FolderSource([root])
    source.scan()
    for step in range(25):
        mutation = rng.choice(MUTATIONS)
        paths = mutation(root, rng)
        catalog = source.update([str(p) for p in paths], generation=step + 1)
        fresh = FolderSource([root]).scan()
        assert picture(catalog) == picture(fresh), f"after step {step}: {mutation.__name__} {paths[:3]}"


def test_paths_outside_every_root_change_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make_tree(root, skills=3)
    source = FolderSource([root])
    before = source.scan()
    after = source.update([str(tmp_path / "elsewhere" / "x.md"), "/"], generation=1)
    assert picture(after) == picture(before)


def test_a_root_that_is_a_skill_is_rescanned_whole(tmp_path: Path) -> None:
    root = tmp_path / "solo"
    write_skill(root)
    source = FolderSource([root])
    source.scan()
    (root / "notes.md").write_text("n\n")
    catalog = source.update([str(root / "notes.md")], generation=1)
    skill = catalog.skill("skill://solo/SKILL.md")
    assert skill is not None
    assert [f.rel_path for f in skill.files] == ["SKILL.md", "notes.md"]


def test_a_root_with_links_is_rescanned_whole_and_stays_right(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write_skill(root / "real")
    (root / "alias").symlink_to(root / "real" / "SKILL.md")  # outside any skill: not served, but a link
    write_skill(root / "other")
    (root / "other" / "shared.md").symlink_to(root / "real" / "SKILL.md")
    source = FolderSource([root])
    source.scan()
    (root / "real" / "SKILL.md").write_text("---\nname: real\ndescription: Changed\n---\n")
    catalog = source.update([str(root / "real" / "SKILL.md")], generation=1)
    assert picture(catalog) == picture(FolderSource([root]).scan())


def test_files_removed_between_the_walk_and_the_read_are_just_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file renamed away mid-scan (an editor's atomic save) must not get its whole skill refused as unreadable."""
    monkeypatch.setattr(folder_index, "PROGRESS_EVERY", 1)
    root = tmp_path / "root"
    write_skill(root / "a")
    write_skill(root / "b")
    (root / "b" / "notes.md").write_text("going\n")
    write_skill(root / "c")
    removed: list[str] = []

    def remove_the_rest(done: int, total: int) -> None:  # called after each file is hashed, in path order
        if done == 1:
            (root / "b" / "notes.md").unlink()
            (root / "c" / "SKILL.md").unlink()
            removed.append("yes")

    catalog = FolderSource([root], progress=remove_the_rest).scan()
    assert removed
    assert [s.uri for s in catalog.skills] == ["skill://a/SKILL.md", "skill://b/SKILL.md"]
    b = catalog.skill("skill://b/SKILL.md")
    assert b is not None
    assert [f.rel_path for f in b.files] == ["SKILL.md"]
    assert catalog.refusals == ()
    assert picture(catalog) == picture(FolderSource([root]).scan())
