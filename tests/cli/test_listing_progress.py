"""`skillwire inspect`, `host` and `pull` (in-process, `tests.support.cli`) against a server that pages forever adding
nothing.

skillwire choice (issue 19, hole 8): every command that walks skills/list ends such a walk within seconds, says in
one stderr line that the listing is incomplete and why, and `pull` by name says why it found nothing. The three walk
one pager over HTTP, a real process started once for the module (a pager keeps no state: each cursor names its page);
the same walk over stdio is tests/client/test_listing_progress.py's (both wires, default limits).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.flood import hostile_http

# Empty pages with a fresh cursor each, 10 ms apart: 10,000 of them took each command past 100 s.
PAGER_OPTIONS = ("--page-delay", "0.01")
HARNESS_TIMEOUT_S = 30.0  # each walk ends within seconds; 10,000 empty pages took over 100 s
CUTOFF = "16 pages in a row added no skill"


@pytest.fixture(scope="module")
def pager_url() -> Iterator[str]:
    """The URL of the empty pager over HTTP, one for the module."""
    with hostile_http("empty-pager", *PAGER_OPTIONS) as url:
        yield url


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    """`skillwire ARGS...` in-process, failing if it took longer than the walk may."""
    started = time.monotonic()
    run = run_cli(*args)
    assert time.monotonic() - started < HARNESS_TIMEOUT_S, run.stderr
    return run


def test_inspect_ends_an_endless_listing_that_adds_nothing(pager_url: str) -> None:
    """Attack: empty pages forever; `inspect` stops and says so (exit 1: the listing is incomplete)."""
    run = _run("inspect", pager_url)
    assert run.returncode == 1, run.stderr
    lines = [line for line in run.stderr.splitlines() if "incomplete" in line]
    assert lines == [f"skillwire: the skill listing of {pager_url} is incomplete: {CUTOFF}"]


def test_host_ends_an_endless_listing_that_adds_nothing(pager_url: str) -> None:
    """Attack: empty pages forever; `host` stops, names the server by its label, and shows an empty catalog."""
    run = _run("host", "--server", f"pages={pager_url}")
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stderr.splitlines() if "incomplete" in line]
    assert lines == [f"skillwire: the skill listing of server 'pages' is incomplete: {CUTOFF}"]


def test_pull_by_name_ends_an_endless_listing_that_adds_nothing(tmp_path: Path, pager_url: str) -> None:
    """Attack: empty pages forever; `pull NAME` stops looking, writes nothing, and says the listing was cut."""
    dest = tmp_path / "dest"
    run = _run("pull", pager_url, "page-1", str(dest))
    assert run.returncode != 0
    assert f"(the listing is incomplete: {CUTOFF})" in run.stderr
    assert not dest.exists() or not any(dest.iterdir())
