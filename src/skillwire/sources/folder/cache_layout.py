"""The folder source's snapshot as bytes: columns of every skill and file, decoded in bulk and checked as hostile.

A restart decodes the whole snapshot before it publishes anything, so the layout is made to decode in a few
C-level passes rather than one Python object per value (JSON cost about a third of a 100,000-skill restart):
each text column is one UTF-8 string split on "\\n" (no served name, folder or compact JSON holds a newline), each
number column an `array("q")`. What is rare (a skill folder reached through a link, files recorded apart, empty
folders, refusals) sits in a small JSON section. Every length, count, index and name is checked while decoding
(`ValueError`/`TypeError`/`IndexError` otherwise): a forged or truncated body is refused whole, never half used.

    body = encode(snapshot)
    snapshot = decode(body)          # a Snapshot whose rows passed the name checks; the roots are checked later
"""

from __future__ import annotations

import json
import operator
import os
import re
import struct
import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, NamedTuple

from skillwire.core.catalog import Refusal
from skillwire.core.uri import UNADDRESSABLE

_LENGTH = struct.Struct("<Q")  # each section: its length in bytes, then its bytes
_SECTIONS_PER_ROOT = 10


class SkillRow(NamedTuple):
    """One served skill as the snapshot keeps it: where its folder is, its frontmatter as recorded, and its files
    as parallel columns (in path order)."""

    folder: str  # root-relative ("" for a root that is itself a skill)
    skill_path: tuple[str, ...]  # follows from the folder (not stored): a row cannot publish a folder elsewhere
    hint: str  # the frontmatter recorded, as compact JSON: only compared, never published (SKILL.md is parsed)
    line: int  # where the frontmatter starts in SKILL.md
    real_dir: str  # the folder's resolved real path
    no_rules: bool  # no .skillwireignore applies inside it (a skill with rules is re-walked, never trusted)
    rels: list[str]
    digests: list[str]
    sizes: list[int]
    mimes: list[str]
    stamps: list[int]
    moved: dict[str, str]  # files (by path in the skill) not at real_dir/path: followed links
    folders: list[str]  # the skill's empty branches (`Skill.folders`: paths in the skill, sorted)


