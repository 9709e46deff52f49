"""Opening a file under a served root: never blocking, never through a swapped-in link, never reading too much.

A file indexed a moment ago may be something else by the time it is read: a FIFO (an open
that waits for a writer forever), a link to `/dev/zero` (a read that never ends), or a
path whose folder was replaced by a link to somewhere outside the root. Every read of a
file a source indexed (a served file, a SKILL.md, an ignore file, the digest cache) goes
through `open_regular`, which opens without waiting (O_NONBLOCK), without following a
link in the last component (O_NOFOLLOW), refuses anything but a regular file, and, given
`real_path`, checks the open file is that very path; `read_regular` reads at most
`limit + 1` bytes, so a caller learns a file grew without reading all of it.

    data = read_regular(location, limit=size, real_path=location)   # OSError if unsafe or gone
    if len(data) != size: ...                                        # changed on disk
"""

from __future__ import annotations

import errno
import os
import stat

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO opens at once instead of waiting for a writer
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_MAX_READ = 1 << 30  # one os.read at most (the OS caps a single read near 2 GiB anyway)


class UnsafeFile(OSError):
    """The path is not (any longer) the regular file that was indexed: a pipe, a device, a link, or moved."""


def open_regular(
    path: str,
    *,
    real_path: str | None = None,
    within: str | None = None,
    ident: int | None = None,
    follow_links: bool = False,
) -> tuple[int, os.stat_result]:
    """A read-only descriptor for the regular file at `path`, and its fstat; the caller closes it.

    `real_path`: the fully resolved path the file had when indexed; the open file must be
    exactly there, so a folder on the way that was swapped for a link is caught.
    `within`: a resolved folder (a served root) the open file must lie in, for a walk that
    met the file a moment ago (it may be renamed meanwhile, but must not be elsewhere).
    `ident`: hash((st_dev, st_ino)) of the file a walk of `within` just listed; an open file that is
    that file is where the walk found it, so `within` is not checked again (one system call saved).
    `follow_links`: follow a link in the last component (only for paths a person chose,
    such as the digest cache; never for files under a served root).
    Raises OSError (UnsafeFile for a file that is not what was indexed); never blocks on a FIFO.
    """
    fd = os.open(path, _FLAGS | (0 if follow_links else _NOFOLLOW))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(errno.EINVAL, "not a regular file (device, socket or pipe)", path)
        if within is not None and real_path is None and ident is not None and ident == hash((st.st_dev, st.st_ino)):
            pass  # the very file the walk listed inside `within`
        elif (real_path is not None or within is not None) and not _opened_at(fd, path, real_path, within):
            raise UnsafeFile(errno.EXDEV, "resolves to another place than the one indexed (a folder became a link?)")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from `fd`'s current position (fewer only at the end of the file)."""
    parts: list[bytes] = []
    left = limit
    while left > 0:
        want = min(left, _MAX_READ)
        chunk = os.read(fd, want)
        parts.append(chunk)
        left -= len(chunk)
        if len(chunk) < want:  # a regular file reads short only at its end: no second call to learn that
            break
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_regular(
    path: str,
    *,
    limit: int | None = None,
    real_path: str | None = None,
    within: str | None = None,
    follow_links: bool = False,
) -> bytes:
    """The bytes of the regular file at `path` (see `open_regular`), at most `limit` + 1 of them.

    More than `limit` bytes back means the file is larger than expected; nothing past that byte is
    read. At most the size fstat reports + 1 is asked for (so a small file costs no large buffer):
    a file that grew since is seen as longer than that size.
    """
    fd, st = open_regular(path, real_path=real_path, within=within, follow_links=follow_links)
    try:
        return read_at_most(fd, (st.st_size if limit is None else min(limit, st.st_size)) + 1)
    finally:
        os.close(fd)


def _opened_at(fd: int, path: str, real_path: str | None, within: str | None) -> bool:
    """True if the open file `fd` sits at `real_path` (if given) and inside the folder `within` (if given).

    Containment is decided on the resolved path of the open file itself, never on the path
    text: a folder on the way swapped for a link after indexing would otherwise let a read
    reach any file on the disk. Linux names an open file's real path in /proc/self/fd (with
    " (deleted)" after it once an editor's atomic save replaced it: it was still opened
    there); elsewhere `path` is resolved just after the open (a narrower, but not closed, race).
    """
    try:
        where = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        where = os.path.realpath(path)
    else:
        where = where.removesuffix(" (deleted)")
    if real_path is not None and where != real_path:
        return False
    return within is None or where.startswith(within.rstrip(os.sep) + os.sep)
