"""What search reads of text and of a skill: words, stop words, stems, name keys, and the indexed document."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import snowballstemmer

OTHER_CHARS = 2_000  # other frontmatter text indexed per skill, at most
_WORD = re.compile(r"[^\W_]+")
_STOP_TEXT = """a an and are as at be by can do does for from how i if in into is it its me my of on or our should so
that the their them then there these this to use used uses using via was we what when where which while who why will
with you your"""
STOP_WORDS = frozenset(_STOP_TEXT.split())


@dataclass(frozen=True, slots=True)
class Document:
    """What is indexed of one skill: listing data only (the spec forbids fetching content ahead of need)."""

    key: Hashable
    name: str
    description: str
    other: str = ""


@lru_cache(maxsize=1)
def _stemmer() -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """One case-folded word's term (Snowball English); numbers, versions, codes and short words stay as they are."""
    if len(word) <= 3 or not word.isalpha():  # no English suffix to strip
        return word
    found: str = _stemmer().stemWord(word)
    return found


def terms(text: str) -> list[str]:
    """The index terms of `text`: case-folded words, stop words dropped, each stemmed (repeats kept)."""
    return [stem(word) for word in words(text) if word not in STOP_WORDS]


def words(text: str) -> list[str]:
    """`text`'s words, case-folded: runs of letters and digits (so `pdf-processing` is `pdf` and `processing`)."""
    folded = unicodedata.normalize("NFKC", text).casefold() if not text.isascii() else text.lower()
    return _WORD.findall(folded)


def name_key(text: str) -> str:
    """`text` as a name is compared: case-folded letters and digits only (`PDF Processing` = `pdf-processing`)."""
    return "".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def skill_document(key: Hashable, uri: str, name: str, description: str, frontmatter: Mapping[str, Any]) -> Document:
    """A skill as search indexes it: name, description, and as other text the words of its path (from its SKILL.md
    `uri`) and the other string values of its frontmatter (metadata values, compatibility, tags, ...), bounded."""
    other = [uri.split("://", 1)[-1].removesuffix("SKILL.md"), *_strings(frontmatter, skip=("name", "description"))]
    return Document(key, name, description, " ".join(other)[:OTHER_CHARS])


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
