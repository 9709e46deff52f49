"""`Progress`: when a paged walk stops for want of progress (issue 19, hole 8), driven with made-up times.

skillwire choices: pages that add nothing end a walk after `max_stalled_pages` in a row or `max_stalled_seconds`
since the last page that added; `max_listing_seconds` bounds the whole walk. The rule reads no clock, so each case
states its times; the real walks over real servers are in `test_listing_progress.py`.
"""

from __future__ import annotations

import pytest

from skillwire.client.paging import Progress
from skillwire.core.hosting.limits import DEFAULT_LIMITS, ClientLimits

ISSUE_BOUND_S = 10.0  # issue 19, hole 8: a listing that adds nothing ends within 10 s


def stop_time(limits: ClientLimits, interval: float, added: int = 0) -> tuple[float, str]:
    """When a walk of pages arriving `interval` s apart, each adding `added` items, stops, and why."""
    progress = Progress(limits, now=0.0)
    now = 0.0
    while True:
        deadline, late = progress.deadline()
        if now + interval > deadline:
            return deadline, late  # the next page did not come in time
        now += interval
        why = progress.page(now=now, added=added)
        if why is not None:
            return now, why


@pytest.mark.parametrize("interval", [0.0001, 0.01, 0.1, 0.5, 0.51, 1.0, 2.0, 5.0, 7.9])
def test_with_the_defaults_pages_that_add_nothing_end_within_the_issues_10_s(interval: float) -> None:
    """Whatever the pace of pages that add nothing (each under the stall time), the default walk ends within 10 s."""
    seconds, _ = stop_time(DEFAULT_LIMITS, interval)
    assert seconds <= DEFAULT_LIMITS.max_stalled_seconds < ISSUE_BOUND_S


def test_fast_pages_that_add_nothing_end_after_max_stalled_pages() -> None:
    seconds, why = stop_time(ClientLimits(max_stalled_pages=3), 0.01)
    assert why == "3 pages in a row added no skill"
    assert seconds == pytest.approx(0.03)


def test_slow_pages_that_add_nothing_end_when_the_stall_time_passes_while_the_next_is_awaited() -> None:
    """After an empty page at 2 s, the next (due at 4 s) is not awaited past 3 s: 3 s after the walk began."""
    assert stop_time(ClientLimits(max_stalled_seconds=3), 2.0) == (3.0, "no page added a skill for 3 s")


def test_a_first_page_slower_than_the_stall_time_ends_the_walk_if_it_adds_nothing() -> None:
    """The first page may take a request timeout; if it adds nothing, the walk has stalled that long already."""
    progress = Progress(ClientLimits(max_stalled_seconds=3), now=0.0)
    assert progress.deadline() == (600.0, "the listing took more than 600 s")
    assert progress.page(now=20.0, added=0) == "no page added a skill for 3 s"


def test_a_page_that_adds_starts_the_count_again_and_lets_the_next_page_take_a_request_timeout() -> None:
    limits = ClientLimits(max_stalled_pages=3, max_stalled_seconds=5)
    progress = Progress(limits, now=0.0, what="child")
    assert progress.page(now=1.0, added=0) is None
    assert progress.page(now=2.0, added=0) is None
    assert progress.deadline() == (5.0, "no page added a child for 5 s")
    assert progress.page(now=3.0, added=1) is None
    assert progress.deadline() == (600.0, "the listing took more than 600 s")
    assert progress.page(now=20.0, added=4) is None  # slow, but it added
    assert progress.page(now=21.0, added=0) is None
    assert progress.page(now=22.0, added=0) is None
    assert progress.page(now=23.0, added=0) == "3 pages in a row added no child"


def test_pages_that_keep_adding_end_only_at_the_listing_time() -> None:
    """A server that adds one skill a page, slowly, is held to `max_listing_seconds` in all."""
    limits = ClientLimits(max_listing_seconds=60)
    assert stop_time(limits, 7.0, added=1) == (60.0, "the listing took more than 60 s")
    assert stop_time(limits, 0.5, added=1) == (60.0, "the listing took more than 60 s")
