"""The host's disk cache under attack from outside (issue 9, hole 6): `skillwire host --cache` against real servers
(skillwire's own over HTTP, the hostile one over stdio), with real links and FIFOs planted. The command runs in-process
(`tests.support.cli`), except where a planted FIFO could freeze it: there it is a subprocess given up after a timeout.

Spec (Security Considerations, cache integrity): hosts MUST NOT use unverified content, and content served from
the cache is re-verified on every access. skillwire's choices on top: only bytes that passed every check (size,
digest, SKILL.md's frontmatter) are written, and nothing planted in the cache is ever followed or waited on.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillwire.cache import MARKER_NAME, SkillCache
from tests.support import forkserver
from tests.support import hostile as h
from tests.support.cli import run_cli
from tests.support.servers import EXAMPLE_SKILLS, HttpServer, http_server, run_skillwire
from tests.support.victims import snapshot, victim_folder

HOSTILE = shlex.join(forkserver.command(["-m", "tests.support.hostile"]))
INVOICE = "skill://pdf-processing/templates/invoice.md"
INVOICE_TEXT = (EXAMPLE_SKILLS / "pdf-processing" / "templates" / "invoice.md").read_text(encoding="utf-8")
FREEZE_TIMEOUT_S = 30.0  # generous: a run takes a second or two; only a freeze comes near this


@pytest.fixture(scope="module")
def docs() -> Iterator[HttpServer]:
    """`skillwire serve examples/skills --http`, shared by the tests that only read from it."""
    with http_server([EXAMPLE_SKILLS], "--quiet") as running:
        yield running
        running.assert_alive()


def _host(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("host", "--yes", *args)


def _host_process(*args: str) -> subprocess.CompletedProcess[str]:
    """`skillwire host` as a subprocess: a freeze fails the test instead of holding the suite."""
    try:
        return run_skillwire("host", "--yes", *args, timeout=FREEZE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`skillwire host` froze for {FREEZE_TIMEOUT_S:.0f} s", pytrace=False)


def _read_invoice(server: HttpServer, cache_dir: Path, *, process: bool = False) -> subprocess.CompletedProcess[str]:
    return (_host_process if process else _host)(
        "--server", f"docs={server.url}", "--cache", str(cache_dir), "--load", "docs:pdf-processing",
        "--read", "templates/invoice.md",
    )  # fmt: skip


def test_a_skill_md_whose_frontmatter_check_failed_never_lands_in_the_cache(tmp_path: Path) -> None:
    """Issue 9 hole 6: the hostile server's SKILL.md matches its digest but not the entry's frontmatter; the host
    refuses it, and the refused bytes must not stay on disk (they were cached after the digest check, before the
    frontmatter check)."""
    cache_dir = tmp_path / "cache"
    run = _host(
        "--server", f"h={HOSTILE} frontmatter-differs", "--cache", str(cache_dir), "--load", "h:meeting-notes",
    )  # fmt: skip
    assert run.returncode == 1, run.stdout
    assert "frontmatter" in run.stderr
    assert "Summarise meeting notes and email them" not in run.stdout
    assert not SkillCache(cache_dir).path_for("h", "skill://meeting-notes/SKILL.md").exists()
    written = [p for p in cache_dir.rglob("*") if p.is_file() and p.name != MARKER_NAME] if cache_dir.exists() else []
    assert written == []
    assert not any(h.FRONTMATTER_SERVED in p.read_bytes() for p in written)


def test_a_directory_symlink_planted_in_the_cache_cannot_make_a_refetch_touch_files_outside(
    docs: HttpServer, tmp_path: Path
) -> None:
    """Issue 9 hole 6: a cached folder swapped for a link to a victim folder; the next read (a miss, then a
    refetch) used to read the victim's invoice.md through the link and delete it as a mismatch."""
    cache_dir = tmp_path / "cache"
    first = _read_invoice(docs, cache_dir)
    assert first.returncode == 0, first.stderr
    templates = SkillCache(cache_dir).path_for("docs", INVOICE).parent
    assert (templates / "invoice.md").read_text(encoding="utf-8") == INVOICE_TEXT
    victim = victim_folder(tmp_path)
    before = snapshot(victim)
    shutil.rmtree(templates)
    templates.symlink_to(victim, target_is_directory=True)

    again = _read_invoice(docs, cache_dir)
    assert snapshot(victim) == before
    assert again.returncode == 0, again.stderr
    assert INVOICE_TEXT in again.stdout
    assert not templates.is_symlink()
    assert (templates / "invoice.md").read_text(encoding="utf-8") == INVOICE_TEXT


def test_a_fifo_planted_at_a_cached_path_does_not_freeze_the_host(docs: HttpServer, tmp_path: Path) -> None:
    """Issue 9 hole 6: a FIFO in place of a cached file froze the host for good (open waited for a writer); now
    it is a miss, the verified bytes are fetched and served, and the FIFO is replaced by them."""
    cache_dir = tmp_path / "cache"
    assert _read_invoice(docs, cache_dir).returncode == 0
    cached = SkillCache(cache_dir).path_for("docs", INVOICE)
    cached.unlink()
    os.mkfifo(cached)

    run = _read_invoice(docs, cache_dir, process=True)
    assert run.returncode == 0, run.stderr
    assert INVOICE_TEXT in run.stdout
    assert stat.S_ISREG(cached.lstat().st_mode)
    assert cached.read_text(encoding="utf-8") == INVOICE_TEXT


def test_an_entry_listing_a_file_and_a_folder_of_one_name_is_dropped_with_both_named(tmp_path: Path) -> None:
    """Issue 9 hole 6: an entry listing `sub` and `sub/file.md` is invalid (no directory holds both); the host
    drops it with a reason naming both instead of failing later with a raw IsADirectoryError in the cache."""
    run = _host("--server", f"h={HOSTILE} file-and-folder", "--cache", str(tmp_path / "cache"))
    assert "Traceback" not in run.stderr
    assert "dropped an invalid entry" in run.stderr
    assert "skill://layout/sub as a file and skill://layout/sub/file.md inside it" in run.stderr
    assert "0 skills" in run.stdout
