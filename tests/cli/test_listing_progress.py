"""`skillwire inspect`, `host` and `pull` (real subprocesses) against a server that pages forever adding nothing.

skillwire choice (issue 19, hole 8): every command that walks skills/list ends such a walk within seconds, says in
one stderr line that the listing is incomplete and why, and `pull` by name says why it found nothing.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from tests.support.flood import hostile_command, run_measured

# Empty pages with a fresh cursor each, 10 ms apart: 10,000 of them took each command past 100 s.
PAGER = hostile_command("empty-pager", "--page-delay", "0.01", "--exit-on-hangup")
HARNESS_TIMEOUT_S = 30.0
CUTOFF = "16 pages in a row added no skill"


def _skillwire(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillwire", *args]


def test_inspect_ends_an_endless_listing_that_adds_nothing() -> None:
    """Attack: empty pages forever; `inspect` stops and says so (exit 1: the listing is incomplete)."""
    command = shlex.join(PAGER)
    run = run_measured(_skillwire("inspect", command), timeout=HARNESS_TIMEOUT_S)
    assert run.returncode == 1, run.stderr
    lines = [line for line in run.stderr.splitlines() if "incomplete" in line]
    assert lines == [f"skillwire: the skill listing of {command} is incomplete: {CUTOFF}"]


def test_host_ends_an_endless_listing_that_adds_nothing() -> None:
    """Attack: empty pages forever; `host` stops, names the server by its label, and shows an empty catalog."""
    run = run_measured(_skillwire("host", "--server", f"pages={shlex.join(PAGER)}"), timeout=HARNESS_TIMEOUT_S)
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stderr.splitlines() if "incomplete" in line]
    assert lines == [f"skillwire: the skill listing of server 'pages' is incomplete: {CUTOFF}"]


def test_pull_by_name_ends_an_endless_listing_that_adds_nothing(tmp_path: Path) -> None:
    """Attack: empty pages forever; `pull NAME` stops looking, writes nothing, and says the listing was cut."""
    dest = tmp_path / "dest"
    run = run_measured(_skillwire("pull", shlex.join(PAGER), "page-1", str(dest)), timeout=HARNESS_TIMEOUT_S)
    assert run.returncode != 0
    assert f"(the listing is incomplete: {CUTOFF})" in run.stderr
    assert not dest.exists() or not any(dest.iterdir())
