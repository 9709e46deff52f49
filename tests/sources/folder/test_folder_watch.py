"""The folder watcher (`sources/folder/watch.py`) and its process (`sources/watch_process.py`), with real files.

skillwire choice (issue 23): the native watcher runs in a process of its own, since setting it up holds the
interpreter's lock for as long as it walks the folders. That process answers one request at a time, ends with its
input, and is ended when watching stops; one that dies is started again, and what changed meanwhile is rescanned.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from skillwire.server.skill_service import SkillService
from skillwire.service.watch import watch_and_rebuild
from skillwire.sources import watch_process
from skillwire.sources.folder import source as filesystem
from skillwire.sources.folder.source import FolderSource
from skillwire.sources.folder.watch import watch_folders
from skillwire.sources.port import WatchPace
from tests.support.polling import eventually

pytestmark = pytest.mark.anyio

PACE = WatchPace(debounce_ms=200, step_ms=20)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _ask(proc: subprocess.Popen[bytes]) -> Any:
    """One request to a watcher process, its answer decoded."""
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(b"\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def _watcher(*roots: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", watch_process.__name__, "1", "200", "20", *map(str, roots)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )


def test_the_watcher_process_answers_each_request_and_ends_with_its_input(tmp_path: Path) -> None:
    proc = _watcher(tmp_path)
    try:
        assert _ask(proc) == []  # set up, nothing changed
        (tmp_path / "new.md").write_bytes(b"hi\n")
        seen: set[str] = set()
        for _ in range(100):  # each answer waits at most IDLE_MS
            seen |= {path for _, path in _ask(proc)}
            if str(tmp_path / "new.md") in seen:
                break
        assert str(tmp_path / "new.md") in seen
        assert proc.stdin is not None
        proc.stdin.close()  # the parent went away
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait()


def test_the_watcher_process_says_why_it_cannot_watch(tmp_path: Path) -> None:
    proc = _watcher(tmp_path / "missing")
    try:
        answer = _ask(proc)
        assert proc.wait(timeout=10) == 1
    finally:
        proc.kill()
        proc.wait()
    assert set(answer) == {"error"}
    assert answer["error"].startswith("FileNotFoundError")


@asynccontextmanager
async def watched(roots: tuple[Path, ...], calls: list[Sequence[str] | None]) -> AsyncIterator[None]:
    """`watch_folders` on `roots`, each rebuild it asks for appended to `calls`, set up before the body runs."""

    async def rebuild(paths: Sequence[str] | None) -> None:
        calls.append(paths)

    async with anyio.create_task_group() as tg:
        await tg.start(lambda task_status: watch_folders(roots, rebuild, pace=PACE, task_status=task_status))
        yield
        tg.cancel_scope.cancel()


async def test_a_watcher_process_that_dies_is_started_again_and_caught_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    started: list[Any] = []
    commands: list[list[str]] = []
    open_process = anyio.open_process

    async def recorded(command: list[str], **kwargs: Any) -> Any:
        commands.append(command)
        started.append(await open_process(command, **kwargs))
        return started[-1]

    monkeypatch.setattr(anyio, "open_process", recorded)
    calls: list[Sequence[str] | None] = []
    with caplog.at_level(logging.WARNING):
        async with watched((tmp_path,), calls):
            assert calls == [None]  # the catch-up once it is up
            started[0].kill()
            await eventually(lambda: _true(len(calls) == 2), "a catch-up rescan from a new watcher", deadline_s=30)
            assert calls[1] is None
            (tmp_path / "later.md").write_bytes(b"hi\n")
            await eventually(lambda: _true([str(tmp_path / "later.md")] in calls), "the change is reported")
    assert len(started) == 2
    assert commands[0][1:3] == ["-P", watch_process.__file__]  # by its path: it needs no skillwire import
    assert [p.returncode is not None for p in started] == [True, True]  # none left running once watching stops
    assert "trying again" in caplog.text


async def test_without_an_interpreter_to_start_it_watches_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An embedded Python (no `sys.executable`) cannot start the watcher process: watchfiles runs here instead."""
    monkeypatch.setattr(sys, "executable", "")

    async def no_process(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no process may be started")

    monkeypatch.setattr(anyio, "open_process", no_process)
    calls: list[Sequence[str] | None] = []
    async with watched((tmp_path,), calls):
        (tmp_path / "here.md").write_bytes(b"hi\n")
        await eventually(lambda: _true([str(tmp_path / "here.md")] in calls), "the change is reported")
    assert calls[0] is None


async def _true(value: bool) -> bool:
    return value


async def test_a_watch_limit_reached_is_said_with_its_fix_and_not_retried_soon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Setting a watcher up at 100,000 skills costs 8 s of CPU and fails the same way while the system's limit on
    watched folders stands: one warning saying how to raise it, and no attempt again for minutes."""
    limit = json.dumps({"error": 'OSError: OS file watch limit reached. about ["/x"]'})
    attempts: list[object] = []
    open_process = anyio.open_process

    async def at_the_limit(command: list[str], **kwargs: Any) -> Any:
        attempts.append(command)
        # as the real watcher process: reads the request, then answers (a child that answered and ended before the
        # request was written would be a watcher that ended, another failure, retried within a second)
        script = f"import sys; sys.stdin.readline(); print({limit!r}, flush=True)"
        return await open_process([sys.executable, "-c", script], **kwargs)

    monkeypatch.setattr(anyio, "open_process", at_the_limit)
    calls: list[Sequence[str] | None] = []
    with caplog.at_level(logging.WARNING):
        async with watched((tmp_path,), calls):
            with anyio.fail_after(30):  # the failure seen (a loaded machine starts the child slowly)
                while not calls:
                    await anyio.sleep(0.05)
            await anyio.sleep(2.5)  # then past the first two restarts of any other failure (1 s, then 2 s)
    assert len(attempts) == 1
    assert calls == [None]  # no watcher came up: caught up once all the same
    assert caplog.text.count("max_user_watches") == 1, caplog.text


async def test_a_restored_catalog_is_checked_even_when_no_watcher_can_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher's catch-up is what checks a catalog restored from a digest cache: a watcher that cannot start
    still catches up once (before, such a catalog stayed unchecked, /readyz "starting", until a SIGHUP)."""
    monkeypatch.setattr(filesystem, "RACY_NS", 0)
    root = tmp_path / "skills"
    (root / "alpha").mkdir(parents=True)
    (root / "alpha" / "SKILL.md").write_text("---\nname: alpha\ndescription: A\n---\n")
    cache = tmp_path / "digests.bin"
    FolderSource([root], digest_cache=cache).scan()

    async def failing(command: list[str], **kwargs: Any) -> Any:
        raise OSError("no process may be started here")

    monkeypatch.setattr(anyio, "open_process", failing)
    service = SkillService(FolderSource([root], digest_cache=cache))
    assert service.restored
    assert not service.stats.verified
    async with anyio.create_task_group() as tg:
        await tg.start(lambda task_status: watch_and_rebuild(service, task_status=task_status))
        tg.cancel_scope.cancel()
    assert service.stats.verified
