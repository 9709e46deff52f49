"""Follow installs, upgrades and removals of distributions that ship skills: `PackageSource.watch`.

pip installs a distribution by writing its package files and a `NAME-VERSION.dist-info` folder into an import-path
folder (site-packages), and removes or replaces both when it uninstalls or upgrades. So three things are watched,
with `watchfiles` as folders are (`folder_watch`):

- each import-path folder, only its own entries, for metadata folders (`*.dist-info`, `*.egg-info`) that come or go;
- each metadata folder there, only its own entries: pip writes `entry_points.txt` after creating the folder;
- each skill folder an installed distribution declares, whole (an upgrade rewrites files; an editable install's
  source folder is edited in place).

Every burst of changes is one full rescan (`rebuild(None)`): discovery reads metadata and never imports, and the
folder sources a `PackageSource` keeps re-read only files whose stat changed. When a rescan changes what is to be
watched (a distribution came or went), the watchers start again on the new set and catch up with one rescan, so
nothing written meanwhile is missed. Nothing is queued: a burst is only a flag until its rescan runs.

    await watch_packages(source.watched_places, rebuild, task_status=task_status)
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import anyio
from anyio.abc import TaskStatus

from skillwire.sources.folder.watch import watch_folders
from skillwire.sources.port import DEFAULT_PACE, Rebuild, WatchPace

__all__ = ["MAX_METADATA_FOLDERS", "WatchedPlaces", "watch_packages", "watched_places"]

logger = logging.getLogger(__name__)

METADATA_SUFFIXES = (".dist-info", ".egg-info")
"""The folders `importlib.metadata` finds distributions by (what pip writes and removes with each one)."""
MAX_METADATA_FOLDERS = 10_000
"""Most metadata folders watched one by one (beyond, a new one is still seen appearing in its import-path folder)."""


@dataclass(frozen=True, slots=True)
class WatchedPlaces:
    """What to watch: import-path folders and their metadata folders (entries only), and skill folders (whole)."""

    metadata: tuple[Path, ...]
    skills: tuple[Path, ...]


def watched_places(import_path: Sequence[str], skill_roots: Sequence[Path]) -> WatchedPlaces:
    """The places to watch for distributions found on `import_path` whose skill folders are `skill_roots`.

    Blocking (it lists each import-path folder): call it from a worker thread."""
    folders: list[Path] = []
    for entry in dict.fromkeys(import_path):
        folder = Path(entry or os.curdir).absolute()
        if folder.is_dir() and folder not in folders:
            folders.append(folder)  # a zip archive on the path is not followed: SIGHUP re-reads it
    metadata: list[Path] = []
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                found = [e for e in entries if e.name.endswith(METADATA_SUFFIXES)]
            metadata.extend(Path(e.path) for e in found if e.is_dir(follow_symlinks=False))
        except OSError:
            continue  # gone or unreadable: its entries are still watched if it comes back
    if len(metadata) > MAX_METADATA_FOLDERS:
        logger.warning("watching only the first %d of %d metadata folders", MAX_METADATA_FOLDERS, len(metadata))
    return WatchedPlaces((*folders, *sorted(metadata)[:MAX_METADATA_FOLDERS]), tuple(dict.fromkeys(skill_roots)))


def _is_metadata(path: str) -> bool:
    """A change to a metadata folder in an import-path folder, or to a file inside one."""
    where = Path(path)
    return where.name.endswith(METADATA_SUFFIXES) or where.parent.name.endswith(METADATA_SUFFIXES)


async def watch_packages(
    places: Callable[[], WatchedPlaces],
    rebuild: Rebuild,
    *,
    pace: WatchPace = DEFAULT_PACE,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Rescan after each burst of changes to the `places` of the last scan; runs until cancelled.

    `task_status.started()` follows the catch-up rescans of the first watchers that came up on places that did not
    move meanwhile; a watcher that fails is restarted by `watch_folders` as for a folder."""
    started = False
    while True:
        watching = _Round(await anyio.to_thread.run_sync(places), places, rebuild)
        async with anyio.create_task_group() as tg:
            tg.start_soon(watching.follow, watching.places.metadata, pace, False)
            tg.start_soon(watching.follow, watching.places.skills, pace, True)
            await watching.settled.wait()
            if not started and not watching.moved.is_set():
                started = True
                task_status.started()
            await watching.moved.wait()
            logger.debug("installed distributions changed: watching anew")
            tg.cancel_scope.cancel()


class _Round:
    """Watchers on one set of places, until a rescan finds the places moved (a distribution came or went)."""

    def __init__(self, places: WatchedPlaces, now: Callable[[], WatchedPlaces], rebuild: Rebuild) -> None:
        self.places = places
        self._now = now
        self._rebuild = rebuild
        self._up = 0
        self.settled = anyio.Event()  # both watchers are up, or the places moved
        self.moved = anyio.Event()

    async def follow(self, roots: tuple[Path, ...], pace: WatchPace, recursive: bool) -> None:
        """Watch `roots` (whole, or only their entries for metadata folders) until the round ends."""
        only = None if recursive else _is_metadata
        async with anyio.create_task_group() as tg:
            await tg.start(partial(watch_folders, roots, self.rescan, pace=pace, recursive=recursive, only=only))
            self._up += 1
            if self._up == 2:
                self.settled.set()

    async def rescan(self, _: Sequence[str] | None) -> None:
        """Rescan everything; when that moved the places, end the round (this watcher waits to be cancelled)."""
        with anyio.CancelScope(shield=True):  # ending a round never cuts a rebuild short
            await self._rebuild(None)
            now = await anyio.to_thread.run_sync(self._now)
        if now != self.places:
            self.moved.set()
            self.settled.set()
            await anyio.sleep_forever()  # never act on places that moved (a vanished root is no news to report)
