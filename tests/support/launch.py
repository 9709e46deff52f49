"""Start a Python command through the test fork server, or as a fresh interpreter when there is none.

    python -S tests/support/launch.py SOCKET -m skillwire serve ROOT --http 127.0.0.1:0

This process stands in for the command: its stdin, stdout and stderr, working directory, environment, resource
limits and ignored signals are handed to the fork server (tests/support/forkserver.py), which runs the command in a
fork of an interpreter that has already imported the SDK and skillwire. Signals sent to this process are passed on,
and it ends as the command ends (the same exit status, or the same signal). When it is killed outright, the fork
server kills the command. When the fork server at SOCKET is unreachable or refuses an environment it cannot
reproduce, it becomes the command itself with `exec`.

Standard library only, and run with -S: it must cost next to nothing.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import struct
import sys
from typing import NoReturn

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
LIMITS = ("RLIMIT_NOFILE", "RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_NPROC", "RLIMIT_STACK")


def _fresh(argv: list[str], mask: set[int | signal.Signals]) -> NoReturn:
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a signal mask survives exec: the command gets the one we had
    os.execv(sys.executable, [sys.executable, *argv])


def _request(argv: list[str]) -> bytes:
    ignored = [int(s) for s in FORWARDED if signal.getsignal(s) == signal.SIG_IGN]  # as inherited: nohup, a shell
    payload = {
        "argv": argv,
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "umask": _umask(),
        "rlimits": {name: resource.getrlimit(getattr(resource, name)) for name in LIMITS},
        "ignored": ignored,
    }
    body = json.dumps(payload).encode()
    return struct.pack("!I", len(body)) + body


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _recv_exact(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the fork server closed the connection")
        data += chunk
    return data


def main() -> None:
    path, argv = sys.argv[1], sys.argv[2:]
    # Signals to pass on are held from before the command starts until they are passed on: one sent as soon as the
    # command is up (it printed, say) would otherwise meet this process's own default handler and end it alone.
    # Every one is passed on, those this process inherited ignored too (nohup, a background job): the command starts
    # with them ignored as inherited, and decides, as it would were it this process (skillwire handles SIGHUP
    # itself, so `nohup skillwire serve` still rescans on it).
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        socket.send_fds(conn, [_request(argv)], [0, 1, 2])
        answer = _recv_exact(conn, 1)
    except OSError:
        conn.close()
        _fresh(argv, mask)
    if answer != b"S":  # the server cannot reproduce this environment: be the command ourselves
        conn.close()
        _fresh(argv, mask)
    _recv_exact(conn, 4)  # the command's pid (for the fork server's own bookkeeping)
    # The command holds stdin, stdout and stderr now: a reader sees end of file when the command closes them.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)

    def forward(signum: int, _frame: object) -> None:
        conn.sendall(b"K" + struct.pack("!I", signum))

    for signum in FORWARDED:
        signal.signal(signum, forward)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # what arrived meanwhile is passed on now
    try:
        (status,) = struct.unpack("!i", _recv_exact(conn, 4))
    except ConnectionError:
        os._exit(1)
    if os.WIFSIGNALED(status):
        ended_by = os.WTERMSIG(status)
        signal.signal(ended_by, signal.SIG_DFL)
        os.kill(os.getpid(), ended_by)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main()
