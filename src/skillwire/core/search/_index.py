"""The search index: BM25 with field weights and stand-ins, an exact-name match first, changed one skill at a time.

A `SearchIndex` holds documents (a key, a name, a description, other text) and answers `search(query, limit)`
with the best keys by score. It changes one document at a time (`put`, `remove`), so a host keeps it current as
listings change instead of rebuilding it per query. Pure: no I/O, no clock; ties break on the key, so the same
documents and query always give the same answer.

Scoring: a query's terms (`_text.terms`: stop words dropped, Snowball stems) are matched against a document's
weighted term frequencies (the name counts 4x, the description 1x, other text 0.5x) by BM25 (`_ranking`). Each query
term scores the better of its own match and its stand-in's (`_related`: a word the catalog keeps writing beside it,
weighed down), so "compose release notes" finds the skill that says "draft" and never "compose". A query that is
a document's whole name (ignoring case, spaces and hyphens) puts that document first.

Views: `index.view(allows)` is the index as someone who may see only the documents whose key `allows` passes. It
ranks with its own statistics, postings and stand-ins over those documents alone (a server's caller with a scope:
what it may not see changes none of its scores, shortlists or answers), shares the documents' terms with the index
(about 150-185 bytes a document it holds, against about 740 for an index of its own), is built in steps (`build`) so
a server can let other work run meanwhile, and follows the index's changes for as long as it is in use.

Memory is kept small: 32-bit ids in arrays, no per-name set for the usual one skill per name, each word's term
remembered (a catalog repeats its words; bounded) (`python -m bench.search` prints bytes a skill at 100,000
generated skills).

    index = SearchIndex()
    index.put(Document(("docs", "skill://pdf/SKILL.md"), "pdf", "Fill and merge PDF files"))
    index.search("merge pdfs")   # [SearchHit(key=("docs", "skill://pdf/SKILL.md"), score=...)]
"""

from __future__ import annotations

import weakref
from array import array
from collections.abc import Callable, Hashable, Iterable, Sequence

from skillwire.core.search._ranking import Doc, Ranking, SearchHit
from skillwire.core.search._text import STOP_WORDS, Document, name_key, stem, terms, words

NAME_WEIGHT = 4.0
DESCRIPTION_WEIGHT = 1.0
OTHER_WEIGHT = 0.5
_WORDS_REMEMBERED = 200_000  # distinct words whose term id an index remembers (bounds memory on hostile text)
MAX_QUERY_TERMS = 32  # a longer query keeps its first 32 distinct terms (a conversation used as a query)


def _ids(named: int | tuple[int, ...]) -> tuple[int, ...]:
    return (named,) if isinstance(named, int) else named


class SearchIndex:
    """An incremental BM25 index over skill listings (see the module docstring)."""

    _words_remembered = _WORDS_REMEMBERED

    def __init__(self, documents: Iterable[Document] = ()) -> None:
        self._ids: dict[Hashable, int] = {}
        self._term_ids: dict[str, int] = {}
        self._term_names: list[str] = []  # term id -> the term
        self._names: dict[str, int | tuple[int, ...]] = {}  # name key -> its document (a tuple when several)
        self._word_terms: dict[str, int] = {}  # a word as written -> its term id (-1: a stop word)
        self._next = 0
        self._all = Ranking(self._term_names)  # every document: the documents themselves live in its `docs`
        self._views: weakref.WeakSet[SearchView] = weakref.WeakSet()  # views in use, kept current by every change
        self.update(documents)

    def __len__(self) -> int:
        return len(self._all.docs)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._ids

    def put(self, document: Document) -> None:
        """Index (or re-index) one document under its key."""
        self.update([document])

    def update(self, documents: Iterable[Document]) -> None:
        """Index (or re-index) several documents; the impacts are weighed once for all of them."""
        prepared: list[Doc] = []
        term_ids = self._term_ids_of
        for document in {document.key: document for document in documents}.values():  # a key given twice: the last
            self.remove(document.key)
            weighted: dict[int, float] = {}
            for text, weight in (
                (document.name, NAME_WEIGHT),
                (document.description, DESCRIPTION_WEIGHT),
                (document.other, OTHER_WEIGHT),
            ):
                for found in term_ids(text):
                    weighted[found] = weighted.get(found, 0.0) + weight
            doc_id, name = self._next, name_key(document.name)
            self._next += 1
            ids, tfs = array("i", weighted.keys()), array("f", weighted.values())
            prepared.append(Doc(doc_id, document.key, name, sum(weighted.values()), ids, tfs))
            self._ids[document.key] = doc_id
            same = self._names.get(name)
            self._names[name] = doc_id if same is None else (*_ids(same), doc_id)
        self._all.add(prepared)
        for view in list(self._views):
            view._added(prepared)

    def remove(self, key: Hashable) -> bool:
        """Drop `key`'s document; False if it was not indexed."""
        doc_id = self._ids.pop(key, None)
        if doc_id is None:
            return False
        doc = self._all.docs[doc_id]
        self._all.remove(doc_id)
        others = tuple(other for other in _ids(self._names[doc.name]) if other != doc_id)
        if not others:
            del self._names[doc.name]
        else:
            self._names[doc.name] = others[0] if len(others) == 1 else others
        for view in list(self._views):
            view._ranking.remove(doc_id)
        return True

    def keys(self) -> list[Hashable]:
        """Every indexed key, in the order first indexed."""
        return [doc.key for doc in self._all.docs.values()]

    def search(self, query: str, limit: int = 10) -> list[SearchHit]:
        """The `limit` best documents for `query`, best first (ties: by key); [] for a query with no terms."""
        return self._search(self._all, query, limit)

    def stand_ins(self, term: str) -> list[tuple[str, float]]:
        """The terms standing in for `term` (a term as `terms` gives it), best first, with their shares."""
        return self._stand_ins(self._all, term)

    def view(self, allows: Callable[[Hashable], bool]) -> SearchView:
        """This index as someone who sees only the documents whose key `allows` (see `SearchView`)."""
        return SearchView(self, allows)

    # -- internals -------------------------------------------------------------------------------------------------

    def _search(self, ranking: Ranking, query: str, limit: int) -> list[SearchHit]:
        if limit <= 0 or not ranking.docs:
            return []
        asked = list(dict.fromkeys(terms(query)))[:MAX_QUERY_TERMS]  # cut before looking up: the index decides nothing
        term_ids = [term_id for term in asked if (term_id := self._term_ids.get(term)) is not None]
        key = name_key(query)
        named = self._names.get(key) if key else None
        return ranking.search(term_ids, _ids(named) if named is not None else (), limit)

    def _stand_ins(self, ranking: Ranking, term: str) -> list[tuple[str, float]]:
        term_id = self._term_ids.get(term)
        if term_id is None:
            return []
        return [(self._term_names[other], share) for other, share in ranking.stand_ins(term_id)]

    def _term_ids_of(self, text: str) -> list[int]:
        """`terms(text)` as term ids (new terms get one), each word's term remembered: a catalog repeats its words."""
        known, written = self._word_terms, words(text)
        for word in set(written).difference(known):
            found = -1 if word in STOP_WORDS else self._term_id(stem(word))
            if len(known) >= self._words_remembered:  # hostile or huge vocabularies: look the rest up word by word
                return [self._term_id(term) for term in terms(text)]
            known[word] = found
        return [found for found in map(known.__getitem__, written) if found >= 0]

    def _term_id(self, term: str) -> int:
        found = self._term_ids.get(term)
        if found is None:
            found = self._term_ids[term] = len(self._term_names)
            self._term_names.append(term)
        return found


