"""`skillwire pull SERVER SKILL DEST`: copy one skill (by name or SKILL.md URI) into a folder, verified first.

Every file the entry lists is read and checked (size, digest; SKILL.md's frontmatter against the
entry) before anything is written: one failure and DEST is left as it was. Files are written into a
fresh sibling folder and renamed to DEST at the end, so DEST never holds half a skill. DEST must be
new or empty, and may not lie in an agent's skill discovery folder (`.claude/skills`, ...) or any
other agent-configuration folder unless `--force`: a pulled skill is content from a server, not a
skill the user installed. For the same reason a file the skill lists that would land at an agent
configuration path inside DEST (`.claude/settings.json`, `CLAUDE.md`, `x/.agents/skills/...`: the
list is `skillwire.core.hosting.agent_paths`) is refused without `--force`, one line per file, and a file
name holding control, bidi or zero-width characters is refused always. So is a file a common tool runs or
trusts on entering a folder (`.git/`, `.hg/`, `.envrc`, `.vscode/`: the list is `skillwire.core.hosting.pull_rules`):
`--force` is about the user's own folders, never a reason to trust what a server sends. A name too long for
any disk is refused before anything is read, and a disk that fails the write (full, read-only, path too long)
is one line, with nothing of the skill left behind. `.skillwire-provenance.json` records where the bytes came from.

    skillwire pull http://127.0.0.1:8000/mcp skill://pdf-processing/SKILL.md ./pdf-processing
    skillwire pull http://127.0.0.1:8000/mcp pdf-processing ./pdf-processing   # the one skill of that name
"""

from __future__ import annotations

import argparse
import difflib
import errno
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import unquote

from skillwire.cli.child import kept_stderr
from skillwire.cli.errors import CliError
from skillwire.cli.formats import Annotation, emit
from skillwire.cli.inspect import call_server, connect_within, headers_from, server_target, verify_entry
from skillwire.cli.output import say
from skillwire.client.session import DEFAULT_TIMEOUT_S
from skillwire.core.hosting.agent_paths import (
    SKILL_DISCOVERY_FOLDERS,
    SKILLS_FOLDER,
    agent_config_match,
    disk_key,
    name_problem_chars,
)
from skillwire.core.hosting.entry import SkillEntry
from skillwire.core.hosting.pull_rules import (
    FIXES,
    MAX_NAME_BYTES,
    NAME_TOO_LONG,
    Refusal,
    name_too_long,
    refused_names,
    trusted_name_match,
)

__all__ = ["PROVENANCE_FILE", "PullReport", "resolve_name", "run_pull", "write_failure"]

PROVENANCE_FILE = ".skillwire-provenance.json"
_SHOWN_LIMIT = 200
_SHORT_LIMIT = 80  # a name or path longer than this is shown as its start and end (`_shortened`)
_CANDIDATES = 20  # same-named skills listed in the error; a hostile listing may hold thousands


class PullRefused(CliError):
    """The skill was not written: DEST is unsuitable, or a file failed verification (exit status 1)."""


def run_pull(args: argparse.Namespace) -> int:
    dest = Path(args.dest)
    _check_dest(dest, force=args.force)
    target = server_target(args.server)
    headers = headers_from(args, target)
    # Agent paths are matched across the DEST boundary too: pulling `copilot-instructions.md` into `repo/.github`.
    placed = dest.expanduser().resolve().parts
    force, timeout = bool(args.force), args.timeout
    with kept_stderr(args.server) as errlog:
        files, entry, server_name, refusal = call_server(
            args.server,
            lambda: _fetch(target, args.skill, placed, force, headers=headers, timeout=timeout, errlog=errlog),
        )
    if refusal or entry is None:
        raise PullRefused(refusal or "no skill")
    _write(dest, files, _provenance(args.server, server_name, entry, files))
    emit(args.format, PullReport(entry.uri, str(dest), tuple(files)))
    return 0


@dataclass(frozen=True, slots=True)
class PullReport:
    """What `pull` wrote, in the three `--format`s (a failure is an error raised before any of this)."""

    uri: str
    dest: str
    files: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        """Schema version 1: {"version", "skill", "dest", "files": [path inside dest], "verified": true}."""
        return {"version": 1, "skill": self.uri, "dest": self.dest, "files": list(self.files), "verified": True}

    def annotations(self) -> list[Annotation]:
        return []

    def summary(self) -> str:
        count = len(self.files)
        return f"pulled {self.uri} ({count} file{'s' * (count != 1)}, all verified) into {self.dest}"

    def print_text(self, out: TextIO, *, colour: bool, verbose: bool) -> None:
        say(self.summary(), file=out)


