"""Search views: an index as someone who may see only some documents ranks as if the others were never indexed."""

from __future__ import annotations

import random
from collections.abc import Hashable
from typing import Any

import pytest

from skillwire.core.search import Document, SearchIndex, SearchView, _related
from skillwire.core.search._ranking import _TOP

WORDS = [f"w{i}" for i in range(60)]
QUERIES = ["w1 w2", "w3", "w5 w7 w11", "w13 w40", "alpha", "tool-3", "w2 beta", "w59 w58 w57 w56", "zanzibar"]


def catalog(seed: int, size: int) -> list[Document]:
    """Random documents with planted pairs (alpha beside beta in most that say it) so stand-ins are learned."""
    rng = random.Random(seed)
    docs = []
    for i in range(size):
        words = rng.choices(WORDS[: 10 + i % 50], k=rng.randint(3, 12))
        if rng.random() < 0.03:
            words += ["alpha", "beta"] if rng.random() < 0.8 else ["alpha"]
        docs.append(Document(f"k{i:05d}", f"tool-{i % 40}", " ".join(words), "extra words" if i % 7 == 0 else ""))
    return docs


def visible(key: Hashable) -> bool:
    return int(str(key)[1:]) % 3 != 0


def ranked(searcher: SearchIndex | SearchView, query: str) -> list[tuple[Hashable, float]]:
    return [(hit.key, hit.score) for hit in searcher.search(query, 10)]


def test_a_view_ranks_exactly_as_an_index_of_the_documents_it_may_see() -> None:
    """skillwire choice (scopes): same keys, same scores, same stand-ins as an index built from those alone."""
    docs = catalog(1, 600)
    docs += [Document(f"z{i}", "hidden", "zanzibar alpha beta") for i in range(3)]  # hidden: "z" is no number
    view = SearchIndex(docs).view(lambda key: str(key)[0] == "k" and visible(key))
    alone = SearchIndex([doc for doc in docs if str(doc.key)[0] == "k" and visible(doc.key)])
    for query in QUERIES:
        assert ranked(view, query) == ranked(alone, query), query
    assert view.stand_ins("alpha") == alone.stand_ins("alpha") != []
    assert ranked(SearchIndex(docs), "w1 w2") != ranked(view, "w1 w2")  # the hidden documents do change scores
    assert view.search("zanzibar") == [] == view.stand_ins("zanzibar")


def test_a_view_shortlists_among_its_own_documents_when_hidden_ones_crowd_a_frequent_term() -> None:
    """skillwire choice (issue 19 "Also"): past _TOP hidden documents of a term, the view still finds its own."""
    hidden = [Document(f"h{i}", f"report-{i}", "report") for i in range(_TOP + 200)]  # short: the best impacts
    mine = [
        Document(f"m{i}", f"mine-{i}", "a long description that also says report somewhere in it") for i in range(3)
    ]
    view = SearchIndex([*hidden, *mine]).view(lambda key: str(key).startswith("m"))
    assert {hit.key for hit in view.search("report")} == {"m0", "m1", "m2"}


def test_a_view_built_in_steps_ranks_as_one_built_at_once() -> None:
    """Built a few documents at a time (a server yields between steps), the answers are the same."""
    index = SearchIndex(catalog(2, 500))
    stepped, whole = index.view(visible), index.view(visible)
    steps = 0
    while not stepped.build(7):
        steps += 1
    assert steps > 50
    assert stepped.ready
    for query in QUERIES:
        assert ranked(stepped, query) == ranked(whole, query), query


def test_a_view_follows_its_index_as_an_index_of_the_visible_documents_would() -> None:
    """Puts, re-puts and removals after the build reach the view exactly as they reach an index of what it sees."""
    docs = catalog(3, 400)
    index = SearchIndex(docs)
    view = index.view(visible)
    view.build(10_000)
    alone = SearchIndex([doc for doc in docs if visible(doc.key)])
    changes = [*catalog(4, 60)[::2], *(Document(f"k{i:05d}", "new", "w1 w3 alpha") for i in range(400, 420))]
    index.update(changes)
    alone.update([doc for doc in changes if visible(doc.key)])
    for key in ("k00001", "k00002", "k00003", "k00400"):
        index.remove(key)
        alone.remove(key)
    for query in QUERIES:
        assert ranked(view, query) == ranked(alone, query), query


def test_a_view_follows_changes_made_while_it_is_being_built() -> None:
    """A document added or removed between two build steps is ranked or gone once the view is complete."""
    index = SearchIndex(catalog(5, 300))
    view = index.view(visible)
    view.build(100)  # part way through checking which documents it may see
    index.put(Document("k00301", "fresh-one", "quetzal"))
    index.put(Document("k00300", "fresh-hidden", "quetzal"))  # 300 % 3 == 0: not visible
    index.remove("k00001")
    view.build(250)  # part way through ranking them
    index.put(Document("k00302", "fresh-two", "quetzal"))
    index.remove("k00002")
    while not view.build(50):
        pass
    assert {hit.key for hit in view.search("quetzal")} == {"k00301", "k00302"}
    found = {hit.key for query in QUERIES for hit in view.search(query, 1_000)}
    assert "k00001" not in found
    assert "k00002" not in found
    assert all(visible(key) for key in found)
    assert len(view) == len(list(filter(visible, index.keys())))


def test_a_view_nobody_holds_is_no_longer_kept_current() -> None:
    """An index keeps its views weakly: a dropped view costs nothing at the next change."""
    index = SearchIndex(catalog(6, 50))
    view = index.view(visible)
    assert len(index._views) == 1
    del view
    index.put(Document("k99999", "late", "w1"))
    assert len(index._views) == 0


def test_a_built_view_learns_each_stand_in_once_until_its_documents_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """skillwire choice (speed): asking again reuses what the view learned; a change to what it sees forgets it."""
    learned: list[int] = []
    real = _related.stand_ins

    def counted(*args: Any) -> tuple[tuple[int, float], ...]:
        learned.append(1)
        return real(*args)

    monkeypatch.setattr("skillwire.core.search._ranking.stand_ins", counted)  # the name the ranking calls
    index = SearchIndex(catalog(7, 400))
    view = index.view(visible)
    view.search("alpha w1")
    first = len(learned)
    assert first > 0
    view.search("alpha w1")
    view.search("w1 alpha")
    assert len(learned) == first
    index.put(Document("k00401", "new", "alpha beta"))
    view.search("alpha w1")
    assert len(learned) > first
