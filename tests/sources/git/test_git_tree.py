"""The git source walks a commit's tree by the folder source's rules: links, submodules, ignore files, odd names.

Each repository is made by the test with the real `git` command; where a rule is shared with folders, the git
catalog is compared with the folder catalog of a checkout of the same commit.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from skillwire.core.catalog import Catalog
from skillwire.sources.folder.source import FolderSource
from skillwire.sources.git.source import GitSource
from skillwire.sources.git.tree import MAX_DEPTH
from tests.support.git_repos import git, git_commit, git_init

SKILL = "---\nname: {name}\ndescription: A skill called {name}\n---\n\n# {name}\n"


def _skill(folder: Path, name: str | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(SKILL.format(name=name or folder.name))


def _shape(catalog: Catalog, prefix: str) -> tuple[dict[str, list[tuple[str, str, int]]], set[tuple[str, str, bool]]]:
    """Skills (URI -> files with digest and size) and refusals (path below `prefix`, rule, whole skill?)."""
    skills = {s.uri: [(f.rel_path, f.digest, f.size) for f in s.files] for s in catalog.skills}
    refusals = {(r.path.removeprefix(prefix), r.rule, r.skill) for r in catalog.refusals}
    return skills, refusals


def _same_as_checkout(repo: Path) -> tuple[Catalog, Catalog]:
    """The git catalog of `repo`'s HEAD and the folder catalog of its work tree, which the test checked in."""
    from_git = GitSource(repo).scan()
    from_folder = FolderSource([repo]).scan()
    git_shape = _shape(from_git, f"{repo}@HEAD:")
    folder_shape = _shape(from_folder, f"{repo}/")
    assert git_shape[0] == folder_shape[0]
    assert git_shape[1] == folder_shape[1]
    return from_git, from_folder


def test_links_inside_the_tree_are_followed_like_links_in_a_folder(tmp_path: Path) -> None:
    """skillwire choice, shared with folders: a link to a file or a folder inside the root is served as its target."""
    repo = git_init(tmp_path / "repo")
    _skill(repo / "shared" / "base")
    (repo / "shared" / "base" / "guide.md").write_text("the guide\n")
    _skill(repo / "pdf")
    (repo / "pdf" / "guide.md").symlink_to("../shared/base/guide.md")
    (repo / "pdf" / "base").symlink_to("../shared/base")
    (repo / "pdf" / "via").symlink_to("base/guide.md")  # a link through a link to a folder
    git_commit(repo)
    from_git, _ = _same_as_checkout(repo)
    pdf = from_git.skill("skill://pdf/SKILL.md")
    assert pdf is not None
    assert [f.rel_path for f in pdf.files] == ["SKILL.md", "base/SKILL.md", "base/guide.md", "guide.md", "via"]


def test_links_that_leave_dangle_or_loop_refuse_their_skill_like_in_a_folder(tmp_path: Path) -> None:
    """skillwire choice, shared with folders: a link out of the root, to nothing, or to a folder above is refused."""
    repo = git_init(tmp_path / "repo")
    (tmp_path / "outside.md").write_text("secret\n")
    for name, target in (("escapes", "../../outside.md"), ("dangles", "nothing.md"), ("loops", "..")):
        _skill(repo / name)
        (repo / name / "link").symlink_to(target)
    (repo / "stray").symlink_to("missing")  # outside every skill: only reported
    git_commit(repo)
    from_git, _ = _same_as_checkout(repo)
    assert {(r.path.rsplit(":", 1)[-1], r.rule) for r in from_git.refusals} == {
        ("escapes/link", "link-escapes"),
        ("dangles/link", "link-dangles"),
        ("loops/link", "link-loop"),
        ("stray", "link-dangles"),
    }


def test_absolute_link_is_refused_even_when_it_names_a_file_in_the_checkout(tmp_path: Path) -> None:
    """skillwire choice: an absolute target names a place on some machine, never a file of the commit."""
    repo = git_init(tmp_path / "repo")
    _skill(repo / "pdf")
    (repo / "pdf" / "abs").symlink_to(repo / "pdf" / "SKILL.md")
    git_commit(repo)
    catalog = GitSource(repo).scan()
    assert [(r.path.rsplit(":", 1)[-1], r.rule) for r in catalog.refusals] == [("pdf/abs", "link-escapes")]


def test_a_cycle_of_links_is_refused_not_followed_forever(tmp_path: Path) -> None:
    """Hostile input: two links naming each other end the walk with a refusal (as ELOOP does for a folder)."""
    repo = git_init(tmp_path / "repo")
    _skill(repo / "pdf")
    (repo / "pdf" / "a").symlink_to("b")
    (repo / "pdf" / "b").symlink_to("a")
    git_commit(repo)
    catalog = GitSource(repo).scan()
    assert {r.rule for r in catalog.refusals} == {"unreadable"}
    assert catalog.skills == ()


def test_submodule_is_refused_with_a_reason(tmp_path: Path) -> None:
    """skillwire choice: a submodule's files live in another repository, so a skill holding one is refused."""
    other = git_init(tmp_path / "other")
    (other / "x.md").write_text("x\n")
    other_commit = git_commit(other)
    repo = git_init(tmp_path / "repo")
    _skill(repo / "pdf")
    _skill(repo / "plain")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other), "pdf/vendor")
    git_commit(repo, "add a submodule")
    assert git(repo, "ls-tree", "HEAD", "pdf/vendor").startswith(f"160000 commit {other_commit}")
    catalog = GitSource(repo).scan()
    assert [s.uri for s in catalog.skills] == ["skill://plain/SKILL.md"]
    (refusal,) = catalog.refusals
    assert (refusal.path.rsplit(":", 1)[-1], refusal.rule) == ("pdf/vendor", "submodule")
    assert "another repository" in refusal.message


