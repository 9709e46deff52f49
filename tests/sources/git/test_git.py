"""The git source: commits served from the object database, refs followed or pinned, blobs hashed once.

Every repository is made by the test with the real `git` command.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from skillwire.core.errors import SourceError
from skillwire.sources.git.source import GitSource
from skillwire.sources.port import WatchPace
from tests.support.git_repos import git, git_commit, git_init

SKILL = "---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n"


def _skills(repo: Path, count: int, files: int = 5) -> None:
    for i in range(count):
        folder = repo / f"team-{i % 3}" / f"skill-{i:04d}"
        (folder / "references").mkdir(parents=True)
        (folder / "SKILL.md").write_text(SKILL.format(name=f"skill-{i:04d}", description=f"Skill {i}"))
        for j in range(files - 1):
            (folder / "references" / f"doc-{j}.md").write_text(f"skill {i} doc {j}\n" * 3)


def _forge(repo: Path, cache: Path, edit: Callable[[dict[str, Any]], object]) -> None:
    """Write the blob digest cache of `repo` to `cache`, then change its rows with `edit` as an attacker would."""
    GitSource(repo, digest_cache=cache).scan()
    header, _, body = cache.read_bytes().partition(b"\n")
    doc = json.loads(body)
    edit(doc["git-blobs"])
    cache.write_bytes(header + b"\n" + json.dumps(doc).encode())


def _read(source: GitSource, uri: str) -> bytes:
    served = source.scan().file(uri)
    assert served is not None
    data = served.content.read(1 << 20)
    assert data is not None
    return data


def test_bare_repository_serves_what_its_origin_serves(tmp_path: Path) -> None:
    """skillwire choice: a bare repository (no work tree at all) is served from its objects alone."""
    repo = git_init(tmp_path / "repo")
    _skills(repo, 3)
    git_commit(repo)
    bare = tmp_path / "skills.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    catalog = GitSource(bare, "main").scan()
    assert [s.uri for s in catalog.skills] == [s.uri for s in GitSource(repo, "main").scan().skills]
    assert len(catalog.skills) == 3
    assert _read(GitSource(bare), "skill://team-0/skill-0000/references/doc-0.md") == b"skill 0 doc 0\n" * 3


def test_crlf_file_is_served_with_its_stored_bytes_whatever_autocrlf_says(tmp_path: Path) -> None:
    """Spec: the digest is of the bytes served; a commit's bytes are the blob's, never a checkout's conversion."""
    repo = git_init(tmp_path / "repo")
    _skills(repo, 1, files=1)
    stored = b"line one\r\nline two\r\n"
    (repo / "team-0" / "skill-0000" / "notes.txt").write_bytes(stored)
    git_commit(repo)
    git(repo, "config", "core.autocrlf", "true")
    catalog = GitSource(repo).scan()
    skill = catalog.skill("skill://team-0/skill-0000/SKILL.md")
    assert skill is not None
    notes = next(f for f in skill.files if f.rel_path == "notes.txt")
    assert notes.digest == "sha256:" + hashlib.sha256(stored).hexdigest()
    assert _read(GitSource(repo), notes.uri) == stored


def test_pinned_commit_never_changes(tmp_path: Path) -> None:
    """skillwire choice: REF given as a commit id serves that commit forever, whatever the branch does."""
    repo = git_init(tmp_path / "repo")
    _skills(repo, 2)
    first = git_commit(repo)
    source = GitSource(repo, first)
    before = source.scan()
    _skills_more = repo / "team-0" / "skill-0000" / "SKILL.md"
    _skills_more.write_text(SKILL.format(name="skill-0000", description="Changed"))
    git_commit(repo)
    after = source.scan(1)
    assert not source.following
    assert source.revision == first
    assert after.skills == before.skills


def test_followed_branch_serves_its_new_commit(tmp_path: Path) -> None:
    """skillwire choice: REF naming a branch serves the commit the branch names at each scan."""
    repo = git_init(tmp_path / "repo")
    _skills(repo, 2)
    git_commit(repo)
    source = GitSource(repo, "main")
    source.scan()
    (repo / "team-0" / "skill-0000" / "SKILL.md").write_text(SKILL.format(name="skill-0000", description="Changed"))
    second = git_commit(repo)
    skill = source.scan(1).skill("skill://team-0/skill-0000/SKILL.md")
    assert source.following
    assert source.revision == second
    assert skill is not None
    assert skill.frontmatter["description"] == "Changed"


def test_tag_and_head_resolve_to_their_commits(tmp_path: Path) -> None:
    """skillwire choice: a tag (annotated or not) and HEAD name the commit they point to."""
    repo = git_init(tmp_path / "repo")
    _skills(repo, 1)
    first = git_commit(repo)
    git(repo, "tag", "-a", "v1", "-m", "first")
    _skills_extra = repo / "extra"
    _skills_extra.mkdir()
    git_commit(repo)
    tagged = GitSource(repo, "v1")
    tagged.scan()
    assert tagged.revision == first
    head = GitSource(repo)
    head.scan()
    assert head.revision == git(repo, "rev-parse", "HEAD")


@pytest.mark.parametrize("ref", ["no-such-branch", "--upload-pack=x", "0" * 40])
def test_ref_that_names_no_commit_is_one_readable_error(tmp_path: Path, ref: str) -> None:
    """Hostile input: a REF naming nothing is a SourceError saying so, not a crash."""
    repo = git_init(tmp_path / "repo")
    _skills(repo, 1)
    git_commit(repo)
    with pytest.raises(SourceError, match=r"names no commit|not a git reference"):
        GitSource(repo, ref)


