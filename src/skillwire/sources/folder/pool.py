"""Hashing many walked files on every core (`worker_pool`), each file by `hash_file`, as the serial path does.

Worker processes get chunks of (name, path, inode) and send back what `hash_file` found; this process hashes
chunks itself meanwhile and fills each record in from the answers. The records come out exactly as the serial
path fills them (the same function runs, on the same paths, with the same checks). A scan with few files to
read, or one machine core, stays serial.

    errors = hash_files([(record, path), ...], real_root, progress)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from skillwire.core.digest import Digest
from skillwire.core.errors import SkillError
from skillwire.sources import worker_pool
from skillwire.sources.folder.hash import hash_file
from skillwire.sources.folder.records import FileRecord

CHUNK = 512  # files per task handed to a worker: large enough that passing it costs little beside reading it

Job = tuple[FileRecord, str]
"""A walked record and the path to read it at."""

_Task = tuple[list[tuple[str, str, int | None]], str]  # ((rel, path, ident) per file, real root): all a worker needs
# Per file: an OSError, or (size, stamp, digest, mime, frontmatter), a SkillError as (class, message, rule, path, line).
_Done = OSError | tuple[int, int | None, Digest | None, str, Any]


def hash_files(
    jobs: Sequence[Job], real_root: str, on_done: Callable[[int], None] | None = None, *, workers: int | None = None
) -> dict[int, OSError]:
    """Hash every job's record in place (as `hash_file` with no previous record); the errors by `id(record)`.

    `on_done(n)` is called as files are done (n more each time: one by one here, a chunk from a worker).
    `workers`: worker processes to use (default `worker_pool.workers_for(len(jobs))`; 0 hashes here alone)."""
    count = worker_pool.workers_for(len(jobs)) if workers is None else workers
    errors: dict[int, OSError] = {}
    chunks = deque(jobs[i : i + CHUNK] for i in range(0, len(jobs), CHUNK))

    def apply(chunk: Sequence[Job], done: list[_Done]) -> None:
        _apply(chunk, done, errors)
        if on_done is not None:
            on_done(len(chunk))

    worker_pool.run_chunks(
        chunks,
        count,
        here=partial(_hash_here, real_root=real_root, errors=errors, on_done=on_done),
        task=partial(_task_of, real_root=real_root),
        apply=apply,
    )
    return errors


def _hash_here(
    chunk: Sequence[Job], *, real_root: str, errors: dict[int, OSError], on_done: Callable[[int], None] | None
) -> None:
    for rec, path in chunk:
        error = hash_file(rec, path, None, 0, real_root)
        if error is not None:
            errors[id(rec)] = error
        if on_done is not None:
            on_done(1)


def _task_of(chunk: Sequence[Job], *, real_root: str) -> worker_pool.Task:
    return hash_task, ([(rec.rel, path, rec.ident) for rec, path in chunk], real_root)


def hash_task(task: _Task) -> list[_Done]:
    """In a worker: hash each file as `hash_file` does; what it found, in a form that crosses processes."""
    files, real_root = task
    out: list[_Done] = []
    for rel, path, ident in files:
        rec = FileRecord(rel, None)
        rec.ident = ident
        error = hash_file(rec, path, None, 0, real_root)
        if error is not None:
            out.append(error)
            continue
        fm = rec.frontmatter
        sent: Any = fm
        if isinstance(fm, SkillError):  # rebuilt on the other side: its fields are keyword arguments
            sent = (type(fm), fm.message, fm.rule, fm.path, fm.line)
        out.append((rec.size, rec.stamp, rec.digest, rec.mime, sent))
    return out


def _apply(chunk: Sequence[Job], done: list[_Done], errors: dict[int, OSError]) -> None:
    """Fill in each record of `chunk` from what a worker found, as `hash_file` would have."""
    for (rec, _), result in zip(chunk, done, strict=True):
        rec.ident = None
        if isinstance(result, OSError):
            rec.stamp = None
            errors[id(rec)] = result
            continue
        rec.size, rec.stamp, rec.digest, rec.mime, fm = result
        if isinstance(fm, tuple) and len(fm) == 5:
            kind, message, rule, path, line = fm
            fm = kind(message, rule=rule, path=path, line=line)
        rec.frontmatter = fm
