"""The command line as a new user first meets it (issue 11; skillwire choices, the CLI is ours).

Usage errors exit 2 with one line; `serve` on a terminal says what it waits for and stops at Ctrl-C;
nothing to serve or check is an error; `validate .` in a repository skips virtualenvs, `node_modules`
and what `.gitignore` ignores (the server does not); a hung server is given up after `--timeout`.
Usage errors and a working server's listing are checked in-process; a real subprocess only where a terminal, stdin, a
signal or a hung child is the point.
"""

from __future__ import annotations

import os
import pty
import select
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillwire.cli.main import main
from skillwire.cli.validate import FIXES
from skillwire.sources.folder.source import FolderSource
from tests.support import forkserver
from tests.support.cli import run_cli
from tests.support.servers import EXAMPLE_SKILLS, run_skillwire, serve_command
from tests.support.sigint import with_default_sigint
from tests.support.skills import write_skill

FREEZE_S = 20.0  # generous: only a freeze (the 25 s+ and 43 s of the issue) goes past it


def _one_error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected one line, got:\n{stderr}"
    assert lines[0].startswith("skillwire: error: "), lines[0]
    return lines[0]


# -- 1. serve on a terminal --------------------------------------------------------------------------------------------


@pytest.fixture
def served_on_a_terminal(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """`skillwire serve` with a pseudo-terminal for stdin, as a person typing the command has; (process, master fd)."""
    write_skill(tmp_path, "hello")
    master, slave = pty.openpty()
    # A real start: the terminal and signals reach it from the start.
    command = with_default_sigint(serve_command([tmp_path], fresh=True))
    process = subprocess.Popen(command, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(slave)
    try:
        yield process, master
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _stderr_until(process: subprocess.Popen[bytes], text: bytes) -> bytes:
    """What the process wrote on stderr up to `text`, read without blocking past FREEZE_S."""
    assert process.stderr is not None
    fd = process.stderr.fileno()
    seen = b""
    deadline = time.monotonic() + FREEZE_S
    while text not in seen:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(left, 0))
        assert ready, f"never said {text!r}; stderr so far:\n{seen.decode(errors='replace')}"
        chunk = os.read(fd, 4096)
        assert chunk, f"stderr ended before {text!r}:\n{seen.decode(errors='replace')}"
        seen += chunk
    return seen


def test_serve_on_a_terminal_says_it_waits_for_an_mcp_client(
    served_on_a_terminal: tuple[subprocess.Popen[bytes], int],
) -> None:
    """A person runs `skillwire serve skills/` in a terminal: one line says why nothing happens, and what --http is."""
    process, _ = served_on_a_terminal
    said = _stderr_until(process, b"Ctrl-C stops").decode()
    line = next(line for line in said.splitlines() if "waiting for an MCP client on stdin" in line)
    assert "--http HOST:PORT" in line, line
    assert "Ctrl-C" in line, line


def test_ctrl_c_stops_serve_on_a_terminal_at_once(served_on_a_terminal: tuple[subprocess.Popen[bytes], int]) -> None:
    """SIGINT while stdin is an idle terminal: the SDK's reader thread blocked in read() kept the process alive."""
    process, _ = served_on_a_terminal
    _stderr_until(process, b"serving 1 skill")
    time.sleep(0.5)  # let it reach its read of stdin: the signal must find the server waiting there
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=FREEZE_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"serve ignored SIGINT for {FREEZE_S} s")
    assert process.stderr is not None
    assert b"Traceback" not in process.stderr.read()
    assert process.returncode == 0


def test_ctrl_c_stops_serve_on_an_idle_pipe_at_once(tmp_path: Path) -> None:
    """SIGINT while an MCP host's pipe is open but silent (stopped at once before too: pins the new stdin reader)."""
    write_skill(tmp_path, "hello")
    command = with_default_sigint(serve_command([tmp_path], fresh=True))
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}  # a freeze is then shown: SIGABRT prints every thread's stack
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        _stderr_until(process, b"serving 1 skill")
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=FREEZE_S)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)
            _, stderr = process.communicate(timeout=FREEZE_S)
            pytest.fail(f"serve ignored SIGINT for {FREEZE_S} s; its threads then:\n{stderr.decode(errors='replace')}")
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


