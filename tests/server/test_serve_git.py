"""`skillwire serve git:PATH@REF`: the spec, its errors, and a followed branch seen over HTTP.

Repositories are made by the test with the real `git` command; the server is a real `skillwire serve` process.
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from skillwire.cli.main import main
from skillwire.core.errors import SpecError
from skillwire.sources.git.source import GitSource
from skillwire.sources.port import SourceOptions
from skillwire.sources.spec import open_sources
from tests.support.git_repos import git, git_commit, git_init
from tests.support.servers import ServerTarget, connect, http_server, skills_get

SKILL = "---\nname: pdf\ndescription: {description}\n---\n\n# pdf\n"
VISIBLE_WITHIN_S = 2.0  # issue 12: a commit to the followed branch is visible in skills/get within 2 s


def _repo(tmp_path: Path, description: str = "First") -> Path:
    repo = git_init(tmp_path / "repo")
    (repo / "pdf").mkdir()
    (repo / "pdf" / "SKILL.md").write_text(SKILL.format(description=description))
    git_commit(repo)
    return repo


@pytest.mark.parametrize(("suffix", "ref"), [("@main", "main"), ("", "HEAD"), ("@v1", "v1")])
def test_git_spec_opens_the_repository_at_its_ref(tmp_path: Path, suffix: str, ref: str) -> None:
    """skillwire choice: `git:PATH@REF` serves REF (a branch, tag or commit); without `@REF`, HEAD."""
    repo = _repo(tmp_path)

    git(repo, "tag", "v1")
    source = open_sources([f"git:{repo}{suffix}"], SourceOptions())
    assert isinstance(source, GitSource)
    assert source.ref == ref
    assert [s.uri for s in source.scan().skills] == ["skill://pdf/SKILL.md"]


def test_git_spec_keeps_blob_digests_beside_the_digest_cache(tmp_path: Path) -> None:
    """skillwire choice: with --digest-cache FILE, blob digests are kept in FILE.git-blobs."""
    repo = _repo(tmp_path)
    source = open_sources([f"git:{repo}@main"], SourceOptions(digest_cache=str(tmp_path / "cache.json")))
    source.scan()
    assert (tmp_path / "cache.json.git-blobs").is_file()


def test_serve_git_with_a_bad_ref_says_so_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Hostile input: a REF naming no commit is a usage error of one readable line, before anything is served."""
    repo = _repo(tmp_path)
    assert main(["serve", f"git:{repo}@no-such-branch", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "names no commit" in err
    assert err.count("\n") == 1


def test_git_spec_without_a_path_is_a_clear_error() -> None:
    """Hostile input: `git:@main` names no repository."""
    with pytest.raises(SpecError, match="needs git:PATH@REF"):
        open_sources(["git:@main"], SourceOptions())


def test_a_commit_to_the_followed_branch_shows_in_skills_get_within_2_s(tmp_path: Path) -> None:
    """Issue 12 acceptance: `serve git:PATH@main` picks up a new commit on main and serves it in skills/get."""
    repo = _repo(tmp_path)

    async def scenario(target: ServerTarget) -> float:
        async with connect(target) as client:
            first = await skills_get(client, "skill://pdf/SKILL.md")
            assert first.skill["frontmatter"]["description"] == "First"
            (repo / "pdf" / "SKILL.md").write_text(SKILL.format(description="Second"))
            git_commit(repo, "second")
            committed = time.monotonic()
            while time.monotonic() - committed < 10:  # a freeze is a failure; the 2 s bound is checked below
                got = await skills_get(client, "skill://pdf/SKILL.md")
                if got.skill["frontmatter"]["description"] == "Second":
                    return time.monotonic() - committed
                await anyio.sleep(0.05)
            pytest.fail("the new commit was never served")

    with http_server([Path(f"git:{repo}@main")], "--quiet") as server:
        target = ServerTarget("http", (), tmp_path / "logs", http=server)
        seen_after = anyio.run(scenario, target)
        server.assert_alive()
    assert seen_after < VISIBLE_WITHIN_S
