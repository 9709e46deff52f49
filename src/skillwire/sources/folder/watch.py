"""Follow folders with `watchfiles` and ask for a rebuild after each burst of changes: `FolderSource.watch`.

A burst of writes is one call of `rebuild(paths)` with the changed paths (the folder source re-indexes only the
skills holding them); `rebuild(None)` asks for a full rescan (the catch-up once the watcher is up, a root that
appeared or went away). A root that does not exist is watched once it does; a failed watcher is restarted after
a growing pause (ten minutes when the system's limit on watched folders is reached); a folder whose name is not
UTF-8 (watchfiles cannot watch it) turns watching into a rescan on a timer until it is renamed.

The native watcher runs in a process of its own (`sources/watch_process.py`): setting it up walks every folder
under the roots holding the interpreter's lock (6 s for 100,000 skills), which a server must not do while it
answers. Where no interpreter can be started (an embedded Python), it runs here, as `watchfiles.awatch` runs it.

    await watch_folders((Path("skills"),), rebuild, task_status=task_status)
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from pathlib import Path

import anyio
from anyio.abc import TaskStatus
from anyio.streams.buffered import BufferedByteReceiveStream

from skillwire.sources import watch_process
from skillwire.sources.port import DEFAULT_PACE, Rebuild, WatchPace

logger = logging.getLogger(__name__)

_IDLE_TIMEOUT_MS = watch_process.IDLE_MS  # how soon the watcher reports that it is up (its first, maybe empty, batch)
_MAX_ANSWER_BYTES = 64 << 20  # one burst's changed paths; a larger one restarts the watcher, which then rescans
_RESTART_DELAY_S = 1.0  # after the watcher itself fails (inotify limits, ...): wait, then watch again
_MAX_RESTART_DELAY_S = 30.0
_UNDECODABLE = "Unable to decode path"  # watchfiles' error for a path that is not UTF-8
_UNDECODABLE_RESCAN_S = 10.0  # how often to rescan while such a folder keeps the watcher from starting
_LIMIT_REACHED = "OS file watch limit reached"  # watchfiles' error when the system allows no more watched folders
_LIMIT_RETRY_S = 600.0  # how long to serve unwatched before trying again (the limit is the administrator's)


async def watch_folders(
    all_roots: tuple[Path, ...],
    rebuild: Rebuild,
    *,
    pace: WatchPace = DEFAULT_PACE,
    recursive: bool = True,
    only: Callable[[str], bool] | None = None,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Call `rebuild` after every burst of file changes under `all_roots`, with the changed paths; runs until
    cancelled. `recursive=False` watches only the roots' own entries; `only` keeps the changed paths it accepts.

    A burst (writes closer together than `pace.step_ms`, for at most `pace.debounce_ms`) is one
    rebuild; changes made while a rebuild runs are gathered into the next one, so the
    last rebuild always starts after the last change and the catalog ends consistent
    with the disk. Once the watcher is up, one catch-up rebuild covers changes made
    between the source's first scan and now; `task_status.started()` follows it (a
    watcher that cannot start at all catches up once too, then restarts later).

    A rebuild re-indexes only the skills holding the changed paths (the catch-up is a
    rescan, which still reads only files whose stat changed). A failed rebuild is logged and the watcher carries on. A
    root that does not exist is reported once and watched when it appears (the
    others are watched meanwhile); a failed watcher is restarted after a growing
    pause, with a one-line warning. Cancellation stops it cleanly.
    """
    started = False
    reported: set[Path] = set()  # roots already reported as not watchable, so each is said once
    delay = _RESTART_DELAY_S
    previous: tuple[Path, ...] | None = None
    degraded = False  # rescanning on a timer: watchfiles cannot start under a folder whose name is not UTF-8
    while True:
        roots = _watchable(all_roots)
        for root in sorted(set(all_roots) - set(roots) - reported):
            logger.warning("not watching %s: no such folder (it is watched once it exists; SIGHUP rescans)", root)
        reported = set(all_roots) - set(roots)
        if not roots:
            if previous:
                await rebuild(None)  # the last watched root went away
            previous = roots
            if not started:
                started = True
                task_status.started()
            await anyio.sleep(delay)
            continue
        previous = roots
        catch_up = True  # once this watcher is up: whatever changed while nothing watched
        up = False  # this watcher yielded once: it is set up
        try:
            # By default every change counts: the source decides what is served, so any change may matter.
            batches = _batches(roots, pace, recursive=recursive, only=only)
            since = time.monotonic()
            async with aclosing(batches):  # a `break` releases the native watcher at once, not at GC
                async for changes in batches:
                    if not up:
                        logger.info("watching %s (set up in %.1f s)", _show(roots), time.monotonic() - since)
                    up = True
                    if changes or catch_up:
                        logger.debug("%d file changes under %s; rebuilding", len(changes), _show(roots))
                        await rebuild(None if catch_up else sorted(changes))
                        catch_up = False
                    if not started:
                        started = True
                        task_status.started()
                    delay = _RESTART_DELAY_S
                    if degraded:
                        degraded = False
                        logger.warning("watching %s again", _show(roots))
                    if _watchable(all_roots) != roots:
                        break  # a root appeared or went away: watch the new set (and catch up once it is up)
        except Exception as err:
            if _undecodable(err) and up:
                # watchfiles stops on a changed path whose name is not UTF-8; the change is real, so watch
                # again at once and let the catch-up rescan find it (the source refuses the skill holding it).
                logger.info("a path whose name is not UTF-8 changed under %s; rescanning", _show(roots))
                continue
            if _undecodable(err):
                # watchfiles cannot even start while a folder under a root has such a name: rescan on a
                # timer instead, and try the watcher again each time (it is back once the folder is renamed).
                if not degraded:
                    logger.warning(
                        "cannot watch %s: a folder name under it is not UTF-8 (see the refusals); rescanning "
                        "every %.0fs until it is renamed",
                        _show(roots),
                        _UNDECODABLE_RESCAN_S,
                    )
                degraded = True
                await rebuild(None)
                if not started:
                    started = True
                    task_status.started()
                await anyio.sleep(_UNDECODABLE_RESCAN_S)
                continue
            if not started:
                # No watcher yet: catch up once all the same (a catalog restored from a digest cache is checked, a
                # change made since the scan is found), then go on without one until one is up.
                started = True
                await rebuild(None)
                task_status.started()
            if _LIMIT_REACHED in str(err):
                # Each attempt walks every folder again (8 s of CPU at 100,000 skills) and fails the same way until
                # an administrator raises the limit: say how, and try again rarely.
                logger.warning(
                    "cannot watch %s: the system's limit on watched folders is reached (on Linux, raise "
                    "fs.inotify.max_user_watches); serving without watching (SIGHUP rescans), trying again in %.0fs",
                    _show(roots),
                    _LIMIT_RETRY_S,
                )
                await anyio.sleep(_LIMIT_RETRY_S)
                continue
            # the watcher itself failed: keep serving, try again
            logger.warning("watching %s stopped (%s); trying again in %.0fs", _show(roots), err, delay)
            logger.debug("watcher failure", exc_info=True)
            await anyio.sleep(delay)
            delay = min(delay * 2, _MAX_RESTART_DELAY_S)


