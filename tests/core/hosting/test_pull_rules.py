"""The one list of names a pulled skill may never write (issue 19, hole 1): matched however a disk spells them.

skillwire choices: the list, the disk tricks it sees through (case, Unicode form, trailing dots and spaces, NTFS
streams and short names, the code points HFS+ ignores), and what it leaves alone on purpose.
"""

from __future__ import annotations

import pytest

from skillwire.core.hosting.pull_rules import (
    FIXES,
    REPOSITORY_WHAT,
    RULES,
    RUNS_ON_ENTRY,
    TRUSTED_NAMES,
    VCS_METADATA,
    name_too_long,
    refused_names,
    trusted_name_match,
)


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        (".git/config", ".git"),
        (".git", ".git"),  # a file: `gitdir: PATH` points git at any folder
        ("docs/.git/config", ".git"),  # any depth
        (".GIT/config", ".git"),  # macOS and Windows open `.GIT` as `.git`
        (".git./HEAD", ".git"),  # Windows drops trailing dots and spaces
        (".git /HEAD", ".git"),
        (".git::$INDEX_ALLOCATION/config", ".git"),  # an NTFS stream name opens the folder itself
        ("GIT~1/config", ".git"),  # an NTFS short name
        (".g\u200cit/config", ".git"),  # HFS+ ignores U+200C when it compares names
        (".Hg/hgrc", ".hg"),
        ("_darcs/prefs/defaults", "_darcs"),
        ("x/CVS/Root", "CVS"),
        (".svn/wc.db", ".svn"),
        (".repo/repo/main.py", ".repo"),
        (".envrc", ".envrc"),
        ("sub/.ENVRC", ".envrc"),
        (".env", ".env"),
        ("mise.local.toml", "mise.*.toml"),
        (".config/mise/conf.d/x.toml", ".config/mise"),
        (".vscode/tasks.json", ".vscode"),
        (".idea/workspace.xml", ".idea"),
        (".venv/bin/activate", ".venv"),
        (".cargo/config.toml", ".cargo"),
        (".yarnrc.yml", ".yarnrc.yml"),
        ("Desktop.INI", "desktop.ini"),
        ("docs/shortcut.URL", "*.url"),
        (".dir-locals.el", ".dir-locals.el"),
    ],
)
def test_names_a_tool_runs_or_trusts_are_found_however_a_disk_spells_them(path: str, pattern: str) -> None:
    """skillwire choice: each of these would be acted on by a tool as its own, on some common disk."""
    match = trusted_name_match(path.split("/"))
    assert match is not None, path
    assert match[0].pattern == pattern


@pytest.mark.parametrize(
    "path",
    [
        ".gitignore",
        ".gitattributes",  # a driver runs only the command the user's own config gives it
        ".gitmodules",  # git ignores `update = !command` there
        ".editorconfig",
        ".python-version",  # version pins choose a version, not a command
        ".nvmrc",
        ".tool-versions",
        "rust-toolchain.toml",
        ".hgrc",  # Mercurial reads it only from the home folder
        ".env.example",
        ".envrc.sample",
        "docs/git.md",
        "my.git/notes.md",
        "mise.md",
        "HEAD",  # alone it makes no repository
        "refs/notes.md",
        "scripts/setup.sh",
        "package.json",
        "backup~1.md",  # a tilde name that stands for nothing listed
    ],
)
def test_ordinary_names_are_written(path: str) -> None:
    """skillwire choice: only whole names match, and the names left out are left out on purpose."""
    assert trusted_name_match(path.split("/")) is None
    assert refused_names([path]) == []


