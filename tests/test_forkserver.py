"""The test fork server runs a command exactly as a fresh `python ARGV` would, seen from the process the test holds.

Most of the suite's servers start through it (tests/support/forkserver.py); these tests pin what makes that honest:
the same streams, directory, environment, limits, signals and exit status, and no command outliving its launcher.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support import forkserver
from tests.support.sigint import with_default_sigint

pytestmark = pytest.mark.skipif(not forkserver.enabled(), reason="SKILLWIRE_TEST_FORKSERVER=off")

SHOW = """
import os, resource, signal, sys
print(os.getpid())
print(os.getcwd())
print(os.environ.get("PROBE"))
print(resource.getrlimit(resource.RLIMIT_NOFILE))
print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)
print(sys.stdin.read().upper())
print("to stderr", file=sys.stderr)
sys.exit(3)
"""


def _run(argv: list[str], **options: Any) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **options
    )
    out, err = process.communicate("from stdin", timeout=30)
    done = subprocess.CompletedProcess(argv, process.returncode, out, err)
    return done, [str(process.pid), *out.splitlines()]


def _limit_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (200, 200))
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_a_forked_command_sees_what_a_fresh_interpreter_would(tmp_path: Path) -> None:
    env = {**os.environ, "PROBE": "seen"}
    results = []
    for fresh in (True, False):
        argv = forkserver.command(["-c", SHOW], fresh=fresh)
        results.append(_run(argv, cwd=tmp_path, env=env, preexec_fn=_limit_files))
    (fresh_run, fresh_lines), (forked_run, forked_lines) = results
    assert fresh_lines[0] == fresh_lines[1], "a fresh command is the process the test started"
    assert forked_lines[0] != forked_lines[1], "a forked command is a child of the fork server's waiter"
    assert forked_lines[2:] == fresh_lines[2:] == [str(tmp_path), "seen", "(200, 200)", "True", "FROM STDIN"]
    assert forked_run.stderr == fresh_run.stderr == "to stderr\n"
    assert forked_run.returncode == fresh_run.returncode == 3


def test_a_signal_to_the_launcher_reaches_the_command_and_its_death_is_reported() -> None:
    script = "import signal, sys, time\nprint('up', flush=True)\ntime.sleep(60)"
    for signum in (signal.SIGTERM, signal.SIGINT):
        command = with_default_sigint(forkserver.command(["-c", script]))  # exec'd: the launcher is the process
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdout is not None
        assert process.stdout.readline() == b"up\n"
        process.send_signal(signum)
        assert process.wait(timeout=10) == -signum
        stderr = process.communicate()[1]
        assert (b"KeyboardInterrupt" in stderr) == (signum == signal.SIGINT)


def test_a_signal_inherited_ignored_reaches_a_command_that_handles_it_and_stays_ignored_for_one_that_does_not() -> None:
    """Under nohup the suite's processes inherit SIGHUP ignored; a command that sets its own handler (`skillwire
    serve` rescans on SIGHUP) still gets it, as a fresh one would. The launcher passed no ignored signal on: every
    SIGHUP test failed when `make test` ran under nohup."""
    handles = (
        "import signal, sys, time\n"
        "print(signal.getsignal(signal.SIGHUP) == signal.SIG_IGN, flush=True)\n"
        "signal.signal(signal.SIGHUP, lambda *_: sys.exit(7))\n"
        "print('up', flush=True)\n"
        "time.sleep(60)"
    )
    ignores = "import sys, time\nprint('up', flush=True)\ntime.sleep(1)\nsys.exit(0)"
    for fresh in (True, False):
        process = subprocess.Popen(["nohup", *forkserver.command(["-c", handles], fresh=fresh)], stdout=subprocess.PIPE)
        assert process.stdout is not None
        assert process.stdout.readline() == b"True\n"  # inherited ignored, in a forked command as in a fresh one
        assert process.stdout.readline() == b"up\n"
        process.send_signal(signal.SIGHUP)
        assert process.wait(timeout=10) == 7, f"fresh={fresh}"
        process.stdout.close()
        process = subprocess.Popen(["nohup", *forkserver.command(["-c", ignores], fresh=fresh)], stdout=subprocess.PIPE)
        assert process.stdout is not None
        assert process.stdout.readline() == b"up\n"
        process.send_signal(signal.SIGHUP)
        assert process.wait(timeout=10) == 0, f"fresh={fresh}: an ignored SIGHUP ended the command"
        process.stdout.close()


def test_a_killed_launcher_takes_its_command_with_it() -> None:
    script = "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)"
    process = subprocess.Popen(forkserver.command(["-c", script]), stdout=subprocess.PIPE)
    assert process.stdout is not None
    command_pid = int(process.stdout.readline())
    assert command_pid != process.pid
    process.kill()
    process.wait()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{command_pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{command_pid}").exists(), "the command outlived its launcher"


def test_an_environment_the_warm_interpreter_cannot_have_runs_fresh() -> None:
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done, lines = _run(forkserver.command(["-c", "import os; print(os.getpid())"]), env=env)
    assert done.returncode == 0
    assert lines[0] == lines[1], "PYTHONHASHSEED is read at start-up: the launcher became the command itself"
