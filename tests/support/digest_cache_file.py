"""Reading and rewriting a folder source's digest cache file in tests, as a forger with a text editor would.

header, snapshot = read_cache(path)
snapshot.per_root[0].rows[0] = snapshot.per_root[0].rows[0]._replace(hint='{"name":"x"}')
write_cache(path, header, snapshot)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillwire.sources.folder.cache_layout import RootRows, Snapshot, decode, encode


def read_cache(path: Path) -> tuple[dict[str, Any], Snapshot]:
    """The header (decoded JSON) and the decoded snapshot of the cache file at `path`, each root's rows a list (to
    edit)."""
    header, _, body = path.read_bytes().partition(b"\n")
    found: dict[str, Any] = json.loads(header)
    snapshot = decode(body)
    per_root = [None if part is None else RootRows(part.real, list(part.rows)) for part in snapshot.per_root]
    return found, Snapshot(snapshot.roots, snapshot.stamps, per_root, snapshot.refusals)


def write_cache(path: Path, header: dict[str, Any], snapshot: Snapshot) -> None:
    """Write `snapshot` under `header`, whatever it says (`encode` checks nothing a reader must check)."""
    path.write_bytes(json.dumps(header).encode() + b"\n" + encode(snapshot))