def test_a_folder_that_is_a_git_repository_by_itself_is_refused_once() -> None:
    """HEAD beside refs/, objects/ or commondir is a repository to git (no `.git` needed): git reads its config."""
    [top] = refused_names(["SKILL.md", "HEAD", "config", "refs/heads/main", "objects/info/packs"])
    assert (top.rule, top.where, top.what) == (VCS_METADATA, "", REPOSITORY_WHAT)
    assert top.files == ("HEAD", "refs/heads/main", "objects/info/packs")
    [meta] = refused_names(["meta/head", "meta/CommonDir"])  # any case
    assert meta.where == "meta"
    [dot_git] = refused_names([".git/HEAD", ".git/refs/heads/main"])  # said once, as `.git`
    assert dot_git.what != REPOSITORY_WHAT


def test_files_are_grouped_by_the_name_they_fall_under() -> None:
    """One refusal per place, its files in listing order: a 500-file `.git` is one line, not 500."""
    refusals = refused_names(["a/.git/HEAD", "a/.git/config", ".envrc", "SKILL.md", "b/.envrc"])
    assert [(r.rule, r.where, r.files) for r in refusals] == [
        (VCS_METADATA, "a/.git", ("a/.git/HEAD", "a/.git/config")),
        (RUNS_ON_ENTRY, ".envrc", (".envrc",)),
        (RUNS_ON_ENTRY, "b/.envrc", ("b/.envrc",)),
    ]


def test_a_name_spanning_dest_and_the_skill_is_found() -> None:
    """DEST `~/.config` and a skill file `mise.toml` make `.config/mise.toml`; DEST inside `.git` is DEST's own
    problem (refused before anything is fetched), not reported against the skill's files."""
    [spanning] = refused_names(["mise.toml"], ["home", "me", ".config"])
    assert spanning.where == "mise.toml"
    assert refused_names(["notes.md"], ["home", ".git"]) == []


def test_a_listed_name_among_the_users_own_folders_neither_refuses_nor_hides_anything() -> None:
    """A user's `~/projects/cvs/` (a folder named like CVS's) above DEST is not the skill's doing: ordinary files are
    written, and the skill's own `.git` is still found."""
    placed = ["home", "me", "projects", "cvs", "skills", "dest"]
    assert refused_names(["SKILL.md", "notes.md"], placed) == []
    [found] = refused_names(["SKILL.md", ".git/config"], placed)
    assert found.where == ".git"
    # DEST's own check looks at DEST and the folder it lands in only: `repo/.git/x` is refused, `cvs/a/b/x` not.
    assert trusted_name_match(["repo", ".git", "x"], ending_after=1) is not None
    assert trusted_name_match(["home", ".config", "mise"], ending_after=1) is not None
    assert trusted_name_match(placed, ending_after=len(placed) - 2) is None


def test_every_rule_has_a_fix_and_every_name_a_listed_rule() -> None:
    """skillwire choice: one table of rule ids and fixes, as `skillwire.core.fixes` has for the server's rules."""
    assert set(FIXES) == {rule.id for rule in RULES}
    assert all(FIXES[rule.id] for rule in RULES)
    assert {name.rule for name in TRUSTED_NAMES} <= set(RULES)
    assert len({name.pattern for name in TRUSTED_NAMES}) == len(TRUSTED_NAMES)


def test_the_issue_list_is_covered() -> None:
    """The version-control folders issue 19 names, and the entry hooks its brief names, are all in the one list."""
    listed = {name.pattern for name in TRUSTED_NAMES}
    assert {".git", ".hg", ".svn", ".bzr", "_darcs", "CVS"} <= listed
    assert {".envrc", ".vscode", ".idea", "mise.toml", ".mise.toml", ".npmrc", ".yarnrc"} <= listed


@pytest.mark.parametrize(
    ("name", "too_long"),
    [("a" * 255, False), ("a" * 256, True), ("\u00e9" * 127, False), ("\u00e9" * 128, True)],
)
def test_a_name_over_255_bytes_of_utf8_is_too_long(name: str, too_long: bool) -> None:
    """ext4, XFS and Btrfs take 255 bytes a name; APFS and NTFS 255 characters: bytes is the bound all accept."""
    assert name_too_long(name) is too_long
