"""Stdio servers the CLI starts: `skillwire` is this installation, and the child's stderr is not our output (issue 11).

skillwire choices. `--server docs="skillwire serve skills/"` failed without an activated venv (no `skillwire` on
PATH) or, worse, ran whichever `skillwire` PATH found first; now a leading `skillwire` is this interpreter's
`-m skillwire`. The child's stderr (its serve summary, its logs) went straight to the user's terminal, unescaped;
now it is kept, bounded, and shown (escaped) only when the server could not be used.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest

from skillwire.cli.child import SHOWN_LINES, StderrTail
from skillwire.cli.main import main
from tests.support.servers import EXAMPLE_SKILLS, run_skillwire

FREEZE_S = 60.0


@pytest.fixture
def no_venv_path(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH has no skillwire of ours, but a decoy `skillwire` that leaves a mark if run."""
    decoy = tmp_path / "bin" / "skillwire"
    decoy.parent.mkdir()
    decoy.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(tmp_path / 'decoy-ran'))}\nexit 3\n", encoding="utf-8")
    decoy.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join([str(decoy.parent), "/usr/bin", "/bin"])
    return env


def test_a_skillwire_child_is_this_installation_without_a_venv_on_path(
    no_venv_path: dict[str, str], tmp_path: Path
) -> None:
    """No activated venv, a different `skillwire` first on PATH: the child is still this interpreter's skillwire.

    (`inspect` and `pull` split SERVER through the same `server_target`; `host` has its own `--server` parsing.)
    """
    server = f"skillwire serve {shlex.quote(str(EXAMPLE_SKILLS))}"
    run = run_skillwire("host", "--server", f"docs={server}", env=no_venv_path, timeout=FREEZE_S)
    assert run.returncode == 0, run.stderr
    assert "pdf-processing" in run.stdout
    assert not (tmp_path / "decoy-ran").exists()
    # the child's own summary ("skillwire: serving 5 skills ...") is not the command's output
    assert "serving" not in run.stderr
    assert "serving" not in run.stdout
    assert run.stderr == ""


def _noisy_server(tmp_path: Path, lines: int) -> str:
    """A "server" that writes `lines` numbered lines (with a terminal escape) on stderr, then exits."""
    script = tmp_path / "noisy.py"
    script.write_text(
        "import sys\n"
        f"for i in range({lines}):\n"
        "    sys.stderr.write(f'line {i} \\x1b]0;owned\\x07 ' + 'x' * 100 + '\\n')\n",
        encoding="utf-8",
    )
    return shlex.join([sys.executable, str(script)])


@pytest.mark.parametrize("command", ["inspect", "host", "pull"])
def test_a_failed_child_shows_the_end_of_its_stderr_escaped(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server that dies after 50,000 lines of stderr: only its last lines are shown, escapes made visible."""
    server = _noisy_server(tmp_path, 50_000)
    argv = {
        "inspect": ["inspect", server],
        "host": ["host", "--server", f"noisy={server}"],
        "pull": ["pull", server, "x", str(tmp_path / "dest")],
    }[command]
    assert main([*argv, "--timeout", "20"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "wrote on stderr (last lines):" in err
    shown = [line for line in err.splitlines() if line.startswith("  | ")]
    assert len(shown) == SHOWN_LINES
    assert shown[-1].startswith("  | line 49999 \\x1b]0;owned\\x07 ")
    assert "\x1b" not in err
    assert "\x07" not in err


def test_a_working_childs_stderr_is_not_shown(capsys: pytest.CaptureFixture[str]) -> None:
    """inspect of `skillwire serve ...` over stdio: the listing only, not the child's summary."""
    assert main(["inspect", f"skillwire serve {shlex.quote(str(EXAMPLE_SKILLS))}"]) == 0
    out, err = capsys.readouterr()
    assert "skill://pdf-processing/SKILL.md" in out
    assert err == ""


def test_the_kept_stderr_is_bounded() -> None:
    """What is kept of a child's stderr stays within its limit, however much the child writes."""
    tail = StderrTail(limit=1024)
    try:
        for i in range(2_000):
            tail.errlog.write(f"{i:08d}" + "y" * 100 + "\n")
    finally:
        tail.close()
    kept = tail.text()
    assert len(kept.encode()) <= 1024
    assert kept.splitlines()[-1].startswith("00001999")
