"""The folder source's snapshot as bytes: columns of every skill and file, decoded in bulk and checked as hostile.

A restart decodes the whole snapshot before it publishes anything, so the layout is made to decode in a few
C-level passes rather than one Python object per value (JSON cost about a third of a 100,000-skill restart):
each text column is one UTF-8 string split on "\\n" (no served name, folder or compact JSON holds a newline), each
number column an `array("q")`. What is rare (a skill folder reached through a link, files recorded apart, empty
folders, refusals) sits in a small JSON section. Every length, count, index and name is checked while decoding
(`ValueError`/`TypeError`/`IndexError` otherwise): a forged or truncated body is refused whole, never half used.
Decoded rows stay columns (`ColumnRows`): each `SkillRow` is made when asked, so a restart that builds few skills
makes few rows (at 100,000 skills, making every row was two thirds of a decode).

    body = encode(snapshot)
    snapshot = decode(body)          # a Snapshot whose rows passed the name checks; the roots are checked later
"""

from __future__ import annotations

import json
import os
import re
import struct
import sys
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, NamedTuple, overload

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
    """One root's part of a snapshot: its resolved path when written, and its served skills in folder order
    (decoded: `ColumnRows`)."""

    real: str
    rows: Sequence[SkillRow]


class ColumnRows(Sequence[SkillRow]):
    """A root's rows as decoded columns, every name and count already checked; each `SkillRow` is made when asked.

    What a restore needs of every row without making it: its folder, real folder, files recorded apart, and how
    many files it lists."""

    __slots__ = (
        "_digests",
        "_empty",
        "_hints",
        "_lines",
        "_mime_index",
        "_mimes",
        "_moved",
        "_odd_dirs",
        "_rels",
        "_rules",
        "_sizes",
        "_stamps",
        "_starts",
        "base",
        "folders",
        "real",
    )

    def __init__(
        self,
        real: str,
        *,
        folders: list[str],
        hints: list[str],
        lines: array[int],
        rules: bytes,
        counts: Iterable[int],
        files: tuple[list[str], list[str], list[str], array[int], array[int], array[int]],
        sparse: tuple[dict[int, str], dict[int, dict[str, str]], dict[int, list[str]]],
    ) -> None:
        """`files`: every row's files in order: paths, digests, the MIME table, each file's index in it, sizes,
        stamps. `sparse`: by row, real folders other than the usual one, files recorded apart, empty folders."""
        self.real, self.folders, self._hints, self._lines, self._rules = real, folders, hints, lines, rules
        self._starts = array("q", [0])
        self._starts.extend(accumulate(counts))
        self._rels, self._digests, self._mimes, self._mime_index, self._sizes, self._stamps = files
        self._odd_dirs, self._moved, self._empty = sparse
        self.base: tuple[str, ...] = (os.path.basename(real),) if "" in folders else ()

    @classmethod
    def of(cls, real: str, rows: Sequence[SkillRow]) -> ColumnRows:
        """`rows` (as `snapshot_of` makes them) as columns."""
        if isinstance(rows, ColumnRows):
            return rows
        mimes = sorted({m for row in rows for m in row.mimes})
        index = {m: i for i, m in enumerate(mimes)}
        return cls(
            real,
            folders=[row.folder for row in rows],
            hints=[row.hint for row in rows],
            lines=array("q", [row.line for row in rows]),
            rules=bytes(1 if row.no_rules else 0 for row in rows),
            counts=[len(row.rels) for row in rows],
            files=(
                [rel for row in rows for rel in row.rels],
                [d for row in rows for d in row.digests],
                mimes,
                array("H", [index[m] for row in rows for m in row.mimes]),
                array("q", [s for row in rows for s in row.sizes]),
                array("q", [s for row in rows for s in row.stamps]),
            ),
            sparse=(
                {k: row.real_dir for k, row in enumerate(rows) if row.real_dir != _usual(real, row.folder)},
                {k: row.moved for k, row in enumerate(rows) if row.moved},
                {k: row.folders for k, row in enumerate(rows) if row.folders},
            ),
        )

    def __len__(self) -> int:
        return len(self.folders)

    @overload
    def __getitem__(self, k: int) -> SkillRow: ...

    @overload
    def __getitem__(self, k: slice) -> list[SkillRow]: ...

    def __getitem__(self, k: int | slice) -> SkillRow | list[SkillRow]:
        if isinstance(k, slice):
            return [self[i] for i in range(len(self))[k]]
        k = range(len(self))[k]  # IndexError past either end
        a, b = self._starts[k], self._starts[k + 1]
        return SkillRow(
            self.folders[k],
            self.skill_path(k),
            self._hints[k],
            self._lines[k],
            self.real_dir(k),
            self._rules[k] == 1,
            self._rels[a:b],
            self._digests[a:b],
            self._sizes[a:b].tolist(),
            [self._mimes[i] for i in self._mime_index[a:b]],
            self._stamps[a:b].tolist(),
            dict(self._moved.get(k, {})),
            list(self._empty.get(k, [])),
        )

    def skill_path(self, k: int) -> tuple[str, ...]:
        """Row `k`'s skill path: it follows from its folder (not stored), so no row names a folder elsewhere."""
        return self.base + tuple(filter(None, self.folders[k].split("/")))

    def real_dir(self, k: int) -> str:
        odd = self._odd_dirs.get(k)
        return odd if odd is not None else _usual(self.real, self.folders[k])

    def moved(self, k: int) -> dict[str, str]:
        return self._moved.get(k, {})

    def file_count(self, k: int, end: int | None = None) -> int:
        """How many files row `k` lists (with `end`: rows `k` to `end`, excluded, together)."""
        return self._starts[k + 1 if end is None else end] - self._starts[k]

    def unusual(self) -> list[int]:
        """The rows whose folder is not the usual one (root + folder) or that record files apart (links), few."""
        return sorted({*self._odd_dirs, *self._moved})


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
    """One root's rows from its meta entry and its ten columns, every name, count and index checked."""
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
    sizes, stamps, mime_index = _numbers(size_col, "q", m), _numbers(stamp_col, "q", m), _numbers(mime_col, "H", m)
    if len(rules_col) != n or rules_col.count(0) + rules_col.count(1) != n:
        raise ValueError("malformed rule flags")
    if (n and min(counts) < 1) or sum(counts) != m or (m and min(sizes) < 0):
        raise ValueError("malformed file counts or sizes")
    if m and max(mime_index) >= len(mimes):
        raise IndexError("a MIME type index past the table")
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
    rows = ColumnRows(
        real,
        folders=folders,
        hints=hints,
        lines=lines,
        rules=rules_col,
        counts=counts,
        files=(rels, digests, mimes, mime_index, sizes, stamps),
        sparse=(
            {int(k): v for k, v in odd_dirs.items()},
            {int(k): v for k, v in moved.items()},
            {int(k): v for k, v in empty.items()},
        ),
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


def _numbers(column: bytes, kind: str, count: int) -> array[int]:
    numbers = array(kind)
    numbers.frombytes(column)  # ValueError for a length that is not a multiple of the item size
    if len(numbers) != count:
        raise ValueError("a column holds more or fewer numbers than listed")
    return numbers


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
