"""`search_skills` for callers with a scope: one ranking per distinct visible set, built lazily, bounded, kept current.

A scoped caller's ranking must be a function of the skills it may see and nothing else: BM25's document count,
document frequencies and average length, the stand-ins learned from the catalog and each frequent term's shortlist
all say something about the skills they are computed over. So a caller with a scope is answered by a `SearchView`
of the one `SearchIndex`: BM25 over the skills its scope allows alone, sharing the index's documents (about 150-185
bytes a visible skill, against about 740 for an index of its own). Views are keyed by `Visibility.key` (the sorted
union of the patterns of the grants a caller matches): callers with equal keys share one, a key meaning the same set
across policy reloads. A view follows the catalog through its index; a caller that sees everything (`**`) gets the
index itself.

What a caller controls: patterns come only from the operator's scopes file. A token (a token-file line, a JWT's
`scope` and other claims) only selects which grants match, so no caller can name a pattern, but one able to obtain
tokens with different scope combinations (an OAuth client may ask for any subset of its scopes) can reach as many
distinct keys as there are combinations of grants. Hence the bounds, whatever callers do:

- at most `MAX_VIEWS` views, together holding at most `VIEW_CATALOGS` times the catalog's skills (the least
  recently used view goes first; the one being built is never evicted), so views hold at most about
  `VIEW_CATALOGS` x 185 bytes per served skill (75 MB at 100,000 skills; one catalog more while one is built);
- one view is built at a time (callers with other new scopes wait their turn; callers with a built view do not
  wait), in steps of `BUILD_STEP` skills with the event loop free in between, so a build never stalls other requests.

What the bounds leave: a caller cycling through more combinations than are kept makes the server build views again
(0.15-0.5 s of CPU each at 100,000 skills, `python -m bench.search_scopes`), and callers whose scope has no view yet
wait behind those builds; other methods and callers with a built view are not held up.

    scoped = ScopedSearch(index)
    ranking = await scoped.ranking_for(scope)   # the index itself for `**`, else the scope's view
    ranking.search("refund a charge", 10)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable

import anyio

from skillwire.core.scopes import Visibility
from skillwire.core.search import SearchIndex, SearchView

MAX_VIEWS = 64  # distinct visible sets ranked at once
VIEW_CATALOGS = 4  # skills all views hold together, in catalogs' worth
BUILD_STEP = 4_000  # skills checked or ranked between two yields to the event loop (up to about 20 ms of CPU)


class ScopedSearch:
    """Rankings for scoped callers over one `SearchIndex`: a bounded, least-recently-used set of views."""

    def __init__(
        self,
        index: SearchIndex,
        *,
        max_views: int = MAX_VIEWS,
        view_catalogs: int = VIEW_CATALOGS,
        build_step: int = BUILD_STEP,
    ) -> None:
        self.index = index
        self.max_views = max_views
        self.view_catalogs = view_catalogs
        self.build_step = build_step
        self._views: OrderedDict[tuple[str, ...], SearchView] = OrderedDict()
        self._building = anyio.Lock()

    def __len__(self) -> int:
        """Views held now."""
        return len(self._views)

    @property
    def held(self) -> int:
        """Skills the views hold together (each counted once per view that ranks it)."""
        return sum(len(view) for view in self._views.values())

    async def ranking_for(self, scope: Visibility) -> SearchIndex | SearchView:
        """What ranks for a caller with `scope`: the index for one who sees everything, else its scope's view."""
        if scope.everything:
            return self.index
        view = self._views.get(scope.key)
        if view is not None and view.ready:
            self._views.move_to_end(scope.key)
            return view
        async with self._building:
            view = self._views.get(scope.key)
            if view is None:
                view = self._views[scope.key] = self.index.view(_allows(scope))
            self._views.move_to_end(scope.key)
            self._fit(scope.key)
            while not view.build(self.build_step):
                await anyio.sleep(0)  # let other requests run between the steps of a large build
            self._fit(scope.key)
            return view

    def _fit(self, keep: tuple[str, ...]) -> None:
        """Evict the least recently used views (never `keep`) until the count and the skills held are in bounds."""
        budget = self.view_catalogs * max(1, len(self.index))
        while len(self._views) > 1 and (len(self._views) > self.max_views or self.held > budget):
            oldest = next(key for key in self._views if key != keep)
            del self._views[oldest]


def _allows(scope: Visibility) -> Callable[[Hashable], bool]:
    def allows(key: Hashable) -> bool:
        return isinstance(key, str) and scope.allows_uri(key)

    return allows