def resolve_name(name: str, entries: Sequence[SkillEntry]) -> tuple[str | None, str | None]:
    """The SKILL.md URI of the one listed skill whose frontmatter `name` is `name`, else why not (one of the two).

    Two skills may share a name at different paths (the spec tells skills apart by path): that is an error listing
    the candidates, never a guess. An unknown name suggests the closest listed names.
    """
    named = [e.uri for e in entries if e.frontmatter.get("name") == name]
    if len(named) == 1:
        return named[0], None
    if named:
        shown = "\n".join(f"  {_shown(uri)}" for uri in named[:_CANDIDATES])
        more = f"\n  ... and {len(named) - _CANDIDATES} more" if len(named) > _CANDIDATES else ""
        return None, f"{len(named)} skills are named {_shown(name)!r}; pull one by its URI:\n{shown}{more}"
    names = sorted({n for e in entries if isinstance(n := e.frontmatter.get("name"), str)})
    close = difflib.get_close_matches(name, names, n=3)
    hint = f"; did you mean {', '.join(_shown(c) for c in close)} ?" if close else " (`skillwire inspect` lists them)"
    return None, f"no skill named {_shown(name)!r} on this server{hint}"


def _check_dest(dest: Path, *, force: bool) -> None:
    try:
        if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
            raise PullRefused(f"DEST {dest} exists and is not a folder; choose a new folder")
        if dest.is_dir() and any(dest.iterdir()):
            raise PullRefused(f"DEST {dest} is not empty; choose a new or empty folder")
        parts = dest.expanduser().resolve().parts
    except OSError as err:
        raise PullRefused(f"DEST {_shortened(str(dest))} cannot be used: {write_failure(err)}") from None
    # DEST that is a listed name, or directly inside one (`repo/.git/x`, `~/.config/mise`), never with --force: a
    # tool would act on the skill's files as its own. Names further up are the user's own folders' business.
    trap = trusted_name_match(parts, ending_after=len(parts) - 2)
    if trap is not None:
        name, _, end = trap
        raise PullRefused(
            f"DEST {dest} is inside {Path(*parts[:end])}: {name.what} [{name.rule.id}]; pull elsewhere "
            "(--force does not change this)"
        )
    if not force:
        for i, part in enumerate(parts[:-1]):
            if part in SKILL_DISCOVERY_FOLDERS and parts[i + 1] == SKILLS_FOLDER:
                raise PullRefused(
                    f"DEST {dest} is inside the agent skill folder {Path(*parts[: i + 2])}, where an agent would load "
                    "it as a trusted local skill; pull elsewhere to review it, or pass --force"
                )
        match = agent_config_match(parts)
        if match is not None:
            found, start = match
            raise PullRefused(
                f"DEST {dest} is inside {Path(*parts[: start + len(found.segments)])}, agent configuration "
                f"({found.what}), where an agent would trust what is pulled; pull elsewhere to review it, "
                "or pass --force"
            )


async def _fetch(
    target: str | list[str],
    uri: str,  # or a skill's name
    placed: Sequence[str],
    force: bool,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    errlog: TextIO | None = None,
) -> tuple[dict[str, bytes], SkillEntry | None, str | None, str | None]:
    """The verified bytes of every file of the skill, by relative path, or why the skill cannot be pulled.

    A refusal is returned, not raised: raised inside the connection it would reach the user wrapped
    in the SDK's task-group exception. Paths are judged before any file is read.
    """
    async with connect_within(timeout, target, headers=headers, errlog=errlog) as client:
        if "://" not in uri:  # a name: the one listed skill that carries it
            listing = await client.list_entries()
            found, problem = resolve_name(uri, listing.entries)
            if found is None:
                incomplete = "" if listing.complete else f" (the listing is incomplete: {listing.cutoff})"
                return {}, None, client.server_name, f"{problem}{incomplete}"
            uri = found
        entry = await client.get_entry(uri)
        if isinstance(entry.resources, str):
            return {}, entry, client.server_name, f"{uri} is a dynamic skill: it has no manifest to verify against"
        paths, problems = _plan(entry, placed, force=force)
        if problems:  # one problem stays on one line; several get one line each
            lines = f" {problems[0]}" if len(problems) == 1 else "".join(f"\n  {p}" for p in problems)
            return {}, entry, client.server_name, f"not pulling {_shown(entry.uri)}, nothing written:{lines}"
        failures, verified = await verify_entry(client, entry)
        if failures:
            named = "; ".join(f"{f.uri}: {f.message}" for f in failures[:3])
            more = f" (and {len(failures) - 3} more)" if len(failures) > 3 else ""
            return {}, entry, client.server_name, f"verification failed, nothing written: {named}{more}"
        # Write exactly the bytes that were checked (reading again could fetch different ones).
        return {paths[u]: verified[u] for u in paths}, entry, client.server_name, None


