"""Hashing many walked files on every core: worker processes beside this one, each running `hash_file`.

Reading and hashing a small file is mostly Python work, which threads cannot share (the GIL), so a large scan
hands chunks of files to worker processes and hashes chunks itself while they work; the records come out
exactly as `hash_file` fills them in serially (the same function runs, on the same paths, with the same checks).
A scan with few files to read, or one machine core, stays serial: starting a worker costs more than it saves.
Workers are started for one scan and end with it (no process outlives it) as fresh interpreters (`spawn`),
never forked from a server's threads; if they cannot be started or die, this process hashes what is left itself.

    errors = hash_files([(record, path), ...], real_root, progress)
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from skillwire.errors import SkillError
from skillwire.sources.folder_hash import hash_file
from skillwire.sources.folder_records import FileRecord

logger = logging.getLogger(__name__)

PARALLEL_FROM = 4096  # files to read: fewer are hashed in this process alone
CHUNK = 512  # files per task handed to a worker: large enough that passing it costs little beside reading it

Job = tuple[FileRecord, str]
"""A walked record and the path to read it at."""

_Task = list[tuple[str, str, int | None]]  # (rel, path, ident) per file: all a worker needs
# Per file: an OSError, or (size, stamp, digest, mime, frontmatter), a SkillError as (class, message, rule, path, line).
_Done = OSError | tuple[int, int | None, str | None, str, Any]


def workers_for(files: int) -> int:
    """How many worker processes to hash `files` files with (0: hash them here)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 0 if files < PARALLEL_FROM or cores < 2 else cores - 1


def hash_files(
    jobs: Sequence[Job], real_root: str, on_done: Callable[[int], None] | None = None, *, workers: int | None = None
) -> dict[int, OSError]:
    """Hash every job's record in place (as `hash_file` with no previous record); the errors by `id(record)`.

    `on_done(n)` is called as files are done (n more each time: one by one here, a chunk from a worker).
    `workers`: worker processes to use (default
    `workers_for(len(jobs))`; 0 hashes here alone)."""
    count = workers_for(len(jobs)) if workers is None else workers
    errors: dict[int, OSError] = {}
    chunks = deque(jobs[i : i + CHUNK] for i in range(0, len(jobs), CHUNK))
    if count > 0:
        try:
            _hash_in_pool(chunks, real_root, count, errors, on_done)
        except (OSError, BrokenProcessPool, RuntimeError) as exc:  # no processes here (limits, a sandbox): go on alone
            logger.warning("hashing in this process alone: worker processes failed (%s)", exc)
    while chunks:
        _hash_here(chunks.popleft(), real_root, errors, on_done)
    return errors


def _hash_here(
    chunk: Sequence[Job], real_root: str, errors: dict[int, OSError], on_done: Callable[[int], None] | None
) -> None:
    for rec, path in chunk:
        error = hash_file(rec, path, None, 0, real_root)
        if error is not None:
            errors[id(rec)] = error
        if on_done is not None:
            on_done(1)


def _hash_in_pool(
    chunks: deque[Sequence[Job]],
    real_root: str,
    count: int,
    errors: dict[int, OSError],
    on_done: Callable[[int], None] | None,
) -> None:
    """Hash chunks in `count` workers and here, until none is left; a chunk a broken pool did not finish is put
    back at the front of `chunks`."""
    context = multiprocessing.get_context("spawn")
    in_flight: deque[tuple[Sequence[Job], Future[list[_Done]]]] = deque()
    with ProcessPoolExecutor(count, mp_context=context) as pool:
        try:
            while chunks or in_flight:
                while chunks and len(in_flight) < 2 * count:
                    chunk = chunks.popleft()
                    in_flight.append((chunk, pool.submit(hash_task, _task_of(chunk), real_root)))
                if in_flight[0][1].done() or not chunks:
                    chunk, future = in_flight[0]
                    _apply(chunk, future.result(), errors)
                    in_flight.popleft()
                    if on_done is not None:
                        on_done(len(chunk))
                else:  # the workers are busy: take the next chunk here
                    _hash_here(chunks.popleft(), real_root, errors, on_done)
        except BaseException:
            chunks.extendleft(reversed([chunk for chunk, _ in in_flight]))
            for _, future in in_flight:
                future.cancel()
            raise


def _task_of(chunk: Sequence[Job]) -> _Task:
    return [(rec.rel, path, rec.ident) for rec, path in chunk]


def hash_task(task: _Task, real_root: str) -> list[_Done]:
    """In a worker: hash each file as `hash_file` does; what it found, in a form that crosses processes."""
    out: list[_Done] = []
    for rel, path, ident in task:
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
