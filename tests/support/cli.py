"""`skillwire COMMAND ...` run in this process, its output captured as a `python -m skillwire` process writes it.

    run = run_cli("pull", server.url, "skill://x/SKILL.md", str(dest))
    assert run.returncode == 1 and "nothing written" in run.stderr

A subprocess costs most of a CPU second importing the MCP SDK; this costs nothing of the kind, for tests about
what a command says, writes and refuses. `main()` runs with stdin, stdout and stderr replaced by streams of this
process's own encoding and error handlers (what a child started from here would get; bytes it could not encode
fail here as there), from the repository root, and with the root logger's handlers set aside, so that `main()`'s
`logging.basicConfig` installs its terminal-safe handler on the captured stderr as in a process: log lines are
captured, formatted as the user would see them. Streams, logging and the working directory are restored
afterwards. Servers stay real processes (a URL, or a stdio command the command starts). What only a process shows
(signals, stdin as a pipe or a terminal, exit on a closed pipe, encodings, environment variables, a hung child
given up after a timeout) is for `tests.support.servers.run_skillwire`.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType
from typing import TextIO

from skillwire.cli.main import main
from tests.support.servers import REPO_ROOT


def _stream_like(original: TextIO | None) -> io.TextIOWrapper:
    """An in-memory text stream encoding as `original` (this process's stdout or stderr) does."""
    encoding = getattr(original, "encoding", None) or "utf-8"
    errors = getattr(original, "errors", None) or "strict"
    return io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors=errors, newline="\n", write_through=True)


def _written(stream: io.TextIOWrapper) -> str:
    """What was written, decoded as `subprocess.run(..., text=True)` decodes a child's output."""
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode(stream.encoding)


def _exit_status(exited: SystemExit, stderr: TextIO) -> int:
    """The status a process ends with on `SystemExit` (a message is written to stderr and is status 1)."""
    if exited.code is None:
        return 0
    if isinstance(exited.code, int):
        return exited.code
    stderr.write(f"{exited.code}\n")
    return 1


class CommandHung(BaseException):
    """The command ran past its timeout (as TimeoutExpired from `subprocess.run`); a BaseException, so that `main()`
    (which turns any Exception into one error line) cannot swallow it."""


def _hung(signum: int, frame: FrameType | None) -> None:
    raise CommandHung("the command ran past its timeout")


def run_cli(
    *args: str, stdin: str = "", cwd: Path = REPO_ROOT, timeout: float = 60.0
) -> subprocess.CompletedProcess[str]:
    """`skillwire ARGS...` in this process, from `cwd`, reading `stdin`; never raises on exit status. A command still
    running after `timeout` seconds is interrupted (SIGALRM, in the main thread, where tests run) with CommandHung,
    so a regression that hangs fails the test as a process's timeout would, instead of hanging the suite."""
    out, err = _stream_like(sys.__stdout__), _stream_like(sys.__stderr__)
    root = logging.getLogger()
    kept_handlers, kept_level = list(root.handlers), root.level
    kept_streams = (sys.stdin, sys.stdout, sys.stderr)
    kept_cwd = os.getcwd()
    for handler in kept_handlers:  # pytest's capture handlers: with them in place basicConfig would do nothing
        root.removeHandler(handler)
    os.chdir(cwd)
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    kept_alarm = signal.signal(signal.SIGALRM, _hung)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        try:
            code = main(list(args))
        except SystemExit as exited:  # argparse: a usage error (2), --help or --version (0)
            code = _exit_status(exited, err)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, kept_alarm)
        sys.stdin, sys.stdout, sys.stderr = kept_streams
        os.chdir(kept_cwd)
        for handler in list(root.handlers):  # what main() installed
            root.removeHandler(handler)
            handler.close()
        for handler in kept_handlers:
            root.addHandler(handler)
        root.setLevel(kept_level)
    return subprocess.CompletedProcess(["skillwire", *args], code, _written(out), _written(err))
