"""Real git repositories for tests, made with the `git` command as a person would (the source itself never runs it).

Every call runs with no global or system configuration, a fixed author and date, so repositories are alike on every
machine.

    repo = git_init(tmp_path / "repo")
    (repo / "pdf").mkdir(); (repo / "pdf" / "SKILL.md").write_bytes(b"...")
    commit = git_commit(repo, "add pdf")
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_AUTHOR_DATE": "2026-12-01T12:00:00Z",
    "GIT_COMMITTER_DATE": "2026-12-01T12:00:00Z",
}


def git(cwd: Path, *args: str, stdin: bytes | None = None) -> str:
    """Run `git args` in `cwd`; its standard output (stripped). Raises CalledProcessError with git's own words."""
    return git_bytes(cwd, *args, stdin=stdin).decode("utf-8", "surrogateescape").strip()


def git_bytes(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """Run `git args` in `cwd`; its standard output as it is."""
    env = {**os.environ, **_ENV}
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "gc.auto=0", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        check=True,
    )
    return done.stdout


def git_init(path: Path, *, bare: bool = False) -> Path:
    """A new empty repository at `path` (branch `main`; symlinks kept as links; no line-ending conversion)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", *(["--bare"] if bare else []))
    if not bare:
        git(path, "config", "core.autocrlf", "false")
        git(path, "config", "core.symlinks", "true")
    return path


def git_commit(repo: Path, message: str = "change") -> str:
    """Stage everything in the work tree of `repo` and commit it; the new commit's id."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def commit_folder(folder: Path, repo: Path) -> str:
    """A fresh repository at `repo` holding a copy of `folder`'s files (links kept as links); the commit's id."""
    git_init(repo)
    git(folder, "--work-tree", str(folder), "--git-dir", str(repo / ".git"), "add", "-A")
    git(repo, "commit", "-q", "-m", "import")
    return git(repo, "rev-parse", "HEAD")