class SearchView:
    """A `SearchIndex` as someone who may see only some of its documents: BM25 over those alone.

    N, document frequencies, the average length, stand-ins and each frequent term's shortlist are computed over the
    documents whose key `allows` passes, so a hidden document changes nothing a view answers. `build(steps)` does
    part of the work and says whether the view is complete (`search` finishes it first); the average length is
    fixed before the first document is ranked, so a view built in steps ranks exactly as one built at once. A view
    follows every change to its index while anyone holds it (the index keeps views weakly), including changes made
    while it is being built.

        view = index.view(lambda key: str(key).startswith("skill://acme/"))
        while not view.build(4_000):
            ...                         # let other work run
        view.search("refund a charge")
    """

    __slots__ = ("__weakref__", "_allows", "_index", "_members", "_next", "_pending", "_ranking")

    def __init__(self, index: SearchIndex, allows: Callable[[Hashable], bool]) -> None:
        self._index = index
        self._allows = allows
        self._ranking = Ranking(index._term_names)
        self._pending: list[int] | None = list(index._all.docs)  # documents still to check, by id, in order
        self._members: list[Doc] = []  # the allowed ones, still to post
        self._next = 0  # how far through `_pending`, then through `_members`
        index._views.add(self)

    def __len__(self) -> int:
        """Documents this view ranks (so far, while it is being built)."""
        return len(self._ranking.docs)

    @property
    def ready(self) -> bool:
        """True once every allowed document is ranked."""
        return self._pending is None and self._next >= len(self._members)

    def build(self, steps: int) -> bool:
        """Check or rank up to `steps` more documents; True when the view is complete."""
        if self.ready:
            return True
        docs = self._index._all.docs
        if self._pending is not None:  # first: which documents are allowed
            end = min(len(self._pending), self._next + steps)
            allows = self._allows
            for doc_id in self._pending[self._next : end]:
                doc = docs.get(doc_id)  # None: removed since
                if doc is not None and allows(doc.key):
                    self._members.append(doc)
            steps -= end - self._next
            self._next = end
            if end < len(self._pending):
                return False
            self._pending, self._next = None, 0
            self._ranking.begin(self._members)  # the average length of them all, before any is posted
        end = min(len(self._members), self._next + max(steps, 0))
        self._ranking.post(doc for doc in self._members[self._next : end] if docs.get(doc.id) is doc)
        self._next = end
        if end < len(self._members):
            return False
        self._ranking.settle()  # changes made while it was built may have moved the average length
        self._members = []
        self._next = 0
        return True

    def search(self, query: str, limit: int = 10) -> list[SearchHit]:
        """The `limit` best allowed documents for `query`, ranked as if the others were not indexed."""
        while not self.build(len(self._index) + 1):
            pass
        return self._index._search(self._ranking, query, limit)

    def stand_ins(self, term: str) -> list[tuple[str, float]]:
        """The terms standing in for `term` among the allowed documents, best first, with their shares."""
        while not self.build(len(self._index) + 1):
            pass
        return self._index._stand_ins(self._ranking, term)

    def _added(self, documents: Sequence[Doc]) -> None:
        """The index added `documents`: rank the allowed ones (or queue them, while the view is being built)."""
        if self._pending is not None:
            self._pending.extend(doc.id for doc in documents)
            return
        allowed = [doc for doc in documents if self._allows(doc.key)]
        if self.ready:
            self._ranking.add(allowed)
        else:
            self._members.extend(allowed)
