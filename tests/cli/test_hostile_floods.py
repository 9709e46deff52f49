"""`skillwire inspect` and `skillwire host` against the hostile server's floods and endless pager: real subprocesses
where their peak memory is the point, in-process (`tests.support.cli`) for what the endless pager makes them say.

skillwire choices (issue 9, holes 4 and 5): a command reading a huge answer to a 101-byte entry stays
small (peak RSS from the kernel, `wait4`) and reports a verification failure; a listing cut off
by a limit is said on stderr, in one line naming the server as the user named it.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from typing import Literal

import pytest

from skillwire.cli.main import main
from tests.support.cli import run_cli
from tests.support.flood import hostile_command, hostile_http, run_measured

Wire = Literal["http", "stdio"]
WIRES: tuple[Wire, ...] = ("http", "stdio")
FLOOD = ("--flood-bytes", str(64 * 1024 * 1024))
# The acceptance figure for a 500 MB answer; a 64 MiB answer read whole would take several times that.
PEAK_RSS_MIB = 150
CUT_OFF = "the resources/read answer passed 66,142 bytes (the entry lists 101 bytes); stopped reading"


def _skillwire(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillwire", *args]


@pytest.fixture(scope="module")
def huge_read_url() -> Iterator[str]:
    """One hostile HTTP server answering every read with the flood, for the tests that only read from it."""
    with hostile_http("huge-read", *FLOOD) as url:
        yield url


@pytest.mark.parametrize("wire", WIRES)
def test_inspect_verify_of_a_huge_answer_to_a_101_byte_entry_stays_small(
    wire: Wire, request: pytest.FixtureRequest
) -> None:
    """Attack: a 64 MiB answer for a 101-byte SKILL.md (500 MB took inspect --verify to 3.7 GB); it is cut off."""
    if wire == "stdio":
        run = run_measured(_skillwire("inspect", shlex.join(hostile_command("huge-read", *FLOOD)), "--verify"))
    else:
        url = request.getfixturevalue("huge_read_url")
        run = run_measured(_skillwire("inspect", url, "--verify"))
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"FAIL skill://huge/SKILL.md: {CUT_OFF}" in run.stdout.splitlines()
    assert run.peak_rss_mib < PEAK_RSS_MIB


@pytest.mark.parametrize("wire", WIRES)
def test_host_load_of_a_huge_answer_to_a_101_byte_entry_stays_small(wire: Wire, request: pytest.FixtureRequest) -> None:
    """Attack: a 64 MiB answer for a 101-byte SKILL.md (500 MB took host --load to 2.6 GB); the load is refused."""
    if wire == "stdio":
        server = f"h={shlex.join(hostile_command('huge-read', *FLOOD))}"
        run = run_measured(_skillwire("host", "--server", server, "--load", "h:huge", "--yes"))
    else:
        url = request.getfixturevalue("huge_read_url")
        run = run_measured(_skillwire("host", "--server", f"h={url}", "--load", "h:huge", "--yes"))
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"skillwire: skill://huge/SKILL.md: {CUT_OFF}" in run.stderr.splitlines()
    assert run.peak_rss_mib < PEAK_RSS_MIB


def test_host_says_on_stderr_that_an_endless_listing_is_incomplete() -> None:
    """Attack: a new nextCursor forever; `host` says in one stderr line, naming its label, that the catalog is cut."""
    server = f"pages={shlex.join(hostile_command('endless-pager'))}"
    run = run_cli("host", "--server", server, "--max-pages", "5")
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stderr.splitlines() if "incomplete" in line]
    assert lines == ["skillwire: the skill listing of server 'pages' is incomplete: stopped after 5 pages"]
    assert "hostile-endless-pager" not in run.stderr
    assert "5 skills:" in run.stdout


def test_inspect_says_on_stderr_that_an_endless_listing_is_incomplete() -> None:
    """Attack: a new nextCursor forever; `inspect` says in one stderr line that the listing is incomplete, and why."""
    command = shlex.join(hostile_command("endless-pager"))
    run = run_cli("inspect", command, "--max-pages", "5")
    assert run.returncode == 1, run.stderr
    lines = [line for line in run.stderr.splitlines() if "incomplete" in line]
    assert lines == [f"skillwire: the skill listing of {command} is incomplete: stopped after 5 pages"]


@pytest.mark.parametrize("value", ["0", "-3", "many"])
@pytest.mark.parametrize("command", ["inspect", "host"])
def test_max_pages_must_be_a_positive_number(command: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    """skillwire choice: `--max-pages` takes a positive whole number; anything else is a usage error, in process."""
    target = ["http://127.0.0.1:9/mcp"] if command == "inspect" else ["--server", "a=http://127.0.0.1:9/mcp"]
    with pytest.raises(SystemExit) as exit_info:
        main([command, *target, "--max-pages", value])
    assert exit_info.value.code == 2
    assert f"{value!r} is not a positive whole number" in capsys.readouterr().err
