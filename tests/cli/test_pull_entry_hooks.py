"""`skillwire pull` against a hostile server whose skill carries files a tool runs on entering a folder (issue 19,
hole 1), and names no disk can hold. The hostile server and `git` are real processes; `skillwire pull` runs in-process
(`tests.support.cli`: its output captured as the process writes it; `tests/cli/test_pull.py` runs it as a process).
One case has `pull` spawn the server over stdio, as a command-line TARGET does; the others pull from one hostile server
per scenario over HTTP, started once for the module (each case only reads from it).

skillwire choices: a pulled skill never creates version-control metadata or a file a common tool runs or trusts on
entering a folder (the list: `skillwire.core.hosting.pull_rules`), `--force` or not; such a skill is refused whole, each
place named on one line, nothing of it written. A name or path no disk holds is one line, never a raw `OSError`.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.flood import hostile_http

RUN_TIMEOUT_S = 60.0
ENTRY_HOOKS_STDIO = f"{sys.executable} -m tests.support.hostile entry-hooks"  # a TARGET `pull` spawns over stdio

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(scope="module")
def entry_hooks() -> Iterator[str]:
    """The URL of one `hostile entry-hooks --http` server for the module."""
    with hostile_http("entry-hooks") as url:
        yield url


@pytest.fixture(scope="module")
def long_names() -> Iterator[str]:
    """The URL of one `hostile long-names --http` server for the module."""
    with hostile_http("long-names") as url:
        yield url


def _pull(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("pull", *args)


def _git(tmp_path: Path, where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git -C where args` as a shell prompt runs it: no user or system config, and no repository above tmp_path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env |= {"HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CEILING_DIRECTORIES": str(tmp_path)}
    return subprocess.run(
        ["git", "-C", str(where), *args], capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT_S, check=False
    )


def _assert_nothing_written(tmp_path: Path, dest: Path) -> None:
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [dest.name]  # no staging
    assert list(dest.iterdir()) == []


@needs_git
@pytest.mark.parametrize(
    ("skill", "git_folder", "named", "force", "stdio"),
    [
        ("git-folder", "", ".git/HEAD and 3 more, in .git/", (), True),
        ("git-folder", "", ".git/HEAD and 3 more, in .git/", ("--force",), False),
        ("nested-git", "docs", "docs/.git/HEAD and 3 more, in docs/.git/", (), False),
        ("gitdir-file", "", ".git: a Git repository", (), False),
    ],
    ids=["git-folder-stdio", "git-folder-force", "nested-git", "gitdir-file"],
)
def test_pull_refuses_a_git_folder_so_git_status_in_dest_runs_no_server_command(
    tmp_path: Path, entry_hooks: str, *, skill: str, git_folder: str, named: str, force: tuple[str, ...], stdio: bool
) -> None:
    """Issue 19 hole 1: a skill listing `.git/HEAD`, `.git/config` (core.fsmonitor = "touch PWNED; false"),
    `.git/refs/heads/main` (nested as `docs/.git/`, or a `.git` file naming a folder of the skill) was written with
    exit 0, and the next `git status` in DEST ran the server's command. Refused whole, even with --force. In the first
    case `pull` spawns the server over stdio; the others pull from the module's server over HTTP."""
    dest = tmp_path / "dest"
    dest.mkdir()  # an empty DEST may be pulled into; `git status` then runs in it whatever pull did
    run = _pull(ENTRY_HOOKS_STDIO if stdio else entry_hooks, f"skill://{skill}/SKILL.md", str(dest), *force)
    _git(tmp_path, dest / git_folder, "status")
    assert list(tmp_path.rglob("PWNED")) == [], "git status ran the command the server's .git/config names"
    assert run.returncode == 1, run.stdout
    assert "Traceback" not in run.stderr
    assert f"not pulling skill://{skill}/SKILL.md, nothing written" in run.stderr
    assert named in run.stderr
    assert "[pull-vcs-metadata; never written, even with --force]" in run.stderr
    _assert_nothing_written(tmp_path, dest)


@needs_git
def test_pull_refuses_a_skill_whose_folder_is_a_git_repository_by_itself(tmp_path: Path, entry_hooks: str) -> None:
    """Issue 19 hole 1: HEAD, config, refs/ and objects/ at the skill's top, without any `.git`, make DEST a
    repository git reads the server's config from (git's own test for a repository folder). Refused whole."""
    dest = tmp_path / "dest"
    dest.mkdir()
    run = _pull(entry_hooks, "skill://bare-repository/SKILL.md", str(dest))
    found = _git(tmp_path, dest, "config", "--get", "core.fsmonitor")
    assert found.stdout == "", "git read the server's config in DEST"
    assert run.returncode == 1, run.stdout
    assert "HEAD and 2 more, in DEST: a Git repository by itself" in run.stderr
    _assert_nothing_written(tmp_path, dest)


