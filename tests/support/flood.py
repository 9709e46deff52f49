"""The hostile server as a real process, and the peak memory of a real command run against it.

with hostile_http("huge-read", "--flood-bytes", str(64 * MIB)) as url:
    run = run_measured([sys.executable, "-m", "skillwire", "inspect", url, "--verify"])
assert run.peak_rss_mib < 150
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from deploy.fleet import stop as stop_process

from tests.support import forkserver
from tests.support.servers import REPO_ROOT

START_TIMEOUT_S = 30.0
_LISTENING = re.compile(r"listening on (http://\S+)")


def hostile_command(scenario: str, *options: str) -> list[str]:
    """The argv that serves `scenario` over stdio (`options`: e.g. `--flood-bytes N`), through the fork server."""
    return forkserver.command(["-m", "tests.support.hostile", scenario, *options])


@contextmanager
def hostile_http(scenario: str, *options: str) -> Iterator[str]:
    """`python -m tests.support.hostile SCENARIO OPTIONS --http 127.0.0.1:0` in a subprocess; yields its URL."""
    command = [*hostile_command(scenario, *options), "--http", "127.0.0.1:0"]
    process = subprocess.Popen(
        command, cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    found: list[str] = []
    ready = threading.Event()

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            if not found and (match := _LISTENING.search(line)):
                found.append(match.group(1))
                ready.set()
        ready.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        ready.wait(START_TIMEOUT_S)
        assert found, f"the hostile server did not start (status {process.poll()})"
        yield found[0]
    finally:
        stop_process(process)
        reader.join(timeout=10)


@dataclass(frozen=True, slots=True)
class Measured:
    """How a command ended, what it printed, and its peak resident memory (from `wait4`'s rusage)."""

    returncode: int
    stdout: str
    stderr: str
    peak_rss_mib: float


# Linux carries a process's peak RSS across fork and exec, so a command forked straight from a large pytest process
# would report pytest's peak. A small launcher forks the command instead and reports its rusage on a pipe.
_LAUNCHER = """
import os, subprocess, sys
fd = int(sys.argv[1])
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
os.write(fd, str(usage.ru_maxrss).encode())
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_measured(argv: Sequence[str], *, timeout: float = 60.0) -> Measured:
    """Run `argv` from the repository root; its peak RSS comes from the kernel when it is reaped.

    A command still running after `timeout` seconds is killed and the test fails: it froze.
    """
    report_read, report_write = os.pipe()
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, str(report_write), *argv],
            cwd=REPO_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(report_write,),
            start_new_session=True,  # one process group: a timeout kills the command, not just the launcher
        )
    finally:
        os.close(report_write)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.communicate()
        os.close(report_read)
        raise AssertionError(f"{' '.join(argv)} did not finish within {timeout} s") from None
    with os.fdopen(report_read, "rb") as report:
        peak_kib = int(report.read() or b"0")
    return Measured(
        returncode=process.returncode,
        stdout=stdout.decode("utf-8", "replace"),
        stderr=stderr.decode("utf-8", "replace"),
        peak_rss_mib=peak_kib / 1024,
    )