def test_skillwireignore_inside_a_skill_drops_files_like_in_a_folder(tmp_path: Path) -> None:
    """skillwire choice, shared with folders: `.skillwireignore` files apply in a commit as in a folder."""
    repo = git_init(tmp_path / "repo")
    _skill(repo / "pdf")
    (repo / "pdf" / ".skillwireignore").write_text("*.tmp\nbuild/\n")
    (repo / "pdf" / "scratch.tmp").write_text("x\n")
    (repo / "pdf" / "build").mkdir()
    (repo / "pdf" / "build" / "out.bin").write_bytes(b"\0\1")
    (repo / "pdf" / "kept.md").write_text("kept\n")
    git_commit(repo)
    from_git, _ = _same_as_checkout(repo)
    pdf = from_git.skill("skill://pdf/SKILL.md")
    assert pdf is not None
    assert [f.rel_path for f in pdf.files] == ["SKILL.md", "kept.md"]


def test_exec_bit_does_not_change_the_manifest(tmp_path: Path) -> None:
    """skillwire choice: file modes play no part; an executable script is a file like any other."""
    repo = git_init(tmp_path / "repo")
    _skill(repo / "pdf")
    script = repo / "pdf" / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    git_commit(repo)
    before = GitSource(repo).scan().skill("skill://pdf/SKILL.md")
    script.chmod(0o755)
    git_commit(repo, "make it executable")
    after = GitSource(repo).scan().skill("skill://pdf/SKILL.md")
    assert before is not None
    assert after is not None
    assert before.files == after.files


@pytest.mark.parametrize("name", ["..", "a/b"])
def test_crafted_tree_entry_names_are_refused(tmp_path: Path, name: str) -> None:
    """Hostile input: a tree entry no checkout could hold (`..`, a slash) is refused, never used as a path."""
    repo = git_init(tmp_path / "repo")
    _skill(repo / "pdf")
    git_commit(repo)
    blob = git(repo, "hash-object", "-w", "--stdin", stdin=b"payload\n")
    skill_md = git(repo, "rev-parse", "HEAD:pdf/SKILL.md")
    entries = b"100644 " + name.encode() + b"\0" + bytes.fromhex(blob)
    entries += b"100644 SKILL.md\0" + bytes.fromhex(skill_md)
    inner = git(repo, "hash-object", "-w", "-t", "tree", "--literally", "--stdin", stdin=entries)
    root = git(
        repo, "hash-object", "-w", "-t", "tree", "--literally", "--stdin", stdin=b"40000 pdf\0" + bytes.fromhex(inner)
    )
    commit = git(repo, "commit-tree", root, "-m", "crafted")
    catalog = GitSource(repo, commit).scan()
    assert catalog.skills == ()
    assert [(r.path.rsplit(":", 1)[-1], r.rule) for r in catalog.refusals] == [(f"pdf/{name}", "tree-entry-invalid")]


def test_a_rescan_after_each_commit_equals_a_fresh_scan(tmp_path: Path) -> None:
    """skillwire choice: folders kept from the last walk never hide a change (ignore files above, link targets)."""
    repo = git_init(tmp_path / "repo")
    _skill(repo / "team" / "pdf")
    (repo / "team" / "pdf" / "draft.md").write_text("draft\n")
    _skill(repo / "shared" / "base")
    (repo / "shared" / "base" / "guide.md").write_text("v1\n")
    _skill(repo / "team" / "linked")
    (repo / "team" / "linked" / "guide.md").symlink_to("../../shared/base/guide.md")
    git_commit(repo)
    source = GitSource(repo, "main")
    source.scan()
    changes: list[Callable[[], object]] = [
        lambda: (repo / ".skillwireignore").write_text("draft.md\n"),  # an ignore file above unchanged folders
        lambda: (repo / "shared" / "base" / "guide.md").write_text("v2\n"),  # the target of a link
        (repo / ".skillwireignore").unlink,
        lambda: (repo / "team" / "pdf" / "SKILL.md").write_text(SKILL.format(name="renamed")),
    ]
    for generation, change in enumerate(changes, 1):
        change()
        git_commit(repo)
        rescanned = source.scan(generation)
        fresh = GitSource(repo, "main").scan(generation)
        assert _shape(rescanned, "") == _shape(fresh, "")


def test_folders_nested_past_the_depth_limit_refuse_their_skill_not_the_walk(tmp_path: Path) -> None:
    """Hostile input: a tree nested deeper than MAX_DEPTH is cut there with a refusal, never a RecursionError."""
    repo = git_init(tmp_path / "repo")
    _skill(repo / "deep")
    bottom = repo.joinpath("deep", *["d"] * (MAX_DEPTH + 5))
    bottom.mkdir(parents=True)
    (bottom / "x.md").write_text("x\n")
    _skill(repo / "shallow")
    git_commit(repo)
    catalog = GitSource(repo).scan()
    assert [s.uri for s in catalog.skills] == ["skill://shallow/SKILL.md"]
    assert [r.rule for r in catalog.refusals] == ["tree-too-deep"]
