"""Opening, reading, writing and deleting below the cache root one component at a time, never following a link.

Every path is walked with `dir_fd`, each step opened with O_NOFOLLOW (a link planted anywhere in the cache is never
followed: O_NOFOLLOW on a whole path covers only its last component) and O_NONBLOCK (a FIFO planted at a cached path
is never waited on). Nothing here resolves a path and then opens it, which a swap between the two steps could defeat.

    folder = open_root(root)                   # None when nothing is cached yet
    child = enter_dir(folder, "docs-server")   # made 0o700 if missing; a link in its place is removed, not followed
    write_atomic(child, "SKILL.md", data)      # a private temp file in the same folder, then renamed over
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
# Folders and files below the root: never follow a link, never wait on a FIFO, never leak into a child.
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def open_root(root: Path) -> int | None:
    """The root folder, or None if it does not exist (or is not a real folder: nothing is cached there)."""
    try:
        return os.open(root, DIR_FLAGS)
    except OSError:
        return None


def try_open_dir(folder: int, name: str) -> int | None:
    """The real folder `name` in `folder`, or None (missing, a link, a file, a FIFO, unreadable)."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=folder)
    except OSError:
        return None


def enter_dir(folder: int, name: str) -> int:
    """The real folder `name` in `folder`, made (0o700) if missing; whatever else is there is replaced first."""
    child = try_open_dir(folder, name)
    if child is not None:
        return child
    clear(folder, name)  # a planted link, file or FIFO: removed from the cache, never followed
    os.mkdir(name, DIR_MODE, dir_fd=folder)
    child = os.open(name, DIR_FLAGS, dir_fd=folder)
    os.fchmod(child, DIR_MODE)  # mkdir's mode is masked by the umask; set it exactly
    return child


def read_regular(folder: int, name: str, *, limit: int) -> bytes | None:
    """At most `limit` + 1 bytes of the regular file `name` in `folder`; None for anything else or a size other
    than `limit` (checked before reading)."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=folder)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != limit:
            return None
        return read_at_most(fd, limit + 1)
    finally:
        os.close(fd)


def is_regular(folder: int, name: str) -> bool:
    """Whether `name` in `folder` is a regular file (a link to one is not)."""
    try:
        return stat.S_ISREG(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def remove_file(folder: int, name: str) -> None:
    """Remove `name` from `folder` unless it is a folder (a link is removed itself, never its target).

    Best effort: whatever stays is a miss again on the next `get`, and `put` replaces it.
    """
    with contextlib.suppress(OSError):
        if not stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
            os.unlink(name, dir_fd=folder)


def clear(folder: int, name: str) -> None:
    """Remove whatever `name` is in `folder`: a folder with everything in it, or a file, link or FIFO.

    A link is removed itself, never its target; nothing outside the cache is deleted.
    """
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        _remove_tree(folder, name)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=folder)


def _remove_tree(folder: int, name: str) -> None:
    """Delete the folder `name` and everything below it, walking by file descriptor.

    Not `shutil.rmtree`: it opens folders without O_NONBLOCK, so a FIFO swapped in for a folder
    while it walks would make it wait for a writer. Here every folder is opened with DIR_FLAGS
    (no link followed, never blocking); an entry that stopped being a folder is unlinked instead.
    """
    opened: list[tuple[int, str]] = []  # the open folders from `name` down to the one being emptied
    try:
        opened.append((os.open(name, DIR_FLAGS, dir_fd=folder), name))
    except OSError as err:
        if err.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        os.unlink(name, dir_fd=folder)  # swapped for a file, link or FIFO since it was looked at
        return
    try:
        while opened:
            fd, _ = opened[-1]
            child = _first_entry(fd)
            if child is None:
                os.close(fd)
                _, emptied = opened.pop()
                os.rmdir(emptied, dir_fd=opened[-1][0] if opened else folder)
                continue
            child_name, is_dir = child
            if is_dir:
                try:
                    opened.append((os.open(child_name, DIR_FLAGS, dir_fd=fd), child_name))
                    continue
                except OSError as err:
                    if err.errno not in (errno.ENOTDIR, errno.ELOOP):
                        raise
            os.unlink(child_name, dir_fd=fd)
    finally:
        for fd, _ in opened:
            os.close(fd)


def _first_entry(folder: int) -> tuple[str, bool] | None:
    """One entry of `folder` (its name, and whether it is a folder, links not followed), or None if it is empty."""
    with os.scandir(folder) as entries:
        for entry in entries:
            return entry.name, entry.is_dir(follow_symlinks=False)
    return None


def make_dirs(path: Path) -> None:
    """The root and any missing folders above it, each made 0o700 (the folders above are the user's own)."""
    if not path.parent.exists():
        make_dirs(path.parent)
    try:
        path.mkdir(mode=DIR_MODE)
    except FileExistsError:
        return
    os.chmod(path, DIR_MODE)


def write_atomic(folder: int, name: str, data: bytes) -> None:
    """Write `name` in `folder` whole or not at all: a private temp file in the same folder, then rename over it."""
    temp = f".tmp-{secrets.token_hex(8)}"
    fd = os.open(temp, _CREATE_FLAGS, FILE_MODE, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), FILE_MODE)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except IsADirectoryError:
            # A folder where the file belongs (planted, or left by another entry's `name/...`): replace it.
            clear(folder, name)
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=folder)
        raise


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from a regular file (fewer only at its end)."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
