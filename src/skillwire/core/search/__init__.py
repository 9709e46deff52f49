"""Relevance search over skill listings: BM25 with field weights, stemming, stand-ins, an exact-name match first.

`_text` turns text and skills into terms and documents, `_related` decides which word stands in for another,
`_ranking` scores one set of documents by BM25, `_index` holds the incremental index and its views (what one caller
may see, ranked as if nothing else were indexed). Everything a host or server needs is importable from here.
"""

from skillwire.core.search._index import (
    DESCRIPTION_WEIGHT,
    MAX_QUERY_TERMS,
    NAME_WEIGHT,
    OTHER_WEIGHT,
    SearchIndex,
    SearchView,
)
from skillwire.core.search._ranking import EXACT_NAME_BONUS, SearchHit
from skillwire.core.search._related import RELATED_WEIGHT
from skillwire.core.search._text import OTHER_CHARS, STOP_WORDS, Document, name_key, skill_document, terms

__all__ = [
    "DESCRIPTION_WEIGHT",
    "EXACT_NAME_BONUS",
    "MAX_QUERY_TERMS",
    "NAME_WEIGHT",
    "OTHER_CHARS",
    "OTHER_WEIGHT",
    "RELATED_WEIGHT",
    "STOP_WORDS",
    "Document",
    "SearchHit",
    "SearchIndex",
    "SearchView",
    "name_key",
    "skill_document",
    "terms",
]
