"""`skillwire pull SERVER SKILL_URI DEST`: copy one skill from a server into a folder, verified first.

Every file the entry lists is read and checked (size, digest; SKILL.md's frontmatter against the
entry) before anything is written: one failure and DEST is left as it was. Files are written into a
fresh sibling folder and renamed to DEST at the end, so DEST never holds half a skill. DEST must be
new or empty, and may not lie in an agent's skill discovery folder (`.claude/skills`, ...) unless
`--force`: a pulled skill is content from a server, not a skill the user installed.
`.skillwire-provenance.json` records where the bytes came from.

    skillwire pull http://127.0.0.1:8000/mcp skill://pdf-processing/SKILL.md ./pdf-processing
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from skillwire.cache.store import AGENT_FOLDERS, SKILLS_FOLDER
from skillwire.cli.inspect import call_server, server_target, verify_entry
from skillwire.cli.output import say
from skillwire.client.session import SkillsClient
from skillwire.errors import SkillwireError
from skillwire.host.entry import SkillEntry

__all__ = ["PROVENANCE_FILE", "run_pull"]

PROVENANCE_FILE = ".skillwire-provenance.json"


class PullRefused(SkillwireError):
    """The skill was not written: DEST is unsuitable, or a file failed verification."""


def run_pull(args: argparse.Namespace) -> int:
    dest = Path(args.dest)
    _check_dest(dest, force=args.force)
    target = server_target(args.server)
    files, entry, server_name, refusal = call_server(args.server, _fetch, target, args.skill_uri)
    if refusal:
        raise PullRefused(refusal)
    _write(dest, files, _provenance(args.server, server_name, entry, files))
    say(f"pulled {entry.uri} ({len(files)} file{'s' * (len(files) != 1)}, all verified) into {dest}")
    return 0


def _check_dest(dest: Path, *, force: bool) -> None:
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise PullRefused(f"DEST {dest} exists and is not a folder; choose a new folder")
    if dest.is_dir() and any(dest.iterdir()):
        raise PullRefused(f"DEST {dest} is not empty; choose a new or empty folder")
    if not force:
        parts = dest.expanduser().resolve().parts
        for i, part in enumerate(parts[:-1]):
            if part in AGENT_FOLDERS and parts[i + 1] == SKILLS_FOLDER:
                raise PullRefused(
                    f"DEST {dest} is inside the agent skill folder {Path(*parts[: i + 2])}, where an agent would load "
                    "it as a trusted local skill; pull elsewhere to review it, or pass --force"
                )


async def _fetch(target: str | list[str], uri: str) -> tuple[dict[str, bytes], SkillEntry, str | None, str | None]:
    """The verified bytes of every file of the skill, by relative path, or why the skill cannot be pulled.

    A refusal is returned, not raised: raised inside the connection it would reach the user wrapped
    in the SDK's task-group exception.
    """
    async with SkillsClient.connect(target) as client:
        entry = await client.get_entry(uri)
        if isinstance(entry.resources, str):
            return {}, entry, client.server_name, f"{uri} is a dynamic skill: it has no manifest to verify against"
        try:
            paths = {r.uri: _relative(entry, r.uri) for r in entry.resources}
        except PullRefused as err:
            return {}, entry, client.server_name, str(err)
        failures, verified = await verify_entry(client, entry)
        if failures:
            named = "; ".join(f"{f.uri}: {f.message}" for f in failures[:3])
            more = f" (and {len(failures) - 3} more)" if len(failures) > 3 else ""
            return {}, entry, client.server_name, f"verification failed, nothing written: {named}{more}"
        # Write exactly the bytes that were checked (reading again could fetch different ones).
        return {paths[u]: verified[u] for u in paths}, entry, client.server_name, None


def _relative(entry: SkillEntry, uri: str) -> str:
    """The `/`-separated path of `uri` inside the skill; refuse anything that could leave DEST."""
    prefix = entry.root_uri + "/"
    if not uri.startswith(prefix):
        raise PullRefused(f"{uri} is not inside the skill root {entry.root_uri}; nothing written")
    segments = [unquote(s) for s in uri[len(prefix) :].split("/")]
    for segment in segments:
        if segment in ("", ".", "..") or any(c in segment for c in "/\\\0") or segment == PROVENANCE_FILE:
            raise PullRefused(f"{uri} has a path segment {segment!r} that cannot be written safely; nothing written")
    return "/".join(segments)


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
            {"uri": r.uri, "path": _relative(entry, r.uri), "digest": r.digest, "size": r.size} for r in entry.resources
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
