"""`ChangeNotifier.publish` compares the catalog before a change with the one after off the event loop: after a warm
restart's catch-up every skill is a new object, and the comparison (which builds the skills still deferred) held
the loop for about 0.5 s at 10,000 skills, 5 s at 100,000, while no request was answered.

The comparison is made to wait 50 ms (`time.sleep`, which holds whatever thread runs it): a ticker on the event loop
moves on meanwhile only if that thread is not the loop's. Both the plain and the scoped (per caller) paths.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from skillwire.core.scopes import ANONYMOUS, Caller, ScopePolicy, Visibility
from skillwire.server.skill_service import Listing, SkillService
from skillwire.service import notify
from skillwire.service.notify import ChangeNotifier
from skillwire.sources.folder.source import FolderSource
from tests.support.skills import write_skill

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _AllVisible:
    """A `CallerResolver` whose policy shows every caller everything."""

    def caller(self) -> Caller:
        return ANONYMOUS

    async def scope(self) -> Visibility | None:
        return None

    def visibility(self, caller: Caller) -> Visibility | None:
        return None

    def on_change(self, listener: Callable[[ScopePolicy], None]) -> None:
        pass


@pytest.mark.parametrize("scoped", [False, True], ids=["plain", "scoped"])
async def test_comparing_catalogs_leaves_the_event_loop_answering(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scoped: bool
) -> None:
    root = tmp_path / "skills"
    for name in ("alpha", "beta"):
        write_skill(root, name, description=f"About {name}")
    service = SkillService(FolderSource([root]))
    await service.rebuild()
    notifier = ChangeNotifier(service, callers=_AllVisible() if scoped else None)
    if scoped:  # one client told about changes under the policy, as `initialize` remembers it
        notifier._audience[0] = notify._Receiver(ANONYMOUS, None)
    before = service.catalog
    write_skill(root, "gamma", description="About gamma")
    await service.rebuild()

    ticks = 0
    seen: list[tuple[int, int]] = []  # the ticker's count when each comparison started and ended
    compare = notify._changed_files

    def slow_compare(a: Listing, b: Listing) -> tuple[bool, list[str]]:
        started = ticks
        time.sleep(0.05)
        result = compare(a, b)
        seen.append((started, ticks))
        return result

    monkeypatch.setattr(notify, "_changed_files", slow_compare)

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.sleep(0.001)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(ticker)
        notifier._published = before
        await notifier.publish(service.catalog)
        tasks.cancel_scope.cancel()
    assert seen, "the catalogs were not compared"
    assert all(end > start for start, end in seen), f"the event loop stood still while comparing: {seen}"