def _plan(entry: SkillEntry, placed: Sequence[str], *, force: bool) -> tuple[dict[str, str], list[str]]:
    """Each listed uri's `/`-separated path inside DEST, and one line per file (or place) that may not be written.

    Judged on the names alone, before any file is read: a refused skill costs the server no reads.
    """
    assert not isinstance(entry.resources, str)
    paths: dict[str, str] = {}
    problems: list[str] = []
    for resource in entry.resources:
        try:
            segments = _segments(entry, resource.uri)
        except PullRefused as err:
            problems.append(str(err))
            continue
        rel = "/".join(segments)
        bad = sorted({c for s in segments for c in name_problem_chars(s)})
        if bad:
            problems.append(
                f"{_shown(rel)}: its name holds {', '.join(bad)} (control, bidi or zero-width characters), "
                "which no pulled file may have, even with --force"
            )
            continue
        long_name = next((s for s in segments if name_too_long(s)), None)
        if long_name is not None:
            size = len(long_name.encode("utf-8", "surrogatepass"))
            problems.append(
                f"{_shortened(rel)}: name too long ({size} bytes; a file system takes at most {MAX_NAME_BYTES}) "
                f"[{NAME_TOO_LONG.id}]"
            )
            continue
        paths[resource.uri] = rel
    refusals = refused_names(paths.values(), placed)
    problems.extend(_refusal_line(r) for r in refusals)
    if not force:
        trapped = {f for r in refusals for f in r.files}
        problems.extend(_agent_config_line(rel, placed) for rel in paths.values() if rel not in trapped)
    problems = [p for p in problems if p]
    problems.extend(_collisions(paths.values()))
    rules = dict.fromkeys(r.rule.id for r in refusals)
    problems.extend(f"[{rule}] fix for the skill's author: {FIXES[rule]}" for rule in rules)
    return paths, problems


def _refusal_line(refusal: Refusal) -> str:
    """One line for the files of a skill at or under one refused name: the first of them, which name, and why."""
    first, more = refusal.files[0], len(refusal.files) - 1
    also = f" and {more} more" if more else ""
    place = "" if refusal.where == first else f", in {_shown(refusal.where) + '/' if refusal.where else 'DEST'}"
    return f"{_shown(first)}{also}{place}: {refusal.what} [{refusal.rule.id}; never written, even with --force]"


def _agent_config_line(rel: str, placed: Sequence[str]) -> str:
    """The refusal of a file that would land on an agent-configuration path, or "" if it would not."""
    segments = rel.split("/")
    match = agent_config_match([*placed, *segments])
    if match is None:
        return ""
    found, start = match
    where = "/".join([*placed, *segments][start:])
    return (
        f"{_shown(rel)}: {_shown(where)} is agent configuration ({found.what}); an agent opened there would "
        "trust it as its own (pass --force to write it)"
    )


def _segments(entry: SkillEntry, uri: str) -> list[str]:
    """The decoded path segments of `uri` inside the skill; refuse anything that could leave DEST."""
    prefix = entry.root_uri + "/"
    if not uri.startswith(prefix):
        raise PullRefused(f"{_shown(uri)} is not inside the skill root {_shown(entry.root_uri)}")
    segments = [unquote(s) for s in uri[len(prefix) :].split("/")]
    for segment in segments:
        if segment in ("", ".", "..") or any(c in segment for c in "/\\\0") or segment == PROVENANCE_FILE:
            raise PullRefused(f"{_shown(uri)} has a path segment {_shown(repr(segment))} that cannot be written safely")
    return segments


