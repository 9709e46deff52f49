"""`skillwire pull SERVER SKILL DEST`: copy one skill (by name or SKILL.md URI) into a folder, verified first.

Every file the entry lists is read and checked (size, digest; SKILL.md's frontmatter against the
entry) before anything is written: one failure and DEST is left as it was. Files are written into a
fresh sibling folder and renamed to DEST at the end, so DEST never holds half a skill. DEST must be
new or empty, and may not lie in an agent's skill discovery folder (`.claude/skills`, ...) or any
other agent-configuration folder unless `--force`: a pulled skill is content from a server, not a
skill the user installed. For the same reason a file the skill lists that would land at an agent
configuration path inside DEST (`.claude/settings.json`, `CLAUDE.md`, `x/.agents/skills/...`: the
list is `skillwire.host.agent_paths`) is refused without `--force`, one line per file, and a file
name holding control, bidi or zero-width characters is refused always. `.skillwire-provenance.json`
records where the bytes came from.

    skillwire pull http://127.0.0.1:8000/mcp skill://pdf-processing/SKILL.md ./pdf-processing
    skillwire pull http://127.0.0.1:8000/mcp pdf-processing ./pdf-processing   # the one skill of that name
"""

from __future__ import annotations

import argparse
import difflib
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
from skillwire.cli.formats import Annotation, emit
from skillwire.cli.inspect import call_server, connect_within, headers_from, server_target, verify_entry
from skillwire.cli.output import say
from skillwire.client.session import DEFAULT_TIMEOUT_S
from skillwire.errors import SkillwireError
from skillwire.host.agent_paths import (
    SKILL_DISCOVERY_FOLDERS,
    SKILLS_FOLDER,
    agent_config_match,
    disk_key,
    name_problem_chars,
)
from skillwire.host.entry import SkillEntry

__all__ = ["PROVENANCE_FILE", "PullReport", "resolve_name", "run_pull"]

PROVENANCE_FILE = ".skillwire-provenance.json"
_SHOWN_LIMIT = 200
_CANDIDATES = 20  # same-named skills listed in the error; a hostile listing may hold thousands


class PullRefused(SkillwireError):
    """The skill was not written: DEST is unsuitable, or a file failed verification."""


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
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise PullRefused(f"DEST {dest} exists and is not a folder; choose a new folder")
    if dest.is_dir() and any(dest.iterdir()):
        raise PullRefused(f"DEST {dest} is not empty; choose a new or empty folder")
    if not force:
        parts = dest.expanduser().resolve().parts
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
        if problems:
            lines = "\n".join(f"  {p}" for p in problems)
            return {}, entry, client.server_name, f"not pulling {_shown(entry.uri)}, nothing written:\n{lines}"
        failures, verified = await verify_entry(client, entry)
        if failures:
            named = "; ".join(f"{f.uri}: {f.message}" for f in failures[:3])
            more = f" (and {len(failures) - 3} more)" if len(failures) > 3 else ""
            return {}, entry, client.server_name, f"verification failed, nothing written: {named}{more}"
        # Write exactly the bytes that were checked (reading again could fetch different ones).
        return {paths[u]: verified[u] for u in paths}, entry, client.server_name, None


def _plan(entry: SkillEntry, placed: Sequence[str], *, force: bool) -> tuple[dict[str, str], list[str]]:
    """Each listed uri's `/`-separated path inside DEST, and one line per file that may not be written there."""
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
        paths[resource.uri] = rel
        if force:
            continue
        match = agent_config_match([*placed, *segments])
        if match is not None:
            found, start = match
            where = "/".join([*placed, *segments][start:])
            problems.append(
                f"{_shown(rel)}: {_shown(where)} is agent configuration ({found.what}); an agent opened there would "
                "trust it as its own (pass --force to write it)"
            )
    problems.extend(_collisions(paths.values()))
    return paths, problems


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
    """Write into a fresh sibling folder, then rename it to DEST: DEST never holds half a skill."""
    parent = dest.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.pull-", dir=parent))
    try:
        real_staging = os.path.realpath(staging)
        for rel, data in files.items():
            path = staging.joinpath(*rel.split("/"))
            # Containment on the resolved path (the segments were checked; this is the belt to those braces).
            if not os.path.realpath(path).startswith(real_staging + os.sep):
                raise PullRefused(f"{rel} would be written outside DEST; nothing written")
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "xb") as fh:
                fh.write(data)
        (staging / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=2, ensure_ascii=False) + "\n")
        if dest.is_dir():
            dest.rmdir()  # empty (checked): replaced by the finished folder
        os.replace(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
