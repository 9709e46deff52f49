"""`skillwire serve` as a person runs it: real `python -m skillwire` subprocesses.

skillwire choices (the command line is ours, not the spec's): the summary on stderr
names every served skill and every refused one with its rule and reason; a bad
`--http` value is one `skillwire: error:` line, exit status 1, no traceback; a
PATH root that cannot be opened is reported, and the other roots are still served.
"""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from skillwire.cli.main import main
from tests.support.servers import http_server, serve_command
from tests.support.skills import write_skill

RUN_TIMEOUT_S = 60.0

GOOD_MD = "---\nname: good\ndescription: A skill that follows every rule\n---\n# Good\n"
BAD_MD = "---\nname: someone-else\ndescription: Its name is not its folder's\n---\n# Bad\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A folder with one good skill (and a file beside its SKILL.md) and one skill whose name breaks a rule."""
    root = tmp_path / "skills"
    (root / "good" / "docs").mkdir(parents=True)
    (root / "good" / "SKILL.md").write_text(GOOD_MD, encoding="utf-8")
    (root / "good" / "docs" / "notes.md").write_text("notes\n", encoding="utf-8")
    (root / "bad").mkdir()
    (root / "bad" / "SKILL.md").write_text(BAD_MD, encoding="utf-8")
    return root


def _serve(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`skillwire serve ARGS` on stdio with stdin closed: it prints its summary, then ends when stdin does."""
    return subprocess.run(
        serve_command([], *args),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


def test_summary_lists_served_and_refused_skills_with_reasons(tree: Path) -> None:
    with http_server([tree]) as server:
        server.assert_alive()
        summary = server.stderr
    assert "serving 1 skill (2 files)" in summary, summary
    assert "skill://good/SKILL.md" in summary, summary
    assert "refused 1 skill" in summary, summary
    assert "[name-mismatch]" in summary, summary
    assert "bad/SKILL.md" in summary, summary
    assert "'someone-else' differs from its folder 'bad'" in summary, summary
    assert "skill://bad" not in summary, summary


def test_quiet_prints_no_summary(tree: Path) -> None:
    run = _serve(str(tree), "--quiet", "--no-watch", cwd=tree.parent)
    assert run.returncode == 0, run.stderr
    assert "serving" not in run.stderr, run.stderr
    assert run.stdout == "", "stdout is the stdio transport: nothing else may be written there"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("nonsense", "--http wants HOST:PORT, for example 127.0.0.1:8000, not 'nonsense'"),
        (":8000", "--http wants HOST:PORT"),
        ("127.0.0.1:http", "--http port must be a number, not 'http'"),
        ("127.0.0.1:70000", "--http port must be between 0 and 65535, not 70000"),
        ("127.0.0.1:-1", "--http port must be between 0 and 65535, not -1"),
    ],
)
def test_bad_http_value_is_one_line_and_exit_2(
    tree: Path, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A malformed --http is a usage error: one line, exit status 2 (as argparse's), checked in-process."""
    assert main(["serve", str(tree), "--http", value]) == 2
    stderr = capsys.readouterr().err
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected one line, got:\n{stderr}"
    assert lines[0].startswith("skillwire: error: "), lines[0]
    assert message in lines[0]
    assert "Traceback" not in stderr


def test_an_address_that_cannot_be_bound_is_one_error_line(tree: Path) -> None:
    """A loopback port another socket already listens on cannot be bound (a network address is refused earlier)."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        address = f"127.0.0.1:{held.getsockname()[1]}"
        run = _serve(str(tree), "--http", address, "--quiet", "--no-watch", cwd=tree.parent)
    assert run.returncode == 1, run.stderr
    assert f"skillwire: error: cannot listen on {address}" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


def test_a_port_in_use_is_said_at_once_before_anything_is_scanned(tmp_path: Path) -> None:
    """Before, a busy port was reported after the whole index was built (and its summary printed). The port is
    bound first: one line saying which port, that it is in use and what to do; exit 1 (a failure, `cli/errors.py`),
    and nothing scanned or printed before it."""
    for i in range(300):
        write_skill(tmp_path / "skills", f"team-{i % 10}/skill-{i:03d}")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        run = _serve(str(tmp_path / "skills"), "--http", f"127.0.0.1:{port}", "--no-watch", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert run.stderr.splitlines() == [
        f"skillwire: error: cannot listen on 127.0.0.1:{port}: port {port} is in use (another process listens on "
        "it); stop that process, or choose another port (--http 127.0.0.1:0 picks a free one)"
    ]


@pytest.mark.parametrize("watch", [[], ["--no-watch"]], ids=["watching", "no-watch"])
def test_missing_root_is_reported_and_the_others_are_still_served(tree: Path, watch: list[str]) -> None:
    missing = tree.parent / "no-such-folder"
    run = _serve(str(missing), str(tree), *watch, cwd=tree.parent)
    assert run.returncode == 0, run.stderr
    assert "[root-missing]" in run.stderr, run.stderr
    assert f"{missing}: root folder cannot be opened" in run.stderr, run.stderr
    assert "skill://good/SKILL.md" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    assert " ERROR " not in run.stderr, run.stderr


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse's own usage errors (no PATH) keep exit status 2, as the module docstring says (parser in-process)."""
    with pytest.raises(SystemExit) as exited:
        main(["serve"])
    assert exited.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_serve_takes_several_sources_and_refuses_a_skill_path_two_of_them_offer(tree: Path, tmp_path: Path) -> None:
    """`serve A team=B C`: B's skills under team/, and a skill path offered by two sources is refused at start
    with both origins named (skillwire choice, issue 12)."""
    other = tmp_path / "other"
    (other / "good").mkdir(parents=True)
    (other / "good" / "SKILL.md").write_text(GOOD_MD, encoding="utf-8")
    run = _serve(str(tree), f"team={tree}", f"extra={other}", f"extra={other}", cwd=tmp_path)
    summary = run.stderr
    assert run.returncode == 0, summary
    assert "skill://good/SKILL.md" in summary, summary
    assert "skill://team/good/SKILL.md" in summary, summary
    assert "[duplicate-uri]" in summary, summary
    assert f"skill://extra/good/SKILL.md is offered by extra=folder {other} and extra=folder {other}" in summary


def test_a_spec_naming_a_kind_with_nothing_after_it_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`serve folder:` exits 2 with one line saying what is missing (refused before anything is served)."""
    monkeypatch.chdir(tmp_path)
    assert main(["serve", "folder:"]) == 2
    err = capsys.readouterr().err
    assert "folder: needs something after the colon" in err
    assert "Traceback" not in err