def test_folder_that_is_no_repository_is_one_readable_error(tmp_path: Path) -> None:
    """Hostile input: a path that holds no repository is a SourceError, not a crash."""
    with pytest.raises(SourceError, match="not a git repository"):
        GitSource(tmp_path / "missing")


def test_one_file_commit_hashes_one_blob(tmp_path: Path) -> None:
    """skillwire choice: re-indexing a new commit hashes only blobs not hashed before (counted, not timed)."""
    repo = git_init(tmp_path / "repo")
    _skills(repo, 60, files=3)
    git_commit(repo)
    source = GitSource(repo, "main")
    first = source.scan()
    assert source.digests.hashed == len({f.digest for s in first.skills for f in s.files})
    with (repo / "team-1" / "skill-0001" / "references" / "doc-2.md").open("a") as fh:
        fh.write("one more line\n")
    git_commit(repo)
    before = source.digests.hashed
    second = source.scan(1)
    assert source.digests.hashed - before == 1
    changed = [s.uri for s in second.skills if first.skill(s.uri) != s]
    assert changed == ["skill://team-1/skill-0001/SKILL.md"]
    unchanged = second.skill("skill://team-0/skill-0000/SKILL.md")
    assert unchanged is first.skill("skill://team-0/skill-0000/SKILL.md")  # not even built again


def test_restart_with_the_digest_cache_hashes_no_blob(tmp_path: Path) -> None:
    """skillwire choice: the blob digest cache makes a restart read no content but each SKILL.md."""
    repo = git_init(tmp_path / "repo")
    _skills(repo, 20)
    git_commit(repo)
    cache = tmp_path / "blobs.json"
    first = GitSource(repo, digest_cache=cache)
    expected = first.scan()
    restarted = GitSource(repo, digest_cache=cache)
    assert restarted.scan().skills == expected.skills
    assert restarted.digests.hashed == 0


def test_forged_digest_cache_is_corrected_when_the_blob_is_read(tmp_path: Path) -> None:
    """Hostile input: a cache that lies about a blob's digest is found out by the first read, then not believed."""
    repo = git_init(tmp_path / "repo")
    _skills(repo, 1)
    git_commit(repo)
    cache = tmp_path / "blobs.json"
    blob = git(repo, "rev-parse", "HEAD:team-0/skill-0000/references/doc-0.md")
    _forge(repo, cache, lambda rows: rows[blob].__setitem__(0, "sha256:" + "ab" * 32))
    source = GitSource(repo, digest_cache=cache)
    uri = "skill://team-0/skill-0000/references/doc-0.md"
    forged = source.scan().file(uri)
    assert forged is not None
    assert forged.file.digest == "sha256:" + "ab" * 32  # published until read: the read is where it is checked
    data = forged.content.read(1 << 20)
    assert data is not None
    fixed = source.scan(1).file(uri)
    assert fixed is not None
    assert fixed.file.digest == "sha256:" + hashlib.sha256(data).hexdigest()


def test_hostile_cache_file_is_ignored_not_fatal(tmp_path: Path) -> None:
    """Hostile input: a cache file with entries of the wrong shape is ignored with a warning; everything is hashed."""
    repo = git_init(tmp_path / "repo")
    _skills(repo, 1)
    git_commit(repo)
    cache = tmp_path / "blobs.json"
    _forge(repo, cache, lambda rows: rows.update({"zz": ["x", -1, "no"]}))
    source = GitSource(repo, digest_cache=cache)
    catalog = source.scan()
    assert len(catalog.skills) == 1
    assert source.digests.hashed == 5


def test_a_folder_inside_a_work_tree_is_not_its_repository(tmp_path: Path) -> None:
    """skillwire choice: PATH names the repository itself; a folder inside one is not searched upwards from."""
    repo = git_init(tmp_path / "repo")
    _skills(repo, 1)
    git_commit(repo)
    with pytest.raises(SourceError, match="not a git repository"):
        GitSource(repo / "team-0")


def test_watch_asks_for_one_rebuild_per_move_and_outlives_a_deleted_branch(tmp_path: Path) -> None:
    """skillwire choice: a followed ref is polled, each move asks for one rebuild, and a ref gone awhile is no crash."""
    repo = git_init(tmp_path / "repo")
    _skills(repo, 1)
    git_commit(repo)
    git(repo, "branch", "live")
    source = GitSource(repo, "live")
    source.scan()
    asked: list[Sequence[str] | None] = []

    async def rebuild(places: Sequence[str] | None) -> None:
        asked.append(places)
        source.scan(len(asked))

    async def until(count: int) -> None:
        with anyio.fail_after(10):  # a freeze is a failure, not a speed bound
            while len(asked) < count:
                await anyio.sleep(0.02)

    async def scenario() -> None:
        async with anyio.create_task_group() as group:
            await group.start(partial(source.watch, rebuild, pace=WatchPace(1_600, 50)))
            assert asked == []  # nothing moved before watching began
            (repo / "extra.md").write_text("x\n")
            second = git_commit(repo)
            git(repo, "branch", "-f", "live", second)
            await until(1)
            git(repo, "branch", "-D", "live")
            await anyio.sleep(0.5)  # looked at twice at least while gone: only warned
            git(repo, "branch", "live", second)  # back where it was: nothing to rebuild
            (repo / "more.md").write_text("y\n")
            third = git_commit(repo)
            git(repo, "branch", "-f", "live", third)
            await until(2)
            group.cancel_scope.cancel()

    anyio.run(scenario)
    assert asked == [None, None]
    assert source.revision == git(repo, "rev-parse", "live")