def _collisions(paths: Iterable[str]) -> list[str]:
    """Two files that one disk would hold at one path (case, Unicode form), or a file that is also a folder."""
    seen: dict[str, str] = {}
    folders: dict[str, str] = {}
    problems: list[str] = []
    for rel in paths:
        segments = rel.split("/")
        keys = [disk_key(s) for s in segments]
        key = "/".join(keys)
        other = seen.get(key)
        if other is not None:
            problems.append(f"{_shown(rel)} and {_shown(other)} would be the same file on a case-insensitive disk")
        seen[key] = rel
        for i in range(1, len(keys)):
            folders.setdefault("/".join(keys[:i]), rel)
    for key, rel in seen.items():
        if key in folders:
            problems.append(f"{_shown(rel)} is a file, but {_shown(folders[key])} needs a folder at that path")
    return problems


def _shown(text: str) -> str:
    """A server-given name as one escaped line (`unicode_escape`, as `errors._shorten` does), bounded."""
    clean = text.encode("unicode_escape").decode("ascii")
    return clean if len(clean) <= _SHOWN_LIMIT else clean[:_SHOWN_LIMIT] + "..."


def _shortened(text: str) -> str:
    """A long name or path as one short escaped line: its start and its end, and how long it was."""
    if len(text) <= _SHORT_LIMIT:
        return _shown(text)
    return f"{_shown(text[:40])}...{_shown(text[-20:])} ({len(text)} characters)"


def write_failure(error: OSError) -> str:
    """Why the disk refused a write, in a few words (never the path: it may be thousands of characters)."""
    reasons = {
        errno.ENAMETOOLONG: "name too long for this file system",
        errno.EROFS: "the file system is read-only",
        errno.ENOSPC: "no space left on the disk",
        errno.EDQUOT: "over the disk quota",
        errno.EACCES: "permission denied",
        errno.EPERM: "not permitted",
        errno.EEXIST: "two of its files are one file on this disk",
    }
    return reasons.get(error.errno or 0) or error.strerror or type(error).__name__


def _provenance(server: str, server_name: str | None, entry: SkillEntry, files: dict[str, bytes]) -> dict[str, Any]:
    assert not isinstance(entry.resources, str)
    return {
        "version": 1,
        "server": server,
        "serverName": server_name,
        "skill": entry.uri,
        "pulledAt": datetime.now(UTC).isoformat(timespec="seconds"),
        "frontmatter": dict(entry.frontmatter),
        "files": [
            {"uri": r.uri, "path": "/".join(_segments(entry, r.uri)), "digest": r.digest, "size": r.size}
            for r in entry.resources
        ],
    }


def _write(dest: Path, files: dict[str, bytes], provenance: dict[str, Any]) -> None:
    """Write into a fresh sibling folder, then rename it to DEST: DEST never holds half a skill.

    A failing disk (full, read-only, a path too long) is one line naming the file; the staging folder, and any
    parent folder made for DEST, are removed again, so nothing of the skill is left.
    """
    parent = dest.absolute().parent
    made: list[Path] = []  # folders made for DEST, deepest first: removed again on failure
    staging: Path | None = None
    current = "DEST"
    try:
        made = [p for p in (parent, *parent.parents) if not p.exists()]
        parent.mkdir(parents=True, exist_ok=True)
        # The prefix is cut: a long DEST name must not make the staging folder's name too long to create.
        staging = Path(tempfile.mkdtemp(prefix=f".{dest.name[:64]}.pull-", dir=parent))
        real_staging = os.path.realpath(staging)
        for rel, data in files.items():
            current = rel
            path = staging.joinpath(*rel.split("/"))
            # Containment on the resolved path (the segments were checked; this is the belt to those braces).
            if not os.path.realpath(path).startswith(real_staging + os.sep):
                raise PullRefused(f"{rel} would be written outside DEST; nothing written")
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "xb") as fh:
                fh.write(data)
        current = PROVENANCE_FILE
        (staging / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=2, ensure_ascii=False) + "\n")
        current = "DEST"
        if dest.is_dir():
            dest.rmdir()  # empty (checked): replaced by the finished folder
        os.replace(staging, dest)
    except BaseException as err:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        for folder in made:
            try:
                folder.rmdir()
            except OSError:
                break
        if isinstance(err, OSError):
            where = "DEST" if current == "DEST" else _shortened(current)
            raise PullRefused(
                f"could not write {where} into {_shortened(str(dest))}: {write_failure(err)}; nothing written"
            ) from None
        raise