# -- 2. nothing to serve or check --------------------------------------------------------------------------------------


def _nothing(tmp_path: Path, kind: str) -> tuple[Path, str]:
    if kind == "missing":
        return tmp_path / "no-such-folder", "no-such-folder: root folder cannot be opened"
    if kind == "file":
        path = tmp_path / "notes.txt"
        path.write_text("hello\n", encoding="utf-8")
        return path, "notes.txt: root is not a folder"
    path = tmp_path / "empty"
    path.mkdir()
    return path, "no skill found under"


@pytest.mark.parametrize("command", ["serve", "validate"])
@pytest.mark.parametrize("kind", ["missing", "file", "empty"])
def test_nothing_to_serve_or_validate_is_a_usage_error(
    tmp_path: Path, kind: str, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo'd path, a file or an empty folder: serve ran with 0 skills and validate said "0 skills ok", exit 0."""
    path, message = _nothing(tmp_path, kind)
    if command == "serve":  # a subprocess whose stdin ends: before the fix it served 0 skills until EOF, exit 0
        run = run_skillwire(command, str(path), timeout=FREEZE_S)
        code, out, err = run.returncode, run.stdout, run.stderr
    else:
        code = main([command, str(path)])
        out, err = capsys.readouterr()
    assert code == 2, err
    assert message in _one_error_line(err)
    assert out == ""


def test_a_missing_root_beside_a_good_one_is_reported_and_the_good_one_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One bad root among good ones is not "nothing found": the others are still served (and validated)."""
    write_skill(tmp_path / "skills", "hello")
    assert main(["validate", str(tmp_path / "skills"), str(tmp_path / "missing")]) == 1
    out = capsys.readouterr().out
    assert out.startswith("1 skill ok"), out
    assert "[root-missing]" in out


# -- 3. validate in a repository ---------------------------------------------------------------------------------------


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A project folder: one real skill, and skills that only live in a virtualenv, node_modules or build output."""
    write_skill(tmp_path, "skills/hello")
    venv = tmp_path / ".venv"
    (venv / "lib").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    write_skill(venv / "lib", "site-packages/vendored", name="Not_A_Name")  # refused if it were looked at
    write_skill(tmp_path / "env" / "lib", "bundled", name="wrong")  # a virtualenv under any name
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    write_skill(tmp_path / "node_modules", "some-package", name="other")
    write_skill(tmp_path / "build", "copy", name="stale")
    (tmp_path / ".gitignore").write_text("/build/\n", encoding="utf-8")
    return tmp_path


def test_validate_skips_virtualenvs_node_modules_and_gitignored_folders(
    repository: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`validate .` in a repository walked into .venv and build output and refused the skills it found there."""
    assert main(["validate", str(repository)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "1 skill ok, 0 refused, 0 warnings", out


def test_serve_still_serves_what_validate_passes_over(repository: Path) -> None:
    """The server's walk is unchanged: only validate turns the project ignores on."""
    catalog = FolderSource([repository]).scan()
    refused = [r.path for r in catalog.refusals if r.skill]
    for where in (".venv/lib/site-packages/vendored", "env/lib/bundled", "node_modules/some-package", "build/copy"):
        assert any(p.endswith(f"/{where}/SKILL.md") for p in refused), (where, refused)


def test_gitignore_inside_a_skill_does_not_hide_what_the_server_serves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Inside a skill only the server's rules apply: validate must not pass over files the server publishes."""
    skill = write_skill(tmp_path, "hello")
    (skill / ".gitignore").write_text("*.log\nnode_modules/\n", encoding="utf-8")
    (skill / "run.log").write_text("log\n", encoding="utf-8")
    (skill / "node_modules").mkdir()
    (skill / "node_modules" / "x.js").write_text("x\n", encoding="utf-8")
    assert main(["validate", "--format", "json", str(tmp_path)]) == 0
    served = FolderSource([tmp_path]).scan().skills[0]
    assert len(served.files) == 4, [f.rel_path for f in served.files]  # SKILL.md .gitignore run.log x.js
    assert '"files": 4' in capsys.readouterr().out


# -- 4. usage errors exit 2 --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "10001", "many"])
def test_a_bad_page_size_is_a_usage_error_naming_the_flag(
    tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--page-size 0` was reported as "page_size must be ..." with exit 1, after scanning."""
    with pytest.raises(SystemExit) as exited:
        main(["serve", str(tmp_path), "--page-size", value])
    assert exited.value.code == 2
    assert "argument --page-size:" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", ".", "--ttl-ms", "-1"],
        ["serve", ".", "--token-file", "tokens.txt"],  # authentication without --http
        ["inspect", ""],
        ["inspect", "python 'unclosed"],
        ["inspect", "skillwire serve .", "--header", "Authorization: Bearer x"],
        ["pull", "", "skill://x/SKILL.md", "dest"],
        ["host", "--server", "docs"],
        ["inspect", "http://127.0.0.1:9/mcp", "--timeout", "0"],
    ],
)
def test_usage_errors_exit_2_on_every_command(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A command asked wrongly exits 2 (as argparse does), never 1 (which means "it ran and failed")."""
    try:
        code = main(argv)
    except SystemExit as exited:
        code = int(exited.code or 0)
    assert code == 2, capsys.readouterr().err
    assert "Traceback" not in capsys.readouterr().err


# -- 5. --timeout ------------------------------------------------------------------------------------------------------

HUNG = shlex.join([sys.executable, "-c", "import time; time.sleep(120)"])


def test_a_hung_server_is_given_up_after_timeout_by_every_command(tmp_path: Path) -> None:
    """A stdio server that never answers held each command for 43 s; --timeout 1 ends it with one clear line.

    The three commands run side by side (each a real process; most of their time is the wait for a child that never
    exits), so the check costs one wait, not three."""
    commands = {
        "inspect": ["inspect", HUNG],
        "pull": ["pull", HUNG, "skill://x/SKILL.md", str(tmp_path / "dest")],
        "host": ["host", "--server", f"hung={HUNG}"],
    }
    running = {
        name: subprocess.Popen(
            forkserver.command(["-m", "skillwire", *argv, "--timeout", "1"]),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, argv in commands.items()
    }
    for name, process in running.items():
        try:
            _, stderr = process.communicate(timeout=FREEZE_S)
        finally:
            process.kill()
        assert process.returncode == 1, (name, stderr)
        assert "Traceback" not in stderr, name
        assert "no answer while connecting" in stderr, (name, stderr)


def test_timeout_is_passed_to_a_working_server() -> None:
    """--timeout bounds each request, not the whole command: a server that answers is listed as before."""
    run = run_cli("inspect", shlex.join(serve_command([EXAMPLE_SKILLS], "--quiet")), "--timeout", "20")
    assert run.returncode == 0, run.stderr
    assert "skill://pdf-processing/SKILL.md" in run.stdout


# -- 6. a bare HOST:PORT -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["inspect", "localhost:8000"],
        ["pull", "localhost:8000", "skill://x/SKILL.md", "dest"],
        ["host", "--server", "docs=localhost:8000"],
        ["inspect", "127.0.0.1:8000/mcp"],
        ["inspect", "[::1]:8000"],
    ],
)
def test_a_bare_host_and_port_suggests_the_url(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """`inspect localhost:8000` tried to run a program called 'localhost:8000'."""
    assert main(argv) == 2
    address = next(a for a in argv if ":8000" in a).removeprefix("docs=")
    url = f"http://{address}" if "/" in address else f"http://{address}/mcp"
    assert f"did you mean {url} ?" in _one_error_line(capsys.readouterr().err)


# -- 7. validate's words -----------------------------------------------------------------------------------------------


def test_limit_files_fix_names_the_real_ignore_file() -> None:
    """The fix said `.skillignore`; the file the server reads is `.skillwireignore`."""
    assert ".skillwireignore" in FIXES["limit-files"]
    assert ".skillignore" not in FIXES["limit-files"]


def test_gitkeep_is_not_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A `.gitkeep` keeps an empty folder in git; "not served" warnings about it (or its folder) were noise."""
    skill = write_skill(tmp_path, "hello")
    (skill / ".gitkeep").write_text("", encoding="utf-8")
    (skill / "assets").mkdir()
    (skill / "assets" / ".gitkeep").write_text("", encoding="utf-8")
    assert main(["validate", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "1 skill ok, 0 refused, 0 warnings", out