def test_pull_refuses_a_mercurial_repository_whose_hgrc_names_hooks(tmp_path: Path, entry_hooks: str) -> None:
    """Issue 19 hole 1: `.hg/hgrc` with a `pre-status` hook was written; `hg status` would run it."""
    dest = tmp_path / "dest"
    run = _pull(entry_hooks, "skill://mercurial/SKILL.md", str(dest), "--force")
    assert run.returncode == 1, run.stdout
    assert ".hg/hgrc and 1 more, in .hg/: a Mercurial repository" in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_pull_refuses_files_a_shell_or_editor_runs_on_entering_the_folder(tmp_path: Path, entry_hooks: str) -> None:
    """skillwire choice (issue 19 hole 1): `.envrc` (direnv), `mise.toml` (mise hooks) and a `.vscode/tasks.json`
    task that runs on folderOpen are each named on one line, with the rule and why; nothing is written."""
    dest = tmp_path / "dest"
    run = _pull(entry_hooks, "skill://shell-hooks/SKILL.md", str(dest))
    assert run.returncode == 1, run.stdout
    lines = run.stderr.splitlines()
    for start in (".envrc: direnv", "mise.toml: mise", ".vscode/tasks.json, in .vscode/: VS Code"):
        [line] = [line for line in lines if line.startswith(f"  {start}")]
        assert line.endswith("[pull-runs-on-entry; never written, even with --force]")
    assert lines[-1].startswith("  [pull-runs-on-entry] fix for the skill's author: take the file out")
    assert len(lines) == 1 + 3 + 1, run.stderr  # header, one line per file, the fix
    assert list(tmp_path.iterdir()) == []


def test_pull_of_a_5000_character_file_name_is_one_short_line(tmp_path: Path, long_names: str) -> None:
    """Issue 19 hole 1: a 5,000-character file name ended in a raw OSError quoting the whole path. Now one line:
    the name shortened, why, and nothing written (decided from the names, before any file is read)."""
    dest = tmp_path / "dest"
    run = _pull(long_names, "skill://long-name/SKILL.md", str(dest))
    assert run.returncode == 1, run.stdout
    assert run.stderr.count("\n") == 1, run.stderr
    assert len(run.stderr) < 400, run.stderr
    assert "name too long (5000 bytes; a file system takes at most 255) [pull-name-too-long]" in run.stderr
    assert f"{'n' * 40}...{'n' * 17}.md (5000 characters)" in run.stderr  # its start and its end
    assert "Error" not in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_pull_of_a_path_too_long_for_the_disk_is_one_line_and_leaves_nothing(tmp_path: Path, long_names: str) -> None:
    """skillwire choice (issue 19 hole 1): each name fits, the whole path (over 4,096 bytes) does not; the write
    fails part way. One line naming the file (shortened) and why; the staging folder and the parent folder pull
    made for DEST are gone."""
    dest = tmp_path / "made-for-dest" / "dest"
    run = _pull(long_names, "skill://deep-path/SKILL.md", str(dest))
    assert run.returncode == 1, run.stdout
    assert run.stderr.count("\n") == 1, run.stderr
    assert len(run.stderr) < 400, run.stderr
    assert "could not write dddd" in run.stderr
    assert "/deep.md (4228 characters) into" in run.stderr
    assert run.stderr.rstrip().endswith(": name too long for this file system; nothing written")
    assert "Errno" not in run.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.ENAMETOOLONG, "name too long for this file system"),
        (errno.EROFS, "the file system is read-only"),
        (errno.ENOSPC, "no space left on the disk"),
        (errno.EDQUOT, "over the disk quota"),
        (errno.EACCES, "permission denied"),
        (errno.EIO, os.strerror(errno.EIO)),
    ],
)
def test_a_failed_write_is_said_in_a_few_words_without_the_path(code: int, words: str) -> None:
    """skillwire choice: the reason a disk gave, never the path it quotes (thousands of characters, server-named).
    In-process: a read-only or full disk cannot be made here; the real too-long path is the test above."""
    from skillwire.cli.pull import write_failure  # here, so the process tests above run against any version

    assert write_failure(OSError(code, os.strerror(code), "/x/" + "n" * 5000)) == words
