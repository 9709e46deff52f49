"""A fork server for the suite's Python child processes: each one starts as a fork of a warm interpreter.

The suite starts a few hundred `python -m skillwire ...` and `python -m tests.support.hostile ...` processes, and
each spent about 0.7 s of CPU importing the SDK (its pydantic models for two protocol eras) before doing anything:
most of the suite's CPU on a 2-core machine. Here one interpreter per pytest worker imports all of that once, and
every command is a `fork` of it that then runs exactly as `python ARGV` would: the same argv, stdin, stdout, stderr,
working directory, environment, umask, resource limits and ignored signals, the same exit status. The command is
still a real process speaking real stdio or HTTP; what it skips is only the import.

    command(["-m", "skillwire", "serve", root])  # -> [python, -S, tests/support/launch.py, -m, skillwire, ...]

Set SKILLWIRE_TEST_FORKSERVER=off to start every command as a fresh interpreter instead. A test that looks at the
server process itself (its pid's memory or limits) asks for `fresh=True`: the pid it holds is the launcher's.

The parts: `launch.py` (the process the test holds), this module's `serve` (the warm interpreter: it forks one
waiter per command), the waiter (forks the command, passes signals on, reports its status), the command.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib
import io
import json
import os
import resource
import runpy
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import traceback
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SWITCH = "SKILLWIRE_TEST_FORKSERVER"  # "off": every command starts as a fresh interpreter
LAUNCH = Path(__file__).with_name("launch.py")
REPO_ROOT = Path(__file__).resolve().parents[2]

# What every warm interpreter imports before forking: what `skillwire serve`, the CLI's client commands and the
# hostile test servers import. (Not the modules run as __main__ themselves: runpy warns when one is already loaded.)
PRELOAD = (
    "mcp",
    "mcp.server.lowlevel",
    "mcp.server.stdio",
    "mcp.server.streamable_http",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "uvicorn",
    "starlette.applications",
    "skillwire.cli.main",
    "skillwire.cli.serve",
    "skillwire.cli.source_options",
    "skillwire.cli.hostcmd",
    "skillwire.cli.inspect",
    "skillwire.cli.pull",
    "skillwire.service.run",
    "skillwire.service.auth",
    "skillwire.service.catalog_page",
    "skillwire.server.extension",
    "skillwire.sources.folder",
    "skillwire.sources.git",
    "skillwire.host",
    "jwt",  # `skillwire serve` imports these on first use (a token checked, a page rendered); tests use both
    "markdown_it",
)

# The environment a started interpreter has already read: a command asking for other values of these runs fresh.
FIXED_AT_START = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONHASHSEED",
    "PYTHONIOENCODING",
    "PYTHONWARNINGS",
    "PYTHONUTF8",
    "PYTHONSAFEPATH",
    "PYTHONNOUSERSITE",
    "PYTHONDEVMODE",
    "PYTHONMALLOC",
    "PYTHONFAULTHANDLER",
    "PYTHONOPTIMIZE",
    "LC_ALL",
    "LC_CTYPE",
    "LANG",
)

_PR_SET_PDEATHSIG = 1

# -- the test's side: start one warm interpreter per pytest worker, on first use -------------------------------------

_sockets: list[str] = []  # the socket of this process's fork server, once started


def enabled() -> bool:
    return os.environ.get(SWITCH, "").lower() != "off"


def command(argv: Sequence[str], *, fresh: bool = False) -> list[str]:
    """The command line that runs `python ARGV`: through the fork server unless `fresh` or turned off."""
    if fresh or not enabled():
        return [sys.executable, *argv]
    return [sys.executable, "-S", str(LAUNCH), _socket(), *argv]


def _socket() -> str:
    """The socket of this process's fork server, started on first use."""
    if _sockets:
        return _sockets[0]
    folder = tempfile.mkdtemp(prefix="skillwire-forkserver-")
    path = os.path.join(folder, "socket")
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.forkserver", path],
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None
    if process.stdout.readline() != b"ready\n":
        process.kill()
        raise RuntimeError("the test fork server did not start")
    _sockets.append(path)

    def stop() -> None:
        process.kill()
        process.wait()
        with contextlib.suppress(OSError):
            os.unlink(path)
            os.rmdir(folder)

    atexit.register(stop)
    return path


# -- the warm interpreter ----------------------------------------------------------------------------------------------


def _die_with_parent(signum: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signum)


