"""Whether a paged walk still makes progress: the stall and time rules of `ClientLimits`, in one place.

A server decides what each page holds and whether a next cursor follows; the host decides how long it keeps asking.
A page *adds* when it brings something the walk has not seen (a skill for skills/list, a child for
resources/directory/read): empty pages, or pages that repeat what came before, add nothing. A walk stops, saying
why, after `max_stalled_pages` pages in a row that add nothing, once `max_stalled_seconds` have passed since the last
page that added (checked as pages arrive and, once a page has added nothing, while the next is awaited), or when the
whole walk passes `max_listing_seconds`. Pages that keep adding are bounded only by that last figure and by the page,
entry and byte caps. No clock is read here: the walk hands in the times.

    progress = Progress(limits, now=anyio.current_time())
    why = progress.page(now=anyio.current_time(), added=10)   # None: ask for the next page
    deadline, why = progress.deadline()                       # the next page must arrive by then, or the walk stops
"""

from __future__ import annotations

from skillwire.core.hosting.limits import ClientLimits


class Progress:
    """The progress of one paged walk: when it began, when a page last added, how many pages in a row added nothing.

    `what` names an item in the reasons given ("skill", "child").
    """

    __slots__ = ("last_added", "limits", "stalled_pages", "started", "what")

    def __init__(self, limits: ClientLimits, *, now: float, what: str = "skill") -> None:
        self.limits = limits
        self.what = what
        self.started = now
        self.last_added = now
        self.stalled_pages = 0

    def page(self, *, now: float, added: int) -> str | None:
        """Count a page checked at `now` that added `added` new items: why the walk must stop now, or None."""
        if added > 0:
            self.last_added = now
            self.stalled_pages = 0
        else:
            self.stalled_pages += 1
        if now - self.started > self.limits.max_listing_seconds:
            return self._too_long()
        if self.stalled_pages >= self.limits.max_stalled_pages:
            return f"{self.stalled_pages} pages in a row added no {self.what}"
        if self.stalled_pages and now - self.last_added > self.limits.max_stalled_seconds:
            return self._stalled()
        return None

    def deadline(self) -> tuple[float, str]:
        """The time by which the next page must have arrived, and the reason the walk stops if it has not.

        After a page that added, a next page may take what any request may (the connection's timeout), within the
        walk's whole time; after one that added nothing, the stall time runs on while the next is awaited.
        """
        end, why = self.started + self.limits.max_listing_seconds, self._too_long()
        stall_end = self.last_added + self.limits.max_stalled_seconds
        if self.stalled_pages and stall_end < end:
            return stall_end, self._stalled()
        return end, why

    def _too_long(self) -> str:
        return f"the listing took more than {self.limits.max_listing_seconds:g} s"

    def _stalled(self) -> str:
        return f"no page added a {self.what} for {self.limits.max_stalled_seconds:g} s"