@dataclass(frozen=True, slots=True)
class RootRows:
    """One root's part of a snapshot: its resolved path when written, and its served skills in folder order."""

    real: str
    rows: list[SkillRow]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a scan left for the next start: the roots as named, how stamps were made, each root's rows (None for a
    root that could not be scanned), and the refusals published."""

    roots: list[str]
    stamps: str
    per_root: list[RootRows | None]
    refusals: list[Refusal]


def encode(snapshot: Snapshot) -> bytes:
    """The bytes `decode` reads back as `snapshot` (UnicodeEncodeError for a name that is not UTF-8)."""
    parts: list[dict[str, Any] | None] = []
    columns: list[bytes] = []
    for part in snapshot.per_root:
        if part is None:
            parts.append(None)
            continue
        rows = part.rows
        mimes = sorted({m for row in rows for m in row.mimes})
        index = {m: i for i, m in enumerate(mimes)}
        odd_dirs = {str(k): row.real_dir for k, row in enumerate(rows) if row.real_dir != _usual(part.real, row.folder)}
        parts.append(
            {
                "real": part.real,
                "skills": len(rows),
                "files": sum(len(row.rels) for row in rows),
                "mimes": mimes,
                "real_dirs": odd_dirs,
                "moved": {str(k): row.moved for k, row in enumerate(rows) if row.moved},
                "folders": {str(k): row.folders for k, row in enumerate(rows) if row.folders},
            }
        )
        columns += [
            _text([row.folder for row in rows]),
            _text([row.hint for row in rows]),
            array("q", [row.line for row in rows]).tobytes(),
            bytes(1 if row.no_rules else 0 for row in rows),
            array("q", [len(row.rels) for row in rows]).tobytes(),
            _text([rel for row in rows for rel in row.rels]),
            _text([d for row in rows for d in row.digests]),
            array("H", [index[m] for row in rows for m in row.mimes]).tobytes(),
            array("q", [s for row in rows for s in row.sizes]).tobytes(),
            array("q", [s for row in rows for s in row.stamps]).tobytes(),
        ]
    meta = {
        "byteorder": sys.byteorder,
        "roots": snapshot.roots,
        "stamps": snapshot.stamps,
        "per_root": parts,
        "refusals": [[r.path, r.rule, r.message, r.line, r.skill] for r in snapshot.refusals],
    }
    sections = [json.dumps(meta, separators=(",", ":")).encode("ascii"), *columns]
    return b"".join(_LENGTH.pack(len(s)) + s for s in sections)


def decode(body: bytes) -> Snapshot:
    """The snapshot `body` holds, every column's length, type and names checked (ValueError, TypeError,
    IndexError or KeyError for anything else: the caller ignores the cache)."""
    sections = _sections(body)
    meta = json.loads(sections[0])
    if not isinstance(meta, dict) or meta.get("byteorder") != sys.byteorder:
        raise ValueError("not written on a machine of this byte order")
    roots, stamps, parts = meta["roots"], meta["stamps"], meta["per_root"]
    if not (isinstance(roots, list) and all(isinstance(r, str) for r in roots) and isinstance(stamps, str)):
        raise TypeError("malformed roots")
    if not isinstance(parts, list) or len(parts) != len(roots):
        raise TypeError("malformed roots")
    if len(sections) != 1 + _SECTIONS_PER_ROOT * sum(p is not None for p in parts):
        raise ValueError("sections missing or left over")
    per_root: list[RootRows | None] = []
    at = 1
    for part in parts:
        if part is None:
            per_root.append(None)
            continue
        per_root.append(_root_rows(part, sections[at : at + _SECTIONS_PER_ROOT]))
        at += _SECTIONS_PER_ROOT
    return Snapshot(roots, stamps, per_root, [_refusal_from(item) for item in meta["refusals"]])


def _sections(body: bytes) -> list[bytes]:
    view = memoryview(body)
    sections: list[bytes] = []
    at = 0
    while at < len(view):
        if at + _LENGTH.size > len(view):
            raise ValueError("truncated")
        (length,) = _LENGTH.unpack_from(view, at)
        at += _LENGTH.size
        if length > len(view) - at:
            raise ValueError("truncated")
        sections.append(bytes(view[at : at + length]))
        at += length
    if not sections:
        raise ValueError("empty")
    return sections


def _root_rows(part: Any, columns: Sequence[bytes]) -> RootRows:
    """One root's rows from its meta entry and its ten columns, every name checked."""
    if not isinstance(part, dict):
        raise TypeError("malformed root")
    real, n, m, mimes = part["real"], part["skills"], part["files"], part["mimes"]
    odd_dirs, moved, empty = _sparse(part, "real_dirs", n), _sparse(part, "moved", n), _sparse(part, "folders", n)
    if not (isinstance(real, str) and type(n) is int and type(m) is int and isinstance(mimes, list)):
        raise TypeError("malformed root")
    if not all(isinstance(t, str) for t in mimes):
        raise TypeError("malformed MIME types")
    folder_col, hint_col, line_col, rules_col, count_col, rel_col, digest_col, mime_col, size_col, stamp_col = columns
    folders, hints, rels, digests = (
        _split(folder_col, n),
        _split(hint_col, n),
        _split(rel_col, m),
        _split(digest_col, m),
    )
    lines, counts = _numbers(line_col, "q", n), _numbers(count_col, "q", n)
    sizes, stamps = _numbers(size_col, "q", m), _numbers(stamp_col, "q", m)
    if len(rules_col) != n or rules_col.count(0) + rules_col.count(1) != n:
        raise ValueError("malformed rule flags")
    if (n and min(counts) < 1) or sum(counts) != m or (m and min(sizes) < 0):
        raise ValueError("malformed file counts or sizes")
    mime_of = [mimes[i] for i in _numbers(mime_col, "H", m)]  # IndexError for an index past the table
    for where in odd_dirs.values():
        if not isinstance(where, str):
            raise TypeError("malformed real folder")
    for links in moved.values():
        if not isinstance(links, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in links.items()):
            raise TypeError("malformed links")
    for kept in empty.values():
        if not isinstance(kept, list) or not all(isinstance(f, str) for f in kept):
            raise TypeError("malformed folders")
    _check_names(folder_col, rel_col, *("\n".join(f) for f in empty.values()), *("\n".join(d) for d in moved.values()))
    base = (os.path.basename(real),) if "" in folders else ()
    real_dirs = [real + "/" + folder if folder else real for folder in folders]
    for key, where in odd_dirs.items():
        real_dirs[int(key)] = where
    moved_of: list[dict[str, str]] = [{} for _ in folders]
    for key, found in moved.items():
        moved_of[int(key)] = found
    empty_of: list[list[str]] = [[] for _ in folders]
    for key, found in empty.items():
        empty_of[int(key)] = found
    ends = list(accumulate(counts))
    cuts = list(map(slice, map(operator.sub, ends, counts), ends))  # each skill's files: built in C, not per row
    rows = list(
        map(
            SkillRow,
            folders,
            [base + tuple(filter(None, folder.split("/"))) for folder in folders],
            hints,
            lines,
            real_dirs,
            [flag == 1 for flag in rules_col],
            map(rels.__getitem__, cuts),
            map(digests.__getitem__, cuts),
            map(sizes.__getitem__, cuts),
            map(mime_of.__getitem__, cuts),
            map(stamps.__getitem__, cuts),
            moved_of,
            empty_of,
        )
    )
    return RootRows(real, rows)


# A root-relative path that climbs out ("..") or is absolute, one per line.
_ESCAPING_REL = re.compile(r"(?m)(?:^|/)\.\.(?:/|$)|^/")


# Bytes that begin every character UNADDRESSABLE matches in UTF-8 (C0 but the column's own newline, DEL, the
# backslash, and the lead byte of C1): a column holding none of them needs no search (a third of a decode).
_SUSPECT = bytes(range(0x20)).replace(b"\n", b"") + b"\x7f\\\xc2"


def _check_names(*columns: bytes | str) -> None:
    """Every name is UTF-8 (decoding checks it), holds no character a read cannot name, and stays in its folder."""
    for column in columns:
        raw = column.encode("utf-8") if isinstance(column, str) else column  # UnicodeEncodeError: a lone surrogate
        text = raw.decode("utf-8")
        suspect = len(raw.translate(None, _SUSPECT)) != len(raw)
        if suspect and UNADDRESSABLE.search(text.replace("\n", "/")):  # nor a name no read may name (an old cache)
            raise ValueError("a file name holds a control character or a backslash")
        if (b".." in raw or b"/" in raw[:1] or b"\n/" in raw) and _ESCAPING_REL.search(text):
            raise ValueError("a file path climbs out of its skill folder (outside every root)")


def _sparse(part: dict[str, Any], name: str, n: int) -> dict[str, Any]:
    """A {skill index: value} entry of a root, its keys checked to name a skill."""
    found = part[name]
    if not isinstance(found, dict) or not all(k.isdigit() and int(k) < n for k in found):
        raise TypeError(f"malformed {name}")
    return found


def _split(column: bytes, count: int) -> list[str]:
    """`count` strings from a "\\n"-joined UTF-8 column (ValueError if there are more or fewer)."""
    items = column.decode("utf-8").split("\n") if count else []
    if len(items) != count or (not count and column):
        raise ValueError("a column holds more or fewer items than listed")
    return items


def _numbers(column: bytes, kind: str, count: int) -> list[int]:
    numbers = array(kind)
    numbers.frombytes(column)  # ValueError for a length that is not a multiple of the item size
    if len(numbers) != count:
        raise ValueError("a column holds more or fewer numbers than listed")
    return numbers.tolist()


def _text(items: list[str]) -> bytes:
    joined = "\n".join(items)
    if joined.count("\n") != max(len(items) - 1, 0):
        raise ValueError("a name holds a newline")  # never served (a control character): not written either
    return joined.encode("utf-8")


def _usual(real_root: str, folder: str) -> str:
    return real_root + "/" + folder if folder else real_root


def _refusal_from(item: Any) -> Refusal:
    """A refusal as the cache stored it, its types checked (TypeError otherwise)."""
    path, rule, message, line, skill = item
    if not (isinstance(path, str) and isinstance(rule, str) and isinstance(message, str)):
        raise TypeError("malformed refusal")
    if not (line is None or type(line) is int) or type(skill) is not bool:
        raise TypeError("malformed refusal")
    return Refusal(path, rule, message, line, skill)
