"""skills/list walked page by page (Listing Skills): the usable entries, the ones dropped and why, and where it stopped.

Paging is where a server can make a host loop or hoard: it stops, saying why, at a repeated or unusable cursor, at
the `ClientLimits` (pages, entries, bytes), and when the walk stops making progress or takes too long (`Progress`:
pages that add no skill, time without one, time in all). Each next page is asked for as soon as its cursor arrives,
and the page in hand is checked meanwhile: the server builds one page while the host checks the last.

    listing = await walk_listing(fetch_page, limits, page_limit)   # fetch_page(cursor, bound) -> (page, bytes)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from skillwire.client.paging import Progress
from skillwire.core.errors import InvalidEntry, ResponseTooLarge, UnexpectedResponse
from skillwire.core.hosting.entry import SkillEntry, parse_entry
from skillwire.core.hosting.limits import ClientLimits
from skillwire.core.uri import normal_uri
from skillwire.core.wire import SKILLS_LIST, SkillsListResult

_CHECKED_AT_ONCE = 10  # listing entries checked between two turns of the event loop (about 0.3 ms)

FetchPage = Callable[[str | None, int], Awaitable[tuple[SkillsListResult, int]]]
"""Send skills/list for a cursor (None: the first page), its answer bounded to some bytes: the page, bytes it took."""


@dataclass(frozen=True, slots=True)
class Listing:
    """Every usable entry of a skills/list walk, the entries dropped (with reasons), and whether paging finished.

    `complete` is False when paging was cut off (a repeated cursor, a bad cursor, or one of
    the `ClientLimits`: pages, entries, bytes, pages or time without progress, time in all);
    `cutoff` then says why. Even a complete listing is not proof that a server has no other
    skills (Listing Skills): skills/get answers for unlisted ones.
    """

    entries: tuple[SkillEntry, ...]
    problems: tuple[InvalidEntry, ...]
    complete: bool
    cutoff: str | None = None
    ttl_ms: int | None = None
    """The shortest `ttlMs` a page gave (the server's freshness hint for the listing); None when none gave one."""

    def __post_init__(self) -> None:
        if self.complete != (self.cutoff is None):
            raise ValueError("a Listing is complete exactly when it has no cutoff reason")


class _Walk:
    """The entries of a skills/list walk so far: each page's raw entries checked (`parse_entry`), repeats dropped."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self.entries: list[SkillEntry] = []
        self.problems: list[InvalidEntry] = []
        self.listed: set[str] = set()
        self.counted = 0
        self.ttl_ms: int | None = None

    def hint(self, ttl_ms: object) -> None:
        """Keep a page's `ttlMs` if it is one (a non-negative integer): the shortest wins."""
        if isinstance(ttl_ms, int) and not isinstance(ttl_ms, bool) and ttl_ms >= 0:
            self.ttl_ms = ttl_ms if self.ttl_ms is None else min(self.ttl_ms, ttl_ms)

    def add(self, raws: list[Any]) -> int:
        """Check some of a page's entries, up to the listing's entry limit; how many new skills they added."""
        added = 0
        for raw in raws[: max(0, self.max_entries - self.counted)]:
            try:
                entry = parse_entry(raw)
            except InvalidEntry as problem:
                self.problems.append(problem)
                continue
            key = normal_uri(entry.uri)  # one skill in two spellings (`same_uri`) is one skill listed twice
            if key in self.listed:
                self.problems.append(InvalidEntry(entry.uri, "listed more than once; the first entry is kept"))
                continue
            self.listed.add(key)
            self.entries.append(entry)
            added += 1
        self.counted += len(raws)
        return added

    def listing(self, cutoff: str | None) -> Listing:
        return Listing(
            tuple(self.entries), tuple(self.problems), complete=cutoff is None, cutoff=cutoff, ttl_ms=self.ttl_ms
        )


@dataclass(slots=True, eq=False)
class _PageAhead:
    """A skills/list request sent before the previous page was checked: its answer (or error), once it came."""

    bound: int
    done: anyio.Event = field(default_factory=anyio.Event)
    page: tuple[SkillsListResult, int] | None = None
    error: Exception | None = None

    async def answer(self) -> tuple[SkillsListResult, int]:
        await self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.page is not None
        return self.page


async def walk_listing(fetch: FetchPage, limits: ClientLimits, page_limit: int) -> Listing:
    """Every entry of at most `page_limit` skills/list pages fetched with `fetch`, within `limits`.

    The rules are `SkillsClient.list_entries`'s: stops early (`complete=False`) at a bad cursor or a limit.
    """
    if page_limit < 1:
        return _Walk(0).listing(f"stopped after {page_limit} pages")
    failed: Exception | None = None
    async with anyio.create_task_group() as tasks:
        try:
            listing = await _walk_pages(fetch, tasks, limits, page_limit)
        except Exception as err:  # raised below as itself, not wrapped in the task group's ExceptionGroup
            failed = err
        finally:
            tasks.cancel_scope.cancel()  # a page asked for ahead is not needed once the walk stopped
    if failed is not None:
        raise failed
    return listing


async def _walk_pages(fetch: FetchPage, tasks: TaskGroup, limits: ClientLimits, page_limit: int) -> Listing:
    walk = _Walk(limits.max_listing_entries)
    seen_cursors: set[str] = set()
    received = 0
    progress = Progress(limits, now=anyio.current_time())
    ahead = _ask_ahead(fetch, tasks, None, min(limits.max_response_bytes, limits.max_listing_bytes))
    for page_number in range(1, page_limit + 1):
        deadline, late = progress.deadline()
        answered: tuple[SkillsListResult, int] | None = None
        try:
            with anyio.CancelScope(deadline=deadline):  # the next page must come by then: see `Progress.deadline`
                answered = await ahead.answer()
        except ResponseTooLarge:
            if ahead.bound < limits.max_response_bytes:
                cut = f"the listing passed {limits.max_listing_bytes:,} bytes in {page_number} pages"
            else:
                cut = f"page {page_number} passed {ahead.bound:,} bytes"
            return walk.listing(cut)
        if answered is None:
            return walk.listing(late)
        page, took = answered
        received += took
        if not isinstance(page.skills, list):
            raise UnexpectedResponse(SKILLS_LIST, "the result has no `skills` array")
        raws: list[Any] = page.skills
        walk.hint(page.ttl_ms)
        next_cursor = page.next_cursor
        end: str | None = None  # why the walk stops after this page ("" for a complete listing)
        if walk.counted + len(raws) > limits.max_listing_entries:
            end = f"the listing passed {limits.max_listing_entries:,} entries"
        elif next_cursor is None:
            end = ""
        elif (why := _cursor_problem(next_cursor, seen_cursors)) is not None:
            end = why
        elif page_number == page_limit:
            end = f"stopped after {page_limit} pages"
        else:
            assert isinstance(next_cursor, str)
            seen_cursors.add(next_cursor)
            bound = min(limits.max_response_bytes, limits.max_listing_bytes - received)
            ahead = _ask_ahead(fetch, tasks, next_cursor, bound)
        added = 0
        for start in range(0, len(raws), _CHECKED_AT_ONCE):
            added += walk.add(raws[start : start + _CHECKED_AT_ONCE])
            await anyio.lowlevel.checkpoint()  # the request for the next page moves on meanwhile
        if end is None:
            end = progress.page(now=anyio.current_time(), added=added)
        if end is not None:
            return walk.listing(end or None)
    raise AssertionError("every page either continues the walk or ends it")


def _ask_ahead(fetch: FetchPage, tasks: TaskGroup, cursor: str | None, bound: int) -> _PageAhead:
    """Send the skills/list request for `cursor` now, in its own task; its answer is awaited later."""
    ahead = _PageAhead(bound)
    tasks.start_soon(_fetch_page, fetch, ahead, cursor)
    return ahead


async def _fetch_page(fetch: FetchPage, ahead: _PageAhead, cursor: str | None) -> None:
    try:
        ahead.page = await fetch(cursor, ahead.bound)
    except Exception as err:  # handed to the walk, which raises it where it awaits this page
        ahead.error = err
    finally:
        ahead.done.set()


def _cursor_problem(cursor: object, seen: set[str]) -> str | None:
    """Why a nextCursor cannot be followed (not a string, empty, or repeated), or None if it can."""
    if not isinstance(cursor, str):
        return f"nextCursor is a {type(cursor).__name__}, not a string"
    if cursor == "":
        return "nextCursor is an empty string"
    if cursor in seen:
        return f"the server repeated the cursor {_shorten(cursor, 80)}"
    return None


def _shorten(text: str, limit: int) -> str:
    """A server's string, quoted for a message: escaped, and cut to `limit` characters."""
    clean = text.encode("unicode_escape").decode("ascii")
    return repr(clean if len(clean) <= limit else clean[:limit] + "...")