def serve(path: str) -> None:
    """Import everything once, then fork a waiter for every launcher that connects."""
    parent = os.getppid()
    _die_with_parent(signal.SIGKILL)
    if os.getppid() != parent:
        return
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    own_env = {name: os.environ.get(name) for name in FIXED_AT_START}
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # waiters are reaped by the kernel
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        conn, _ = listener.accept()
        try:
            request, fds = _receive(conn)
        except (OSError, ValueError):
            conn.close()
            continue
        env = request["env"]
        if any(env.get(name) != value for name, value in own_env.items()):
            conn.sendall(b"F")
        elif os.fork() == 0:
            listener.close()
            _wait_for_command(conn, request, fds)  # never returns
        conn.close()
        for fd in fds:
            os.close(fd)


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _flags, _address = socket.recv_fds(conn, 1 << 16, 3)
    if len(fds) != 3 or len(data) < 4:
        for fd in fds:
            os.close(fd)
        raise ValueError("a launcher sends its three standard streams and a request")
    (size,) = struct.unpack("!I", data[:4])
    body = data[4:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ValueError("the launcher went away")
        body += chunk
    return json.loads(body), fds


def _wait_for_command(conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    """The waiter: fork the command, pass the launcher's signals on, report how the command ended."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        pid = os.fork()
        if pid == 0:
            conn.close()
            _run_command(request, fds)  # never returns
        for fd in fds:
            os.close(fd)
        conn.sendall(b"S" + struct.pack("!I", pid))
        watched = os.pidfd_open(pid)
        while True:
            readable, _, _ = select.select([conn.fileno(), watched], [], [])
            if watched in readable:
                _, status = os.waitpid(pid, 0)
                with contextlib.suppress(OSError):
                    conn.sendall(struct.pack("!i", status))
                code = 0
                break
            message = conn.recv(5)
            if len(message) < 5:  # the launcher is gone (killed): so is its command
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            (signum,) = struct.unpack("!I", message[1:])
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)
    finally:
        os._exit(code)


def _run_command(request: dict[str, Any], fds: list[int]) -> None:
    """The command: become `python ARGV` in the launcher's place, then exit as the interpreter would."""
    parent = os.getppid()
    _die_with_parent(signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    env: dict[str, str] = request["env"]
    os.environ.clear()
    os.environ.update(env)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    for name, (soft, hard) in request["rlimits"].items():
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(getattr(resource, name), (soft, hard))
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in request["ignored"]:
        signal.signal(signum, signal.SIG_IGN)
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
    _standard_streams(unbuffered=bool(env.get("PYTHONUNBUFFERED")))
    code = _run(list(request["argv"]))
    _exit(code)


def _standard_streams(*, unbuffered: bool) -> None:
    """New sys.stdin/stdout/stderr over fds 0-2, configured as a fresh interpreter configures them."""
    old = sys.stdout
    encoding, errors = old.encoding, old.errors
    stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "rb", closefd=False)), encoding=encoding, errors=errors)

    def writer(fd: int, errors: str, line: bool) -> io.TextIOWrapper:
        raw = io.FileIO(fd, "wb", closefd=False)
        if unbuffered:
            return io.TextIOWrapper(raw, encoding=encoding, errors=errors, write_through=True)
        tty = raw.isatty()
        return io.TextIOWrapper(io.BufferedWriter(raw), encoding=encoding, errors=errors, line_buffering=line or tty)

    stdout, stderr = writer(1, errors or "strict", False), writer(2, "backslashreplace", True)
    streams = {"stdin": stdin, "stdout": stdout, "stderr": stderr}
    for name, stream in streams.items():
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _run(argv: list[str]) -> int:
    try:
        if argv[:1] == ["-m"]:
            sys.argv = [argv[1], *argv[2:]]
            sys.path[0] = os.getcwd()
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        elif argv[:1] == ["-c"]:
            sys.argv = ["-c", *argv[2:]]
            sys.path[0] = ""
            main = types.ModuleType("__main__")
            sys.modules["__main__"] = main
            exec(compile(argv[1], "<string>", "exec"), main.__dict__)
        else:
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as stop:
        return _exit_code(stop.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        _finish()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 130
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish() -> None:
    """What the interpreter does on the way out: wait for non-daemon threads, run atexit, flush the streams."""
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def _exit(code: int) -> None:
    try:
        _finish()
    finally:
        os._exit(code)


if __name__ == "__main__":
    serve(sys.argv[1])
