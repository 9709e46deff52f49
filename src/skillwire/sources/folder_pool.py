"""Hashing many walked files on every core: worker processes beside this one, each running `hash_file`.

Reading and hashing a small file is mostly Python work, which threads cannot share (the GIL), so a large scan
hands chunks of files to worker processes and hashes chunks itself while they work; the records come out
exactly as `hash_file` fills them in serially (the same function runs, on the same paths, with the same checks).
A scan with few files to read, or one machine core, stays serial: starting a worker costs more than it saves.

A worker is a fresh interpreter running this module (`python -m skillwire.sources.folder_pool`), started for
one scan and ended with it: never forked from a server's threads, and it imports nothing of the caller (unlike
`multiprocessing`, which runs the caller's main module again). Chunks and results cross its stdin and stdout
as pickles between this process and its own child. If a worker cannot start or dies, its chunks are hashed here.

    errors = hash_files([(record, path), ...], real_root, progress)
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import IO, Any

from skillwire.errors import SkillError
from skillwire.sources.folder_hash import hash_file
from skillwire.sources.folder_records import FileRecord

logger = logging.getLogger(__name__)

PARALLEL_FROM = 4096  # files to read: fewer are hashed in this process alone
CHUNK = 512  # files per task handed to a worker: large enough that passing it costs little beside reading it
IN_FLIGHT = 2  # chunks handed to each worker ahead: it never waits for the next one

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
    `workers`: worker processes to use (default `workers_for(len(jobs))`; 0 hashes here alone)."""
    count = workers_for(len(jobs)) if workers is None else workers
    errors: dict[int, OSError] = {}
    chunks = deque(jobs[i : i + CHUNK] for i in range(0, len(jobs), CHUNK))
    if count > 0:
        _hash_with_workers(chunks, real_root, count, errors, on_done)
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


class _Worker:
    """One worker process, the chunks handed to it (in order), and two threads: one writes chunks to it (a full
    pipe never blocks the scan, which hashes chunks itself meanwhile), one reads its answers."""

    def __init__(self, number: int, answers: queue.SimpleQueue[tuple[int, list[_Done] | None]]) -> None:
        self.number = number
        self.pending: deque[Sequence[Job]] = deque()
        self.alive = True
        self.proc = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._outbox: queue.SimpleQueue[tuple[_Task, str] | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._write, daemon=True),
            threading.Thread(target=self._read, args=(answers,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _write(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        with contextlib.suppress(OSError, ValueError):  # a worker gone: its reader says so
            while (item := self._outbox.get()) is not None:
                pickle.dump(item, stdin, protocol=pickle.HIGHEST_PROTOCOL)
                stdin.flush()
        with contextlib.suppress(OSError):
            stdin.close()  # end of input: the worker exits

    def _read(self, answers: queue.SimpleQueue[tuple[int, list[_Done] | None]]) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            try:
                done = pickle.load(out)
            except Exception:  # end of output, or a worker that died mid-answer: None says it is gone
                answers.put((self.number, None))
                return
            answers.put((self.number, done))

    def send(self, chunk: Sequence[Job], real_root: str) -> None:
        self.pending.append(chunk)
        self._outbox.put((_task_of(chunk), real_root))

    def stop(self) -> None:
        self._outbox.put(None)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for thread in self._threads:
            thread.join(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _hash_with_workers(
    chunks: deque[Sequence[Job]],
    real_root: str,
    count: int,
    errors: dict[int, OSError],
    on_done: Callable[[int], None] | None,
) -> None:
    """Hash chunks in `count` workers and here until none is left; what a worker that died left undone is put
    back at the front of `chunks` (hashed here after)."""
    answers: queue.SimpleQueue[tuple[int, list[_Done] | None]] = queue.SimpleQueue()
    workers: list[_Worker] = []
    try:
        for number in range(count):
            workers.append(_Worker(number, answers))
    except OSError as exc:  # no process can be started here (limits, a sandbox): go on with fewer
        logger.warning("hashing with %d worker process(es) of %d: %s", len(workers), count, exc)
    try:
        while True:
            for worker in workers:
                while worker.alive and chunks and len(worker.pending) < IN_FLIGHT:
                    worker.send(chunks.popleft(), real_root)
            if not any(w.pending for w in workers):
                return
            try:
                number, done = answers.get_nowait() if chunks else answers.get()
            except queue.Empty:  # every worker is busy: take the next chunk here
                _hash_here(chunks.popleft(), real_root, errors, on_done)
                continue
            worker = workers[number]
            if done is None:
                if worker.pending:
                    logger.warning("a hashing worker process ended early; its files are hashed here")
                chunks.extendleft(reversed(worker.pending))
                worker.pending.clear()
                worker.alive = False
                continue
            chunk = worker.pending.popleft()
            _apply(chunk, done, errors)
            if on_done is not None:
                on_done(len(chunk))
    finally:
        for worker in workers:
            chunks.extendleft(reversed(worker.pending))  # only on an error above: left for the caller
            worker.pending.clear()
            worker.stop()


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


def serve(tasks: IO[bytes], answers: IO[bytes]) -> None:
    """The worker's loop: a pickled (task, real root) in, its pickled results out, until the input ends."""
    while True:
        try:
            task, real_root = pickle.load(tasks)
        except EOFError:
            return
        pickle.dump(hash_task(task, real_root), answers, protocol=pickle.HIGHEST_PROTOCOL)
        answers.flush()


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
