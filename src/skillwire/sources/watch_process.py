"""The watcher process: watchfiles' native watcher over some folders, in a process of its own (`folder.watch`).

Setting a native watcher up walks every folder under the roots, and watchfiles does it holding the interpreter's
lock (in a worker thread too): about 0.7 s for 10,000 skills and 6 s for 100,000 during which a server doing it in
its own process answers nothing. This process does it instead, then answers its parent one request at a time: a
line in, one line out, the changes gathered since the last answer as JSON (`[[change, path], ...]`, `[]` when
nothing changed for `IDLE_MS`, the first answer once the watcher is set up), or `{"error": "..."}` before it ends.
Changes made while the parent is busy (rebuilding, say) wait in the native watcher and come in the next answer, as
they would with `watchfiles.awatch`. It ends when its input ends: its parent went away.

    python -P .../skillwire/sources/watch_process.py RECURSIVE DEBOUNCE_MS STEP_MS ROOT...   # RECURSIVE: 1 or 0

Run by its path, it imports nothing of skillwire's (and so never depends on how the parent found skillwire): it
starts in about 60 ms of CPU, most of it importing watchfiles. `python -m skillwire.sources.watch_process` runs it
too.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Sequence
from typing import BinaryIO

IDLE_MS = 100
"""How long the native watcher waits for a change before answering `[]` (how soon the first answer comes)."""


def follow(argv: Sequence[str], requests: BinaryIO, answers: BinaryIO) -> int:
    """Answer each line of `requests` with the changes since the last answer, on `answers`; the exit status."""
    try:
        recursive, debounce_ms, step_ms, roots = argv[0] == "1", int(argv[1]), int(argv[2]), argv[3:]
        from watchfiles import watch

        changes = watch(
            *roots,
            watch_filter=None,  # the parent decides which changes matter
            recursive=recursive,
            debounce=debounce_ms,
            step=step_ms,
            rust_timeout=IDLE_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
        )
        while requests.readline():
            batch = next(changes, None)  # the first call sets the watcher up, walking every folder
            if batch is None:
                return 0
            _answer(answers, [[int(change), path] for change, path in batch])
    except Exception as err:  # said to the parent, which restarts the watcher (or rescans on a timer)
        _answer(answers, {"error": f"{type(err).__name__}: {err}"})
        return 1
    return 0


def _answer(answers: BinaryIO, value: object) -> None:
    answers.write(json.dumps(value).encode("ascii") + b"\n")  # ASCII: a name that is not UTF-8 travels escaped
    answers.flush()


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it ends this process
    sys.exit(follow(sys.argv[1:], sys.stdin.buffer, sys.stdout.buffer))
