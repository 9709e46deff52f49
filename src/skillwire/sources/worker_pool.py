"""Work on every core: chunks handed to worker processes while this process does chunks too.

Reading, hashing and parsing many small files is mostly Python work, which threads cannot share (the GIL).
`run_chunks` gives each of a few worker processes a chunk at a time (a module-level function and its argument,
pickled) and, while they are busy, does the next chunk here itself; each answer is applied here, in this
process, as it comes. A worker is a fresh interpreter running this module (`python -m
skillwire.sources.worker_pool`), started for one call and ended with it: never forked from a server's threads,
and it imports nothing of the caller (unlike `multiprocessing`, which runs the caller's main module again).
If a worker cannot start or dies, the chunks it had are done here.

    run_chunks(chunks, workers_for(len(items)), here=do_here, task=to_send, apply=take_answer)
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
from collections.abc import Callable
from typing import IO, Any, Generic, TypeVar

logger = logging.getLogger(__name__)

C = TypeVar("C")

PARALLEL_FROM = 4096  # items: fewer are done in this process alone (starting a worker costs more than it saves)
IN_FLIGHT = 2  # chunks handed to each worker ahead: it never waits for the next one

Task = tuple[Callable[[Any], Any], Any]
"""A module-level function and its argument: what a worker runs for one chunk (its result is sent back)."""

_Answers = queue.SimpleQueue[tuple[int, Any, bool]]  # (worker, result, True) or (worker, None, False): it ended


def cores() -> int:
    """The cores this process may run on; 1 where no worker process can be started (embedded: no interpreter)."""
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return count if sys.executable else 1


def workers_for(items: int) -> int:
    """How many worker processes to use for `items` items (0: do them here)."""
    count = cores()
    if items < PARALLEL_FROM or count < 2:
        return 0
    return count - 1


def run_chunks(
    chunks: deque[C],
    workers: int,
    *,
    here: Callable[[C], None],
    task: Callable[[C], Task],
    apply: Callable[[C, Any], None],
    share: bool = True,
) -> None:
    """Do every chunk: `here(chunk)` in this process, or `apply(chunk, result)` with the result of `task(chunk)`
    run by one of `workers` worker processes. Chunks are taken in order; answers are applied in each worker's
    order. With `share` False this process does chunks only while the workers start (until the first answer)
    and once no worker is left: applying answers is work enough for it. Returns when `chunks` is empty."""
    if workers > 0:
        _with_workers(chunks, workers, here, task, apply, share=share)
    while chunks:
        here(chunks.popleft())


class _Worker(Generic[C]):
    """One worker process, the chunks handed to it (in order), and two threads: one writes tasks to it (a full
    pipe never blocks the caller, which does chunks itself meanwhile), one reads its answers."""

    def __init__(self, number: int, answers: _Answers) -> None:
        self.number = number
        self.pending: deque[C] = deque()
        self.alive = True
        self.proc = subprocess.Popen(
            [sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self._outbox: queue.SimpleQueue[Task | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._write, daemon=True),
            threading.Thread(target=self._read, args=(answers,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _write(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        with contextlib.suppress(OSError, ValueError, pickle.PicklingError):  # a worker gone: its reader says so
            while (item := self._outbox.get()) is not None:
                pickle.dump(item, stdin, protocol=pickle.HIGHEST_PROTOCOL)
                stdin.flush()
        with contextlib.suppress(OSError):
            stdin.close()  # end of input: the worker exits

    def _read(self, answers: _Answers) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            try:
                result = pickle.load(out)
            except Exception:  # end of output, or a worker that died mid-answer
                answers.put((self.number, None, False))
                return
            answers.put((self.number, result, True))

    def send(self, chunk: C, task: Task) -> None:
        self.pending.append(chunk)
        self._outbox.put(task)

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


def _with_workers(
    chunks: deque[C],
    count: int,
    here: Callable[[C], None],
    task: Callable[[C], Task],
    apply: Callable[[C, Any], None],
    *,
    share: bool,
) -> None:
    """Chunks to `count` workers and here until none is left; what a worker that died had is put back at the
    front of `chunks` (and done here after)."""
    answers: _Answers = queue.SimpleQueue()
    workers: list[_Worker[C]] = []
    try:
        for number in range(count):
            workers.append(_Worker(number, answers))
    except OSError as exc:  # no process can be started here (limits, a sandbox): go on with fewer
        logger.warning("working with %d worker process(es) of %d: %s", len(workers), count, exc)
    sharing = True  # chunks are done here while the workers start; after their first answer, only if `share`
    try:
        while True:
            for worker in workers:
                while worker.alive and chunks and len(worker.pending) < IN_FLIGHT:
                    chunk = chunks.popleft()
                    worker.send(chunk, task(chunk))
            if not any(w.pending for w in workers):
                return
            try:
                number, result, ok = answers.get_nowait() if chunks and sharing else answers.get()
            except queue.Empty:  # every worker is busy: do the next chunk here
                here(chunks.popleft())
                continue
            worker = workers[number]
            if not ok:
                if worker.pending:
                    logger.warning("a worker process ended early; its chunks are done here")
                chunks.extendleft(reversed(worker.pending))
                worker.pending.clear()
                worker.alive = False
                continue
            sharing = share
            apply(worker.pending.popleft(), result)
    finally:
        for worker in workers:
            chunks.extendleft(reversed(worker.pending))  # only after an error above: left for the caller
            worker.pending.clear()
            worker.stop()


def serve(tasks: IO[bytes], answers: IO[bytes]) -> None:
    """A worker's loop: a pickled (function, argument) in, the function's pickled result out, until input ends."""
    while True:
        try:
            function, argument = pickle.load(tasks)
        except EOFError:
            return
        pickle.dump(function(argument), answers, protocol=pickle.HIGHEST_PROTOCOL)
        answers.flush()


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
