"""`skillwire lock show|accept LOCK`: review and accept the upstream changes a pinned gateway holds back.

    $ skillwire lock show skills.lock
    1 change held (skills.lock.pending):
    changed  skill://pdf/SKILL.md  from http://127.0.0.1:8001/mcp
      ~ forms.md  24 -> 25 bytes
        --- forms.md (locked)
        +++ forms.md (upstream)
        -# Forms, first edition
        +# Forms, second edition
    $ skillwire lock accept skills.lock --all
    accepted: changed skill://pdf/SKILL.md from http://127.0.0.1:8001/mcp

The diff of a text file is shown when both versions are in the gateway cache (`--gateway-cache`, as given to
serve); a running gateway notices the accepted lock within a second and serves the accepted versions.
"""

from __future__ import annotations

import argparse
import difflib
from typing import TYPE_CHECKING

from skillwire.cli.errors import CliError, UsageError
from skillwire.cli.output import say
from skillwire.core.errors import SpecError
from skillwire.core.uri import normal_uri

if TYPE_CHECKING:  # imported when a command runs: `skillwire --help` loads no source (nor the SDK, through them)
    from skillwire.sources.mcp.lock import LockedFile, LockedSkill, LockFile, Pending, PinnedState
    from skillwire.sources.mcp.store import GatewayCache

__all__ = ["add_lock"]

_DIFF_LINES = 200  # lines of a file's diff shown; the rest is counted
_DIFF_BYTES = 1 << 20  # files larger than this are compared by digest and size only


def add_lock(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    """`skillwire lock show` and `skillwire lock accept`."""
    lock = sub.add_parser(
        "lock",
        parents=[common],
        help="review and accept upstream changes a gateway pinned with --lock holds back",
        description="A gateway serving mcp: sources with --lock FILE serves the versions in FILE and keeps upstream "
        "changes in FILE.pending. `show` lists them with a diff; `accept` moves them into FILE.",
    )
    actions = lock.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = actions.add_parser("show", parents=[common], help="list the held changes, with a diff of text files")
    show.add_argument("lock", metavar="FILE", help="the lock file given to serve --lock")
    show.add_argument("--gateway-cache", metavar="DIR", help="the gateway cache given to serve (for the diffs)")
    show.set_defaults(func=_show)
    accept = actions.add_parser("accept", parents=[common], help="accept held changes into the lock")
    accept.add_argument("lock", metavar="FILE", help="the lock file given to serve --lock")
    accept.add_argument("uris", nargs="*", metavar="URI", help="the upstream SKILL.md URIs to accept (as shown)")
    accept.add_argument("--all", action="store_true", help="accept every held change")
    accept.set_defaults(func=_accept)


def _open(path: str) -> tuple[LockFile, PinnedState, list[Pending]]:
    from skillwire.sources.mcp.lock import LockFile

    lock = LockFile(path)
    try:
        pinned = lock.load()
        pending = lock.load_pending()
    except SpecError as err:
        raise CliError(str(err)) from None
    if pinned is None:
        raise CliError(f"{lock.path}: no such lock file (serve --lock writes it from the first verified state)")
    return lock, pinned, pending


def _show(args: argparse.Namespace) -> int:
    lock, pinned, pending = _open(args.lock)
    if not pending:
        say(f"no change held: the gateway serves what {lock.path.name} locks ({len(pinned.skills)} skills)")
        return 0
    from skillwire.sources.mcp.store import GatewayCache

    cache = None if args.gateway_cache is None else GatewayCache(args.gateway_cache)
    say(f"{len(pending)} change{'s' if len(pending) != 1 else ''} held ({lock.pending_path.name}):")
    for change in pending:
        say(f"{change.change:8} {change.skill.uri}  from {change.skill.upstream}")
        was = pinned.skills.get(change.skill.key)
        for line in _file_changes(was, change.skill, cache):
            say("  " + line)
    return 0


def _file_changes(was: LockedSkill | None, now: LockedSkill, cache: GatewayCache | None) -> list[str]:
    before = {f.path: f for f in was.files} if was is not None else {}
    after = {f.path: f for f in now.files}
    lines: list[str] = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        if old is None:
            assert new is not None
            lines.append(f"+ {path}  {new.size} bytes")
        elif new is None:
            lines.append(f"- {path}  {old.size} bytes")
        else:
            lines.append(f"~ {path}  {old.size} -> {new.size} bytes")
            lines += ["  " + d for d in _diff(path, old, new, cache)]
    return lines


def _diff(path: str, old: LockedFile, new: LockedFile, cache: GatewayCache | None) -> list[str]:
    """A unified diff of two text versions in the cache; nothing when one is missing, too large or not text."""
    if cache is None or max(old.size, new.size) > _DIFF_BYTES:
        return []
    texts: list[list[str]] = []
    for version in (old, new):
        data = cache.read(version.digest, version.size)
        if data is None:
            return []
        try:
            texts.append(data.decode("utf-8").splitlines())
        except UnicodeDecodeError:
            return []
    before, after = texts
    lines = list(difflib.unified_diff(before, after, f"{path} (locked)", f"{path} (upstream)", lineterm="", n=2))
    if len(lines) > _DIFF_LINES:
        lines = [*lines[:_DIFF_LINES], f"... {len(lines) - _DIFF_LINES} more lines"]
    return lines


def _accept(args: argparse.Namespace) -> int:
    if args.all == bool(args.uris):
        raise UsageError("name the URIs to accept, or --all (not both)")
    lock, pinned, pending = _open(args.lock)
    wanted = {normal_uri(u) for u in args.uris}
    chosen = [p for p in pending if args.all or normal_uri(p.skill.uri) in wanted]
    unknown = wanted - {normal_uri(p.skill.uri) for p in pending}
    if unknown:
        raise CliError(f"no held change for {', '.join(sorted(unknown))} (see skillwire lock show)")
    from skillwire.sources.mcp.lock import PinnedState

    skills = dict(pinned.skills)
    for change in chosen:
        if change.change == "removed":
            skills.pop(change.skill.key, None)
        else:
            skills[change.skill.key] = change.skill
    with lock.guard:
        try:
            lock.save(PinnedState(pinned.upstreams, skills))
            lock.save_pending([p for p in pending if p not in chosen])
        except (OSError, SpecError) as err:
            raise CliError(f"{lock.path}: cannot be written: {err}") from None
    for change in chosen:
        say(f"accepted: {change.change} {change.skill.uri} from {change.skill.upstream}")
    return 0
