"""The search index: BM25 with field weights and stand-ins, an exact-name match first, changed one skill at a time.

A `SearchIndex` holds documents (a key, a name, a description, other text) and answers `search(query, limit)`
with the best keys by score. It changes one document at a time (`put`, `remove`), so a host keeps it current as
listings change instead of rebuilding it per query. Pure: no I/O, no clock; ties break on the key, so the same
documents and query always give the same answer.

Scoring: a query's terms (`_text.terms`: stop words dropped, Snowball stems) are matched against a document's
weighted term frequencies (the name counts 4x, the description 1x, other text 0.5x) by BM25. Each query term
scores the better of its own match and its stand-in's (`_related`: a word the catalog keeps writing beside it,
weighed down), so "compose release notes" finds the skill that says "draft" and never "compose". A query that is
a document's whole name (ignoring case, spaces and hyphens) puts that document first.

Speed: each term's postings are kept with their BM25 impact; a frequent term (in more than `_TOP` documents) is
scanned only over its `_TOP` highest-impact documents (kept sorted, re-sorted only after it changes), and the best
candidates are then re-scored exactly from each document's own terms. A query costs O(rare postings + _TOP x
frequent terms), not O(catalog); stand-ins are learned from at most `_RELATED_BUDGET` documents a query and
remembered until the index changes. Indexing remembers each word's term (a catalog repeats its words; bounded),
and memory is kept small: 32-bit ids in arrays, no per-name set for the usual one skill per name
(`python -m bench.search` prints bytes a skill at 100,000 generated skills).

    index = SearchIndex()
    index.put(Document(("docs", "skill://pdf/SKILL.md"), "pdf", "Fill and merge PDF files"))
    index.search("merge pdfs")   # [SearchHit(key=("docs", "skill://pdf/SKILL.md"), score=...)]
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from skillwire.search._related import MAX_DOCUMENTS, RELATED_WEIGHT, SUPPORT, stand_ins
from skillwire.search._text import STOP_WORDS, Document, name_key, stem, terms, words

NAME_WEIGHT = 4.0
DESCRIPTION_WEIGHT = 1.0
OTHER_WEIGHT = 0.5
EXACT_NAME_BONUS = 1_000.0  # more than any BM25 score: an exact name match comes first
_K1 = 1.2
_B = 0.75
_TOP = 2_000  # postings scanned per frequent term
_RESCORE = 4  # candidates re-scored exactly: limit x this
_WORDS_REMEMBERED = 200_000  # distinct words whose term id an index remembers (bounds memory on hostile text)
_RELATED_BUDGET = 100_000  # terms a query may read to learn its terms' stand-ins (rarest terms first)
_RELATED_REMEMBERED = 20_000  # terms whose stand-ins are remembered between changes
MAX_QUERY_TERMS = 32  # a longer query keeps its first 32 distinct terms (a conversation used as a query)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: the document's key and its score (higher is better)."""

    key: Hashable
    score: float


def _ids(named: int | tuple[int, ...]) -> tuple[int, ...]:
    return (named,) if isinstance(named, int) else named


@dataclass(slots=True)
class _Term:
    """A term's postings: document ids and their BM25 impacts (without idf), and a cached best-first order."""

    docs: array[int]
    impacts: array[float]
    live: int = 0
    order: tuple[array[int], array[float]] | None = None  # the best postings, best first; None: stale


@dataclass(frozen=True, slots=True)
class _Doc:
    key: Hashable
    name: str
    length: float  # the sum of its weighted term frequencies
    term_ids: array[int]  # one per distinct term (32-bit ids: 4 bytes each)
    tfs: array[float]  # weighted frequency of each, in the same order


class SearchIndex:
    """An incremental BM25 index over skill listings (see the module docstring)."""

    _words_remembered = _WORDS_REMEMBERED

    def __init__(self, documents: Iterable[Document] = ()) -> None:
        self._ids: dict[Hashable, int] = {}
        self._docs: dict[int, _Doc] = {}
        self._term_ids: dict[str, int] = {}
        self._terms: list[_Term] = []
        self._names: dict[str, int | tuple[int, ...]] = {}  # name key -> its document (a tuple when several)
        self._word_terms: dict[str, int] = {}  # a word as written -> its term id (-1: a stop word)
        self._term_names: list[str] = []  # term id -> the term
        self._related: dict[int, tuple[int, tuple[tuple[int, float], ...] | None]] = {}  # term -> cost, stand-ins
        self._next = 0
        self._length_sum = 0.0
        self._avg_used = 0.0  # the average length the stored impacts were computed with
        self.update(documents)

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._ids

    def put(self, document: Document) -> None:
        """Index (or re-index) one document under its key."""
        self.update([document])

    def update(self, documents: Iterable[Document]) -> None:
        """Index (or re-index) several documents; the impacts are weighed once for all of them."""
        prepared: list[_Doc] = []
        term_ids = self._term_ids_of
        for document in documents:
            self.remove(document.key)
            weighted: dict[int, float] = {}
            for text, weight in (
                (document.name, NAME_WEIGHT),
                (document.description, DESCRIPTION_WEIGHT),
                (document.other, OTHER_WEIGHT),
            ):
                for found in term_ids(text):
                    weighted[found] = weighted.get(found, 0.0) + weight
            length = sum(weighted.values())
            self._length_sum += length
            ids = array("i", weighted.keys())
            prepared.append(_Doc(document.key, name_key(document.name), length, ids, array("f", weighted.values())))
        if not prepared:
            return
        self._related.clear()  # stand-ins follow the catalog
        average = self._length_sum / (len(self._docs) + len(prepared))
        drifted = not self._avg_used or abs(average - self._avg_used) > 0.25 * self._avg_used
        if drifted:
            self._avg_used = average
        for doc in prepared:
            doc_id = self._next
            self._next += 1
            self._ids[doc.key] = doc_id
            self._docs[doc_id] = doc
            same = self._names.get(doc.name)
            self._names[doc.name] = doc_id if same is None else (*_ids(same), doc_id)
            if not drifted:
                self._post(doc_id, doc)
        if drifted:
            self._reweigh()  # the collection changed shape: every impact follows the new average length

    def remove(self, key: Hashable) -> bool:
        """Drop `key`'s document; False if it was not indexed."""
        doc_id = self._ids.pop(key, None)
        if doc_id is None:
            return False
        doc = self._docs.pop(doc_id)
        self._related.clear()
        self._length_sum -= doc.length
        others = tuple(other for other in _ids(self._names[doc.name]) if other != doc_id)
        if not others:
            del self._names[doc.name]
        else:
            self._names[doc.name] = others[0] if len(others) == 1 else others
        for term_id in doc.term_ids:
            entry = self._terms[term_id]
            entry.live -= 1
            entry.order = None
            if entry.live * 2 < len(entry.docs):  # mostly dead: compact
                self._compact(entry)
        return True

    def keys(self) -> list[Hashable]:
        """Every indexed key, in the order first indexed."""
        return [doc.key for doc in self._docs.values()]

    def search(self, query: str, limit: int = 10) -> list[SearchHit]:
        """The `limit` best documents for `query`, best first (ties: by key); [] for a query with no terms."""
        if limit <= 0 or not self._docs:
            return []
        asked = [
            (term_id, self._idf(self._terms[term_id].live))
            for term in list(dict.fromkeys(terms(query)))[:MAX_QUERY_TERMS]
            if (term_id := self._term_ids.get(term)) is not None and self._terms[term_id].live
        ]
        uses = self._uses(asked)
        named = self._names.get(name_key(query)) if name_key(query) else None
        exact = set(_ids(named)) if named is not None else set()
        scores: dict[int, float] = dict.fromkeys(exact, 0.0)
        get, alive = scores.get, self._docs
        for term_id, slots in uses.items():
            weight = sum(w for _, w in slots)  # at least its share of the exact score below: a bound to shortlist by
            entry = self._terms[term_id]
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
            doc = self._docs[doc_id]
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

    def stand_ins(self, term: str) -> list[tuple[str, float]]:
        """The terms standing in for `term` (a term as `terms` gives it), best first, with their shares."""
        term_id = self._term_ids.get(term)
        if term_id is None:
            return []
        return [(self._term_names[other], share) for other, share in self._stand_ins_of(term_id, _RELATED_BUDGET)[1]]

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
        for slot in sorted(range(len(asked)), key=lambda i: (self._terms[asked[i][0]].live, i)):
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

        A term in too few or too many documents has none and costs nothing. Remembered until the index changes.
        """
        entry, docs = self._terms[term_id], self._docs
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
            terms_ = self._terms
            found = stand_ins(len(held), together, lambda t: terms_[t].live, len(docs), self._term_names.__getitem__)
        if len(self._related) >= _RELATED_REMEMBERED:
            self._related.clear()
        self._related[term_id] = (cost, found)
        return cost, found or ()

    def _impact(self, tf: float, length: float) -> float:
        return tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * length / self._avg_used))

    def _idf(self, df: int) -> float:
        n = len(self._docs)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

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
            found = self._term_ids[term] = len(self._terms)
            self._terms.append(_Term(array("i"), array("f")))
            self._term_names.append(term)
        return found

    def _post(self, doc_id: int, doc: _Doc) -> None:
        k1_plus, norm = _K1 + 1, _K1 * (1 - _B + _B * doc.length / self._avg_used)  # BM25's tf part, inlined
        all_terms = self._terms
        for term_id, tf in zip(doc.term_ids, doc.tfs, strict=True):
            entry = all_terms[term_id]
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
        keep = [i for i, doc_id in enumerate(entry.docs) if doc_id in self._docs]
        entry.docs = array("i", [entry.docs[i] for i in keep])
        entry.impacts = array("f", [entry.impacts[i] for i in keep])
        entry.order = None

    def _reweigh(self) -> None:
        """Rebuild every posting with impacts for the current average length (when it drifts by a quarter)."""
        for entry in self._terms:
            entry.docs, entry.impacts, entry.live, entry.order = array("i"), array("f"), 0, None
        for doc_id, doc in self._docs.items():
            self._post(doc_id, doc)
