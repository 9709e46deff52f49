"""BM25 over one set of documents: postings, statistics, stand-ins and scoring, all computed over that set alone.

A `Ranking` holds the documents it ranks (ids and `_Doc`s prepared by `SearchIndex`, which owns the words, terms and
keys) and everything BM25 derives from them: each term's postings with their impacts, the number of documents, their
average length, and the stand-ins learned from them. A `SearchIndex` has one over every document; a `SearchView` has
one over the documents a caller may see, sharing the same `_Doc`s: its scores, shortlists and stand-ins then depend
on those documents and nothing else. Pure: no I/O, no clock.

Speed: a frequent term (in more than `_TOP` documents) is scanned only over its `_TOP` highest-impact documents (kept
sorted, re-sorted only after it changes), and the best candidates are then re-scored exactly from each document's own
terms: a query costs O(rare postings + _TOP x frequent terms), not O(documents). Stand-ins are learned from at most
`_RELATED_BUDGET` terms a query and remembered until the documents change.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from skillwire.core.search._related import MAX_DOCUMENTS, RELATED_WEIGHT, SUPPORT, stand_ins

EXACT_NAME_BONUS = 1_000.0  # more than any BM25 score: an exact name match comes first
_K1 = 1.2
_B = 0.75
_TOP = 2_000  # postings scanned per frequent term
_RESCORE = 4  # candidates re-scored exactly: limit x this
_RELATED_BUDGET = 100_000  # terms a query may read to learn its terms' stand-ins (rarest terms first)
_RELATED_REMEMBERED = 20_000  # terms whose stand-ins are remembered between changes (and at most a quarter of N)
_DRIFT = 0.25  # impacts are re-weighed when the average length moves by more than this share


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: the document's key and its score (higher is better)."""

    key: Hashable
    score: float


@dataclass(slots=True)
class _Term:
    """A term's postings: document ids and their BM25 impacts (without idf), and a cached best-first order."""

    docs: array[int]
    impacts: array[float]
    live: int = 0
    order: tuple[array[int], array[float]] | None = None  # the best postings, best first; None: stale


@dataclass(frozen=True, slots=True)
class Doc:
    """One indexed document as rankings share it: its id, key, name key, length, terms (32-bit ids) and weights."""

    id: int  # ascending in the order documents were indexed
    key: Hashable
    name: str
    length: float  # the sum of its weighted term frequencies
    term_ids: array[int]  # one per distinct term (4 bytes each)
    tfs: array[float]  # weighted frequency of each, in the same order


class Ranking:
    """BM25 statistics and postings over the documents added to it (see the module docstring)."""

    __slots__ = ("_avg_used", "_length_sum", "_related", "_term_names", "docs", "terms")

    def __init__(self, term_names: Sequence[str]) -> None:
        self.docs: dict[int, Doc] = {}  # the documents ranked, by id (ids ascend in the order first indexed)
        self.terms: dict[int, _Term] = {}  # term id -> its postings among these documents (live > 0)
        self._term_names = term_names  # term id -> the term (the index's list, shared and only appended to)
        self._related: dict[int, tuple[int, tuple[tuple[int, float], ...] | None]] = {}  # term -> cost, stand-ins
        self._length_sum = 0.0
        self._avg_used = 0.0  # the average length the stored impacts were computed with

    def add(self, documents: Sequence[Doc]) -> None:
        """Rank these new documents too (ids above every id already added); impacts weighed once for all of them."""
        if not documents:
            return
        self._related.clear()  # stand-ins follow the documents
        self._length_sum += sum(doc.length for doc in documents)
        average = self._length_sum / (len(self.docs) + len(documents))
        drifted = not self._avg_used or abs(average - self._avg_used) > _DRIFT * self._avg_used
        if drifted:
            self._avg_used = average
        for doc in documents:
            self.docs[doc.id] = doc
            if not drifted:
                self._post(doc)
        if drifted:
            self._reweigh()  # the collection changed shape: every impact follows the new average length

    def begin(self, documents: Sequence[Doc]) -> None:
        """Set the average length to these documents' before `post` adds them a few at a time (an empty ranking).

        `begin(d)` then `post` of every part of `d`, in order, ranks exactly as `add(d)` does.
        """
        if documents:
            self._avg_used = sum(doc.length for doc in documents) / len(documents)

    def post(self, documents: Iterable[Doc]) -> None:
        """Rank these documents with the average length `begin` set (a view's build, in steps)."""
        for doc in documents:
            self._related.clear()  # stand-ins follow the documents
            self.docs[doc.id] = doc
            self._length_sum += doc.length
            self._post(doc)

    def settle(self) -> None:
        """Re-weigh if what changed since `begin` moved the average length as far as `add` would re-weigh for."""
        if self.docs and abs(self._length_sum / len(self.docs) - self._avg_used) > _DRIFT * self._avg_used:
            self._avg_used = self._length_sum / len(self.docs)
            self._reweigh()

    def remove(self, doc_id: int) -> bool:
        """Stop ranking document `doc_id`; False if it was not ranked here."""
        doc = self.docs.pop(doc_id, None)
        if doc is None:
            return False
        self._related.clear()
        self._length_sum -= doc.length
        terms = self.terms
        for term_id in doc.term_ids:
            entry = terms[term_id]
            entry.live -= 1
            entry.order = None
            if not entry.live:
                del terms[term_id]
            elif entry.live * 2 < len(entry.docs):  # mostly dead: compact
                self._compact(entry)
        return True

    def search(self, term_ids: Sequence[int], named: Iterable[int], limit: int) -> list[SearchHit]:
        """The `limit` best documents for a query's terms (ids, first-asked first; unknown ones left out) and the
        documents whose name is the whole query (`named`), best first (ties: by key)."""
        if limit <= 0 or not self.docs:
            return []
        asked = [(t, self._idf(entry.live)) for t in term_ids if (entry := self.terms.get(t)) is not None]
        uses = self._uses(asked)
        exact = [doc_id for doc_id in sorted(named) if doc_id in self.docs]
        scores: dict[int, float] = dict.fromkeys(exact, 0.0)
        get, alive = scores.get, self.docs
        for term_id, slots in uses.items():
            weight = sum(w for _, w in slots)  # at least its share of the exact score below: a bound to shortlist by
            entry = self.terms[term_id]
            docs, impacts = self._best(entry)
            if entry.live == len(entry.docs):  # no removed document in this term's postings
                for doc_id, impact in zip(docs, impacts, strict=True):
                    scores[doc_id] = get(doc_id, 0.0) + weight * impact
            else:
                for doc_id, impact in zip(docs, impacts, strict=True):
                    if doc_id in alive:
                        scores[doc_id] = get(doc_id, 0.0) + weight * impact
        if not scores:
            return []
        shortlist = heapq.nlargest(limit * _RESCORE + len(exact), scores.items(), key=lambda item: item[1])
        hits = []
        for doc_id, _ in shortlist:  # exact scores: a frequent term's share may lie beyond its scanned top
            doc = self.docs[doc_id]
            best = [0.0] * len(asked)  # each query term scores its own match or its stand-in's, the better one
            for t, tf in zip(doc.term_ids, doc.tfs, strict=True):
                scored = uses.get(t)
                if scored is not None:
                    impact = self._impact(tf, doc.length)
                    for slot, weight in scored:
                        best[slot] = max(best[slot], weight * impact)
            hits.append(SearchHit(doc.key, sum(best) + (EXACT_NAME_BONUS if doc_id in exact else 0.0)))
        hits.sort(key=lambda hit: (-hit.score, repr(hit.key)))
        return hits[:limit]

    def stand_ins(self, term_id: int) -> tuple[tuple[int, float], ...]:
        """The terms standing in for `term_id` among these documents, best first, with their shares."""
        return self._stand_ins_of(term_id, _RELATED_BUDGET)[1] if term_id in self.terms else ()

    # -- internals -------------------------------------------------------------------------------------------------

    def _uses(self, asked: list[tuple[int, float]]) -> dict[int, list[tuple[int, float]]]:
        """For each term to look up: the query terms (slots) it scores for and its weight in each.

        A query term scores with its idf; its best stand-in not asked for itself with that idf times RELATED_WEIGHT
        times its share. Stand-ins are learned for the rarest query terms first while the terms their documents
        hold fit in `_RELATED_BUDGET` (charged whether or not remembered: the answer never depends on the past).
        """
        uses: dict[int, list[tuple[int, float]]] = {}
        for slot, (term_id, idf) in enumerate(asked):
            uses.setdefault(term_id, []).append((slot, idf))
        budget, asked_ids = _RELATED_BUDGET, {term_id for term_id, _ in asked}
        for slot in sorted(range(len(asked)), key=lambda i: (self.terms[asked[i][0]].live, i)):
            term_id, idf = asked[slot]
            cost, found = self._stand_ins_of(term_id, budget)
            if cost > budget:
                break  # the budget is spent: rarer terms came first
            budget -= cost
            other, share = next(((t, s) for t, s in found if t not in asked_ids), (-1, 0.0))
            if other >= 0:
                uses.setdefault(other, []).append((slot, idf * RELATED_WEIGHT * share))
        return uses

    def _stand_ins_of(self, term_id: int, budget: int) -> tuple[int, tuple[tuple[int, float], ...]]:
        """What learning `term_id`'s stand-ins costs (terms read), and them if that is within `budget`.

        A term in too few or too many documents has none and costs nothing. Remembered until the documents change.
        """
        entry, docs = self.terms[term_id], self.docs
        if not SUPPORT <= entry.live <= MAX_DOCUMENTS:
            return 0, ()
        known = self._related.get(term_id)
        if known is not None and (known[1] is not None or known[0] > budget):
            return known[0], known[1] or ()
        held = [doc.term_ids for doc_id in entry.docs if (doc := docs.get(doc_id)) is not None]
        cost = sum(map(len, held))
        found: tuple[tuple[int, float], ...] | None = None
        if cost <= budget:
            together = Counter[int]()
            for ids in held:
                together.update(ids)
            del together[term_id]
            terms = self.terms
            found = stand_ins(len(held), together, lambda t: terms[t].live, len(docs), self._term_names.__getitem__)
        if len(self._related) >= max(64, min(_RELATED_REMEMBERED, len(docs) // 4)):  # memory follows the documents
            self._related.clear()
        self._related[term_id] = (cost, found)
        return cost, found or ()

    def _impact(self, tf: float, length: float) -> float:
        return tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * length / self._avg_used))

    def _idf(self, df: int) -> float:
        n = len(self.docs)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def _post(self, doc: Doc) -> None:
        k1_plus, norm = _K1 + 1, _K1 * (1 - _B + _B * doc.length / self._avg_used)  # BM25's tf part, inlined
        terms, doc_id = self.terms, doc.id
        for term_id, tf in zip(doc.term_ids, doc.tfs, strict=True):
            try:
                entry = terms[term_id]
            except KeyError:  # the term's first document here (rarer than not: faster than .get on a build)
                entry = terms[term_id] = _Term(array("i"), array("f"))
            entry.docs.append(doc_id)
            entry.impacts.append(tf * k1_plus / (tf + norm))
            entry.live += 1
            entry.order = None

    def _best(self, entry: _Term) -> tuple[Sequence[int], Sequence[float]]:
        """Postings to scan (documents, impacts): all of a rare term's, the `_TOP` best of a frequent one's."""
        if len(entry.docs) <= _TOP:
            return entry.docs, entry.impacts
        if entry.order is None:
            impacts = entry.impacts
            best = heapq.nlargest(_TOP, range(len(impacts)), key=impacts.__getitem__)
            entry.order = (array("i", [entry.docs[i] for i in best]), array("f", [impacts[i] for i in best]))
        return entry.order

    def _compact(self, entry: _Term) -> None:
        keep = [i for i, doc_id in enumerate(entry.docs) if doc_id in self.docs]
        entry.docs = array("i", [entry.docs[i] for i in keep])
        entry.impacts = array("f", [entry.impacts[i] for i in keep])
        entry.order = None

    def _reweigh(self) -> None:
        """Rebuild every posting with impacts for the current average length (when it drifts by a quarter)."""
        self.terms = {}
        for doc in self.docs.values():
            self._post(doc)
