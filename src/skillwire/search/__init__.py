"""Relevance search over skill listings: BM25 with field weights, stemming, stand-ins, an exact-name match first.

`_text` turns text and skills into terms and documents, `_related` decides which word stands in for another,
`_index` holds the incremental index. Everything a host or server needs is importable from here.
"""

from skillwire.search._index import (
    DESCRIPTION_WEIGHT,
    EXACT_NAME_BONUS,
    MAX_QUERY_TERMS,
    NAME_WEIGHT,
    OTHER_WEIGHT,
    SearchHit,
    SearchIndex,
)
from skillwire.search._related import RELATED_WEIGHT
from skillwire.search._text import OTHER_CHARS, STOP_WORDS, Document, name_key, skill_document, terms

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
    "name_key",
    "skill_document",
    "terms",
]
