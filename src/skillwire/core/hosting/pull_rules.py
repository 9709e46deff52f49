"""What a pulled skill may never write: names a common tool runs or trusts when it meets them in a folder.

A skill served over MCP is untrusted content (Security Considerations). Some names stop being content once
they are on disk, because a tool acts on them by itself: `git status`, which shell prompts, editors and coding
agents run on their own, runs the command a `.git/config` names in `core.fsmonitor`; direnv sources `.envrc`
on `cd`; VS Code runs a `.vscode/tasks.json` task marked `folderOpen` when the folder opens. `skillwire pull`
writes none of these, with or without `--force` (`--force` is the user's word about their own folders, not a
reason to trust a server), and a skill holding one is refused whole. This module is the one list, matched
at any depth and however a disk spells the name; `host.agent_paths` holds the agent-configuration paths
that `--force` may allow. No I/O.

The line drawn: a name is listed when a tool reads it as *its own* metadata or configuration, without being
asked to run anything from the folder (entering it, showing it, a status or version query), and it can name a
command or code to run. Left out, on purpose: `.gitignore`, `.gitattributes` (a filter, diff or merge driver
runs only the command the user's own config gives it), `.gitmodules` (git ignores `update = !command` there),
`.editorconfig`, version pins (`.python-version`, `.nvmrc`, `.tool-versions`, `rust-toolchain.toml`: they choose
a version, not a command), `.hgrc` (Mercurial reads it only from the home folder), `.devcontainer/` (runs only
when the user reopens in a container), and project files (`package.json`, `pyproject.toml`, `Makefile`): running
a build or an installer in a pulled folder runs its code, as with any download. Pulled files are never made
executable, so a program found by path cannot run either.

    refused_names(["SKILL.md", "docs/.git/config"])   # [Refusal(rule=VCS_METADATA, where="docs/.git", ...)]
    trusted_name_match(["x", ".Envrc."])              # (TrustedName(".envrc", ...), 1, 2)
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from skillwire.core.fields import Rule
from skillwire.core.hosting.agent_paths import disk_key

__all__ = [
    "FIXES",
    "MAX_NAME_BYTES",
    "NAME_TOO_LONG",
    "REPOSITORY_WHAT",
    "RULES",
    "RUNS_ON_ENTRY",
    "TRUSTED_NAMES",
    "VCS_METADATA",
    "Refusal",
    "TrustedName",
    "match_key",
    "name_too_long",
    "refused_names",
    "trusted_name_match",
]

VCS_METADATA = Rule(
    "pull-vcs-metadata", "take the version-control metadata out of the skill (serve its files, not a repository)"
)
RUNS_ON_ENTRY = Rule(
    "pull-runs-on-entry", "take the file out of the skill; a user who wants it can write it by hand after reading it"
)
NAME_TOO_LONG = Rule("pull-name-too-long", "shorten the name to at most 255 bytes (UTF-8)")
RULES: Final[tuple[Rule, ...]] = (VCS_METADATA, RUNS_ON_ENTRY, NAME_TOO_LONG)
FIXES: Final[Mapping[str, str]] = MappingProxyType({rule.id: rule.fix for rule in RULES})

#: The longest file name (one path segment) ext4, XFS, Btrfs, APFS and NTFS all accept: 255 bytes of UTF-8.
MAX_NAME_BYTES: Final = 255


@dataclass(frozen=True, slots=True)
class TrustedName:
    """A name a tool acts on by itself: its `/`-separated pattern, the rule it breaks, and what the tool does.

    The pattern matches a file or a folder of that name (and so everything inside it) at any depth, in any case;
    `*` stands for any characters within one name (`mise.*.toml`).
    """

    pattern: str
    rule: Rule
    what: str


_GIT = "git runs the commands its config names (core.fsmonitor, hooks, pager) on a plain `git status`"
_VCS: Final = (
    TrustedName(".git", VCS_METADATA, f"a Git repository (a folder, or a file naming one): {_GIT}"),
    TrustedName(".hg", VCS_METADATA, "a Mercurial repository: hg runs the hooks and extensions its hgrc names"),
    TrustedName(".sl", VCS_METADATA, "a Sapling repository: sl runs the hooks and extensions its config names"),
    TrustedName(".jj", VCS_METADATA, "a Jujutsu repository: jj runs the pager, tools and aliases its config names"),
    TrustedName(".svn", VCS_METADATA, "a Subversion working copy, which svn and editors trust as their own"),
    TrustedName(".bzr", VCS_METADATA, "a Bazaar branch: bzr runs the hooks its branch.conf names"),
    TrustedName("_darcs", VCS_METADATA, "a darcs repository: darcs runs the posthooks its prefs name"),
    TrustedName(".pijul", VCS_METADATA, "a Pijul repository, which pijul trusts as its own"),
    TrustedName("CVS", VCS_METADATA, "a CVS working copy: CVS/Root names the command cvs connects with (:ext:)"),
    TrustedName(".fslckout", VCS_METADATA, "a Fossil checkout: fossil opens the repository (and hooks) it names"),
    TrustedName("_FOSSIL_", VCS_METADATA, "a Fossil checkout: fossil opens the repository (and hooks) it names"),
    TrustedName(".repo", VCS_METADATA, "a repo-tool checkout: the `repo` command runs .repo/repo/main.py from it"),
)
_MISE = "mise reads it on entering the folder; its [hooks] and [env] run commands"
_EXPLORER = "Windows Explorer reads it to show the folder and fetches what it names, a remote share too (NTLM leak)"
_VIM = "Vim and Neovim run it on starting in the folder when 'exrc' is on"
_ENTRY: Final = (
    TrustedName(".envrc", RUNS_ON_ENTRY, "direnv sources it as a shell script on entering the folder"),
    TrustedName(".env", RUNS_ON_ENTRY, "autoenv sources it on entering the folder; direnv, pipenv and VS Code load it"),
    TrustedName(".env.leave", RUNS_ON_ENTRY, "autoenv sources it on leaving the folder"),
    TrustedName(".autoenv.zsh", RUNS_ON_ENTRY, "zsh-autoenv sources it on entering the folder"),
    TrustedName(".autoenv_leave.zsh", RUNS_ON_ENTRY, "zsh-autoenv sources it on leaving the folder"),
    TrustedName("mise.toml", RUNS_ON_ENTRY, _MISE),
    TrustedName("mise.*.toml", RUNS_ON_ENTRY, _MISE),
    TrustedName(".mise.toml", RUNS_ON_ENTRY, _MISE),
    TrustedName(".mise.*.toml", RUNS_ON_ENTRY, _MISE),
    TrustedName("mise/config.toml", RUNS_ON_ENTRY, _MISE),
    TrustedName(".mise", RUNS_ON_ENTRY, _MISE),
    TrustedName(".config/mise.toml", RUNS_ON_ENTRY, _MISE),
    TrustedName(".config/mise.*.toml", RUNS_ON_ENTRY, _MISE),
    TrustedName(".config/mise", RUNS_ON_ENTRY, _MISE),
    TrustedName(".rtx.toml", RUNS_ON_ENTRY, _MISE),
    TrustedName(".venv", RUNS_ON_ENTRY, "a virtual environment: shell plugins source its activate script on entry"),
    TrustedName("pyvenv.cfg", RUNS_ON_ENTRY, "a virtual environment's marker: editors find and run what it names"),
    TrustedName(".vscode", RUNS_ON_ENTRY, "VS Code runs its folderOpen tasks on opening; its settings name programs"),
    TrustedName(".idea", RUNS_ON_ENTRY, "a JetBrains project: its startup tasks run on opening a trusted project"),
    TrustedName(".dir-locals.el", RUNS_ON_ENTRY, "Emacs applies it (eval forms included) to every file below"),
    TrustedName(".dir-locals-2.el", RUNS_ON_ENTRY, "Emacs applies it (eval forms included) to every file below"),
    TrustedName(".exrc", RUNS_ON_ENTRY, _VIM),
    TrustedName(".vimrc", RUNS_ON_ENTRY, _VIM),
    TrustedName(".gvimrc", RUNS_ON_ENTRY, _VIM),
    TrustedName(".nvimrc", RUNS_ON_ENTRY, _VIM),
    TrustedName(".nvim.lua", RUNS_ON_ENTRY, _VIM),
    TrustedName(".cargo", RUNS_ON_ENTRY, "cargo reads its config in every folder below: it names programs to run"),
    TrustedName(".npmrc", RUNS_ON_ENTRY, "npm and npx read it for every command below: the shell and the registry"),
    TrustedName(".yarnrc", RUNS_ON_ENTRY, "yarn runs the file its yarn-path names on every command, --version too"),
    TrustedName(".yarnrc.yml", RUNS_ON_ENTRY, "yarn runs the file its yarnPath names on every command, --version too"),
    TrustedName("uv.toml", RUNS_ON_ENTRY, "uv and uvx read it for every command below: where packages come from"),
    TrustedName(".directory", RUNS_ON_ENTRY, "KDE's file manager reads it to show the folder (it once ran commands)"),
    TrustedName("desktop.ini", RUNS_ON_ENTRY, _EXPLORER),
    TrustedName("*.lnk", RUNS_ON_ENTRY, _EXPLORER),
    TrustedName("*.url", RUNS_ON_ENTRY, _EXPLORER),
    TrustedName("*.scf", RUNS_ON_ENTRY, _EXPLORER),
    TrustedName("*.library-ms", RUNS_ON_ENTRY, _EXPLORER),
    TrustedName("*.searchConnector-ms", RUNS_ON_ENTRY, _EXPLORER),
)
TRUSTED_NAMES: Final[tuple[TrustedName, ...]] = (*_VCS, *_ENTRY)

#: A folder that holds these is a Git repository by itself (git's `is_git_directory`): git reads its config.
REPOSITORY_WHAT: Final = (
    f"a Git repository by itself (HEAD beside refs/, objects/ or commondir): {_GIT} in it or any folder below"
)

# HFS+ ignores these code points when it compares names (git's `is_hfs_dotgit` list): ".g\u200cit" is ".git".
_HFS_IGNORED: Final = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")
# A Windows 8.3 short name (`GIT~1`, `DESKTO~1.INI`): on NTFS it can open the long name it stands for.
_SHORT_NAME: Final = re.compile(r"([^~]{1,6})~[0-9]+(?:\.[^.]{0,3})?")


def match_key(segment: str) -> str:
    """A name as the most lenient disk opens it: `disk_key` (case, Unicode form, trailing dots and spaces), with the
    code points HFS+ ignores dropped and an NTFS stream suffix cut (`.git::$INDEX_ALLOCATION` opens `.git`)."""
    return disk_key(_HFS_IGNORED.sub("", segment).split(":", 1)[0])


def _compiled(pattern: str) -> tuple[str, ...]:
    return tuple(match_key(s) if "*" not in s else s.casefold() for s in pattern.split("/"))


_PATTERNS: Final = tuple((_compiled(t.pattern), t) for t in TRUSTED_NAMES)
# The names a short name may stand for: single literal names, dots dropped (Windows drops them from short names).
_SHORTENABLE: Final = tuple((p[0].replace(".", ""), t) for p, t in _PATTERNS if len(p) == 1 and "*" not in p[0])


def _segment_matches(key: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(key, pattern) if "*" in pattern else key == pattern


def _short_name_for(key: str) -> TrustedName | None:
    short = _SHORT_NAME.fullmatch(key)
    if short is None:
        return None
    stem = short.group(1).replace(".", "")
    return next((t for name, t in _SHORTENABLE if stem and name.startswith(stem)), None)


def trusted_name_match(segments: Sequence[str], *, ending_after: int = 0) -> tuple[TrustedName, int, int] | None:
    """The listed name that the path `segments` is, or lies inside, and where it is: (name, start, end) with
    `segments[start:end]` the matching part, which ends past `ending_after` segments (a match among the first
    `ending_after` only, the user's own folders above DEST, does not count). At any depth: a tool opened at any
    folder above finds it."""
    keys = [match_key(s) for s in segments]
    first = max(0, ending_after - max(len(p) for p, _ in _PATTERNS) + 1)
    for start in range(first, len(keys)):
        short = _short_name_for(keys[start]) if start >= ending_after else None
        if short is not None:
            return short, start, start + 1
        for pattern, name in _PATTERNS:
            end = start + len(pattern)
            if ending_after < end <= len(keys) and all(
                _segment_matches(k, p) for k, p in zip(keys[start:end], pattern, strict=True)
            ):
                return name, start, end
    return None


@dataclass(frozen=True, slots=True)
class Refusal:
    """Files a pulled skill may not write, grouped by where: `where` is the listed name's path inside the skill
    ("" for the skill's own folder), `files` the skill's files at or below it, in listing order."""

    rule: Rule
    where: str
    what: str
    files: tuple[str, ...]


def refused_names(paths: Iterable[str], placed: Sequence[str] = ()) -> list[Refusal]:
    """Every place where the skill's files (`/`-separated paths inside DEST) would make a name from the list, or
    a folder that is a Git repository by itself. `placed` is DEST's own path, split: a name can span the two
    (`.config` + `mise.toml`). A match wholly inside `placed` is DEST's problem, not the skill's: not reported."""
    found: dict[tuple[str, str], tuple[Rule, str, list[str]]] = {}
    listed = list(paths)
    for rel in listed:
        segments = rel.split("/")
        match = trusted_name_match([*placed, *segments], ending_after=len(placed))
        if match is None:
            continue
        name, _, end = match
        where = "/".join(segments[: end - len(placed)])
        found.setdefault((name.rule.id, where), (name.rule, name.what, []))[2].append(rel)
    for folder, files in _repositories(listed).items():
        if trusted_name_match([*placed, *(folder.split("/") if folder else ())], ending_after=len(placed)):
            continue  # inside a listed name (`.git` is a repository too): said once, there
        found.setdefault((VCS_METADATA.id, folder), (VCS_METADATA, REPOSITORY_WHAT, []))[2].extend(files)
    return [Refusal(rule, where, what, tuple(files)) for (_, where), (rule, what, files) in found.items()]


def _repositories(paths: Sequence[str]) -> dict[str, list[str]]:
    """Folders (`""` for the skill's own) that git would take as a repository: a file HEAD beside a folder refs or
    objects, or a file commondir (git's `is_git_directory` needs HEAD, and refs/ and objects/ here or there).
    Each with the files that make it one. Folders are compared as a disk would (`match_key`)."""
    heads: dict[str, tuple[str, str]] = {}  # folder key -> (folder as listed, the HEAD file)
    markers: dict[str, list[str]] = {}
    for rel in paths:
        segments = rel.split("/")
        keys = [match_key(s) for s in segments]
        last = len(keys) - 1
        for i, key in enumerate(keys):
            folder = "/".join(keys[:i])
            if i == last and key == "head":
                heads.setdefault(folder, ("/".join(segments[:i]), rel))
            elif (i < last and key in ("refs", "objects")) or (i == last and key == "commondir"):
                markers.setdefault(folder, []).append(rel)
    return {shown: [head, *markers[key]] for key, (shown, head) in heads.items() if key in markers}


def name_too_long(segment: str) -> bool:
    """True if no common file system can hold a file of this name (over `MAX_NAME_BYTES` bytes of UTF-8)."""
    return len(segment.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES
