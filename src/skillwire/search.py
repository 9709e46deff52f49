"""Relevance search over skill listings: BM25 with field weights, stemming, and an exact-name match first.

A `SearchIndex` holds documents (a key, a name, a description, other text) and answers `search(query, limit)`
with the best keys by score. It changes one document at a time (`put`, `remove`), so a host keeps it current as
listings change instead of rebuilding it per query. Pure: no I/O, no clock; ties break on the key, so the same
documents and query always give the same answer.

Scoring: words are case-folded, split on anything that is not a letter or digit (so `pdf-processing` is `pdf` and
`processing`), stripped of common English stop words and stemmed (Snowball, so "invoices" finds "invoice"). A
document's score is BM25 over its weighted term frequencies (the name counts 4x, the description 1x, other text
0.5x). A query that is a document's whole name (ignoring case, spaces and hyphens) puts that document first.

Speed: each term's postings are kept with their BM25 impact; a frequent term (in more than `_TOP` documents) is
scanned only over its `_TOP` highest-impact documents (kept sorted, re-sorted only after it changes), and the best
candidates are then re-scored exactly from each document's own terms. A query costs O(rare postings + _TOP x
frequent terms), not O(catalog).

    index = SearchIndex()
    index.put(("docs", "skill://pdf/SKILL.md"), name="pdf", description="Fill and merge PDF files")
    index.search("merge pdfs")   # [SearchHit(key=("docs", "skill://pdf/SKILL.md"), score=...)]
"""

from __future__ import annotations

import heapq
import math
import re
import unicodedata
from array import array
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import snowballstemmer

NAME_WEIGHT = 4.0
DESCRIPTION_WEIGHT = 1.0
OTHER_WEIGHT = 0.5
EXACT_NAME_BONUS = 1_000.0  # more than any BM25 score: an exact name match comes first
_K1 = 1.2
_B = 0.75
_TOP = 2_000  # postings scanned per frequent term
_RESCORE = 4  # candidates re-scored exactly: limit x this
MAX_QUERY_TERMS = 32  # a longer query keeps its first 32 distinct terms (a conversation used as a query)
_WORD = re.compile(r"[^\W_]+")
_STOP_TEXT = """a an and are as at be by can do does for from how i if in into is it its me my of on or our should so
that the their them then there these this to use used uses using via was we what when where which while who why will
with you your"""
STOP_WORDS = frozenset(_STOP_TEXT.split())


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: the document's key and its score (higher is better)."""

    key: Hashable
    score: float


@lru_cache(maxsize=1)
def _stemmer() -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    if len(word) <= 3 or not word.isalpha():  # numbers, versions, codes: no English suffix to strip
        return word
    stem: str = _stemmer().stemWord(word)
    return stem


def terms(text: str) -> list[str]:
    """The index terms of `text`: case-folded words, stop words dropped, each stemmed (repeats kept)."""
    folded = unicodedata.normalize("NFKC", text).casefold() if not text.isascii() else text.lower()
    return [_stem(word) for word in _WORD.findall(folded) if word not in STOP_WORDS]


def name_key(text: str) -> str:
    """`text` as a name is compared: case-folded letters and digits only (`PDF Processing` = `pdf-processing`)."""
    return "".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


@dataclass(slots=True)
class _Term:
    """A term's postings: document ids and their BM25 impacts (without idf), and a cached best-first order."""

    docs: array[int]
    impacts: array[float]
    live: int = 0
    order: tuple[array[int], array[float]] | None = None  # the best postings, best first; None: stale


def skill_document(key: Hashable, uri: str, name: str, description: str, frontmatter: Mapping[str, Any]) -> Document:
    """A skill as search indexes it: name, description, and as other text the words of its path (from its SKILL.md
    `uri`) and the other string values of its frontmatter (metadata values, compatibility, tags, ...), bounded."""
    other = [uri.split("://", 1)[-1].removesuffix("SKILL.md"), *_strings(frontmatter, skip=("name", "description"))]
    return Document(key, name, description, " ".join(other)[:OTHER_CHARS])


OTHER_CHARS = 2_000  # other frontmatter text indexed per skill, at most


def _strings(value: Any, skip: Sequence[str] = (), depth: int = 0) -> list[str]:
    """The string values in frontmatter, depth-first, at most four levels down."""
    if isinstance(value, str):
        return [value]
    if depth > 3:
        return []
    if isinstance(value, Mapping):
        return [text for key, item in value.items() if key not in skip for text in _strings(item, depth=depth + 1)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _strings(item, depth=depth + 1)]
    return []


@dataclass(frozen=True, slots=True)
class _Doc:
    key: Hashable
    name: str
    length: float  # the sum of its weighted term frequencies
    term_ids: array[int]  # one per distinct term
    tfs: array[float]  # weighted frequency of each, in the same order


@dataclass(frozen=True, slots=True)
class Document:
    """What is indexed of one skill: listing data only (the spec forbids fetching content ahead of need)."""

    key: Hashable
    name: str
    description: str
    other: str = ""


class SearchIndex:
    """An incremental BM25 index over skill listings (see the module docstring)."""

    def __init__(self, documents: Iterable[Document] = ()) -> None:
        self._ids: dict[Hashable, int] = {}
        self._docs: dict[int, _Doc] = {}
        self._term_ids: dict[str, int] = {}
        self._terms: list[_Term] = []
        self._names: dict[str, set[int]] = {}
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
        term_id = self._term_id
        for document in documents:
            self.remove(document.key)
            weighted: dict[int, float] = {}
            for text, weight in (
                (document.name, NAME_WEIGHT),
                (document.description, DESCRIPTION_WEIGHT),
                (document.other, OTHER_WEIGHT),
            ):
                for term in terms(text):
                    found = term_id(term)
                    weighted[found] = weighted.get(found, 0.0) + weight
            length = sum(weighted.values())
            self._length_sum += length
            ids = array("l", weighted.keys())
            prepared.append(_Doc(document.key, name_key(document.name), length, ids, array("f", weighted.values())))
        if not prepared:
            return
        average = self._length_sum / (len(self._docs) + len(prepared))
        drifted = not self._avg_used or abs(average - self._avg_used) > 0.25 * self._avg_used
        if drifted:
            self._avg_used = average
        for doc in prepared:
            doc_id = self._next
            self._next += 1
            self._ids[doc.key] = doc_id
            self._docs[doc_id] = doc
            self._names.setdefault(doc.name, set()).add(doc_id)
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
        self._length_sum -= doc.length
        same_name = self._names[doc.name]
        same_name.discard(doc_id)
        if not same_name:
            del self._names[doc.name]
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
        wanted = list(dict.fromkeys(terms(query)))[:MAX_QUERY_TERMS]
        weights = {
            term_id: self._idf(self._terms[term_id].live)
            for term in wanted
            if (term_id := self._term_ids.get(term)) is not None and self._terms[term_id].live
        }
        exact = self._names.get(name_key(query), set()) if name_key(query) else set()
        scores: dict[int, float] = dict.fromkeys(exact, 0.0)
        get, alive = scores.get, self._docs
        for term_id, idf in weights.items():
            entry = self._terms[term_id]
            docs, impacts = self._best(entry)
            if entry.live == len(entry.docs):  # no removed document in this term's postings
                for doc_id, impact in zip(docs, impacts, strict=True):
                    scores[doc_id] = get(doc_id, 0.0) + idf * impact
            else:
                for doc_id, impact in zip(docs, impacts, strict=True):
                    if doc_id in alive:
                        scores[doc_id] = get(doc_id, 0.0) + idf * impact
        if not scores:
            return []
        shortlist = heapq.nlargest(limit * _RESCORE + len(exact), scores.items(), key=lambda item: item[1])
        hits = []
        for doc_id, _ in shortlist:  # exact scores: a frequent term's share may lie beyond its scanned top
            doc = self._docs[doc_id]
            score = sum(
                weights[t] * self._impact(tf, doc.length)
                for t, tf in zip(doc.term_ids, doc.tfs, strict=True)
                if t in weights
            )
            hits.append(SearchHit(doc.key, score + (EXACT_NAME_BONUS if doc_id in exact else 0.0)))
        hits.sort(key=lambda hit: (-hit.score, repr(hit.key)))
        return hits[:limit]

    # -- internals -------------------------------------------------------------------------------------------------

    def _impact(self, tf: float, length: float) -> float:
        return tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * length / self._avg_used))

    def _idf(self, df: int) -> float:
        n = len(self._docs)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def _term_id(self, term: str) -> int:
        found = self._term_ids.get(term)
        if found is None:
            found = self._term_ids[term] = len(self._terms)
            self._terms.append(_Term(array("l"), array("f")))
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
            entry.order = (array("l", [entry.docs[i] for i in best]), array("f", [impacts[i] for i in best]))
        return entry.order

    def _compact(self, entry: _Term) -> None:
        keep = [i for i, doc_id in enumerate(entry.docs) if doc_id in self._docs]
        entry.docs = array("l", [entry.docs[i] for i in keep])
        entry.impacts = array("f", [entry.impacts[i] for i in keep])
        entry.order = None

    def _reweigh(self) -> None:
        """Rebuild every posting with impacts for the current average length (when it drifts by a quarter)."""
        for entry in self._terms:
            entry.docs, entry.impacts, entry.live, entry.order = array("l"), array("f"), 0, None
        for doc_id, doc in self._docs.items():
            self._post(doc_id, doc)