async def _batches(
    roots: tuple[Path, ...], pace: WatchPace, *, recursive: bool, only: Callable[[str], bool] | None
) -> AsyncGenerator[set[str]]:
    """The paths changed under `roots`, a batch at a time: the first once the native watcher is set up, then one
    per burst, an empty one when nothing changed for `_IDLE_TIMEOUT_MS`. Changes made while the caller is busy
    come in the next batch. RuntimeError when the watcher fails (its message is watchfiles' own)."""
    if not sys.executable:  # embedded: no interpreter to run the watcher process
        async for batch in _batches_here(roots, pace, recursive=recursive, only=only):
            yield batch
        return
    script = watch_process.__file__
    if script and os.path.isfile(script):  # by its path, importing no skillwire (-P: its folder is not put first)
        command = [sys.executable, "-P", script]
    else:
        command = [sys.executable, "-m", watch_process.__name__]
    command += ["1" if recursive else "0", str(pace.debounce_ms), str(pace.step_ms), *map(str, roots)]
    # Its own session: a Ctrl-C at a terminal is this process's to handle, and it ends the watcher.
    process = await anyio.open_process(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True
    )
    requests, answers = process.stdin, process.stdout
    assert requests is not None
    assert answers is not None
    lines = BufferedByteReceiveStream(answers)
    try:
        while True:
            try:
                await requests.send(b"\n")
                line = await lines.receive_until(b"\n", _MAX_ANSWER_BYTES)
            except (anyio.BrokenResourceError, anyio.IncompleteRead, anyio.DelimiterNotFound) as err:
                raise RuntimeError(f"the watcher process ended ({type(err).__name__})") from None
            found = json.loads(line)
            if isinstance(found, dict):
                raise RuntimeError(str(found.get("error")))
            yield {path for _, path in found if only is None or only(path)}
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()  # it keeps nothing of ours: the kernel drops its watches
        with anyio.CancelScope(shield=True):
            await process.aclose()


async def _batches_here(
    roots: tuple[Path, ...], pace: WatchPace, *, recursive: bool, only: Callable[[str], bool] | None
) -> AsyncGenerator[set[str]]:
    """`_batches` in this process: `watchfiles.awatch`, which holds the event loop while it sets up."""
    from watchfiles import awatch

    batches = awatch(
        *roots,
        watch_filter=None,
        recursive=recursive,
        debounce=pace.debounce_ms,
        step=pace.step_ms,
        rust_timeout=_IDLE_TIMEOUT_MS,
        yield_on_timeout=True,
    )
    async with aclosing(batches):
        async for changes in batches:
            yield {path for _, path in changes if only is None or only(path)}


def _undecodable(err: BaseException) -> bool:
    """True if watchfiles failed on a path whose name is not UTF-8 (perhaps inside an exception group)."""
    if isinstance(err, BaseExceptionGroup):
        return any(_undecodable(e) for e in err.exceptions)
    return _UNDECODABLE in str(err)


def _watchable(roots: tuple[Path, ...]) -> tuple[Path, ...]:
    return tuple(r for r in roots if r.is_dir())


def _show(roots: tuple[Path, ...]) -> str:
    return ", ".join(map(str, roots))
