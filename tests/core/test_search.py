"""The search index: ranking, stemming, names, incremental changes, determinism and hostile queries."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillwire.core.search import MAX_QUERY_TERMS, Document, SearchIndex, name_key, terms
from skillwire.core.search._ranking import _TOP

CATALOG = [
    Document("pdf", "pdf-processing", "Extract text and tables from PDF files, fill forms, merge documents"),
    Document("invoice", "invoice-generator", "Create an invoice for a customer from an order"),
    Document("review", "code-review", "Review code changes for bugs and style before merging"),
    Document("git", "git-workflow", "Branches, commits and pull requests the team's way"),
    Document("charts", "chart-maker", "Plot data as bar, line and pie charts"),
]


def keys(index: SearchIndex, query: str, limit: int = 10) -> list[object]:
    return [hit.key for hit in index.search(query, limit)]


def test_an_exact_name_match_comes_first_even_when_others_mention_the_words_more() -> None:
    """`code review` is the name of one skill; another that says 'review' three times ranks below it."""
    index = SearchIndex([*CATALOG, Document("noisy", "reviewer-notes", "Review review review the reviews of code")])
    assert keys(index, "code review")[0] == "review"
    assert keys(index, "Code-Review")[0] == "review"
    assert keys(index, "reviewer notes")[0] == "noisy"


def test_a_description_match_ranks_above_an_unrelated_skill() -> None:
    index = SearchIndex(CATALOG)
    assert keys(index, "fill a form in a pdf")[0] == "pdf"
    assert keys(index, "bar plot") == ["charts"]
    assert "git" not in keys(index, "merge pdf documents")[:1]


def test_stemming_finds_plural_and_other_forms() -> None:
    """'invoices' finds 'invoice', 'charting' finds 'charts', 'merged' finds 'merge'."""
    index = SearchIndex(CATALOG)
    assert keys(index, "invoices") == ["invoice"]
    assert keys(index, "charting")[0] == "charts"
    assert "pdf" in keys(index, "merged")


def test_names_split_on_hyphens() -> None:
    index = SearchIndex(CATALOG)
    assert keys(index, "workflow") == ["git"]
    assert terms("pdf-processing") == ["pdf", "process"]
    assert name_key("PDF Processing") == name_key("pdf-processing")


def test_a_query_of_stop_words_or_nothing_finds_nothing() -> None:
    index = SearchIndex(CATALOG)
    assert index.search("how do I use the") == []
    assert index.search("") == []
    assert index.search("   ") == []
    assert index.search("pdf", limit=0) == []
    assert SearchIndex().search("pdf") == []


def test_changes_apply_one_document_at_a_time() -> None:
    """put, re-put with new text, and remove change the results without a rebuild."""
    index = SearchIndex(CATALOG)
    index.put(Document("deploy", "kubernetes-deploy", "Roll out services to a cluster"))
    assert keys(index, "kubernetes") == ["deploy"]
    index.put(Document("deploy", "helm-charts", "Package services as Helm charts"))
    assert keys(index, "kubernetes") == []
    assert set(keys(index, "charts")) == {"deploy", "charts"}
    assert index.remove("deploy") is True
    assert index.remove("deploy") is False
    assert keys(index, "helm") == []
    assert len(index) == len(CATALOG)
    assert "deploy" not in index


def test_the_same_documents_and_query_give_the_same_order_ties_broken_by_key() -> None:
    twins = [Document(f"k{i}", f"twin-{i}", "identical description of a tool") for i in (3, 1, 2)]
    first = keys(SearchIndex(twins), "identical tool")
    again = keys(SearchIndex(list(reversed(twins))), "identical tool")
    assert first == again == ["k1", "k2", "k3"]


def test_a_hostile_query_is_bounded() -> None:
    """A megabyte of words or control characters costs the first MAX_QUERY_TERMS distinct terms, no error."""
    index = SearchIndex(CATALOG)
    huge = " ".join(f"word{i}" for i in range(200_000)) + " pdf"
    assert index.search(huge) == []  # 'pdf' is past the first MAX_QUERY_TERMS terms
    assert keys(index, "\x1b[31mpdf\x00 \u202efiles")[0] == "pdf"
    assert len(list(dict.fromkeys(terms(huge)))[:MAX_QUERY_TERMS]) == MAX_QUERY_TERMS


def test_a_frequent_term_still_finds_the_document_where_it_matters_most() -> None:
    """Past _TOP documents a term is scanned by impact: the one document that is all about it still comes first."""
    rng = random.Random(7)
    filler = ["alpha", "beta", "gamma", "delta", "omega", "sigma"]
    docs = [Document(i, f"tool-{i}", " ".join(rng.choices(filler, k=25)) + " report") for i in range(_TOP * 2)]
    docs.append(Document("best", "report", "report report"))
    index = SearchIndex(docs)
    assert keys(index, "report", 1) == ["best"]
    assert keys(index, "report gamma", 5)[0] in {doc.key for doc in docs}


def _brute_force(docs: list[Document], query: str) -> dict[object, float]:
    """BM25 with stand-ins as the module docstrings define them, computed directly (the reference, small catalogs)."""
    index = SearchIndex(docs)
    wanted = list(dict.fromkeys(terms(query)))[:MAX_QUERY_TERMS]
    weighted = []
    for doc in docs:
        tf: dict[str, float] = {}
        for text, weight in ((doc.name, 4.0), (doc.description, 1.0), (doc.other, 0.5)):
            for term in terms(text):
                tf[term] = tf.get(term, 0.0) + weight
        weighted.append(tf)
    average = sum(sum(tf.values()) for tf in weighted) / len(docs)
    present = [term for term in wanted if any(term in tf for tf in weighted)]
    standing = _stand_ins_by_hand(weighted, present)
    scores = {}
    for doc, tf in zip(docs, weighted, strict=True):
        length = sum(tf.values())

        def impact(term: str, tf: dict[str, float] = tf, length: float = length) -> float:
            if term not in tf:
                return 0.0
            return tf[term] * 2.2 / (tf[term] + 1.2 * (0.25 + 0.75 * length / average))

        score = 0.0
        for term in present:
            df = sum(1 for other in weighted if term in other)
            idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
            other, share = standing.get(term, ("", 0.0))
            score += idf * max(impact(term), 0.7 * share * impact(other) if other else 0.0)
        if score:
            scores[doc.key] = score
    assert len(index) == len(docs)
    return scores


WORDS = st.sampled_from(["pdf", "invoice", "review", "chart", "merge", "deploy", "test", "data", "form", "code"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.lists(WORDS, min_size=1, max_size=3), st.lists(WORDS, max_size=12)), min_size=1, max_size=30),
    st.lists(WORDS, min_size=1, max_size=4),
)
def test_scores_equal_plain_bm25_on_small_catalogs(raw: list[tuple[list[str], list[str]]], query: list[str]) -> None:
    """Below _TOP documents per term the index is exact: every score equals BM25 computed directly."""
    docs = [Document(i, "-".join(name) + f"-x{i}", " ".join(desc)) for i, (name, desc) in enumerate(raw)]
    expected = _brute_force(docs, " ".join(query))
    got = {hit.key: hit.score for hit in SearchIndex(docs).search(" ".join(query), limit=len(docs))}
    assert got.keys() == expected.keys()
    for key, score in expected.items():
        assert math.isclose(got[key], score, rel_tol=1e-4), (key, got[key], score)


def test_several_documents_of_one_name_all_come_first_until_each_is_removed() -> None:
    """A name three skills share puts all three first; removing them one by one leaves the others first."""
    same = [Document(f"t{i}", "status", f"status of thing {i}") for i in range(3)]
    index = SearchIndex([*CATALOG, *same, Document("noisy", "reports", "status status status status")])
    assert set(keys(index, "status")[:3]) == {"t0", "t1", "t2"}
    index.remove("t1")
    assert set(keys(index, "Status")[:2]) == {"t0", "t2"}
    index.remove("t0")
    assert keys(index, "status")[0] == "t2"
    index.remove("t2")
    assert keys(index, "status") == ["noisy"]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.lists(WORDS, min_size=1, max_size=3), st.lists(WORDS, max_size=12)), min_size=1, max_size=20),
    st.lists(WORDS, min_size=1, max_size=4),
    st.integers(min_value=0, max_value=6),
)
def test_an_index_that_remembers_few_words_ranks_exactly_as_one_that_remembers_all(
    raw: list[tuple[list[str], list[str]]], query: list[str], remembered: int
) -> None:
    """Past `_WORDS_REMEMBERED` words an index looks terms up word by word: same scores, same order."""
    docs = [Document(i, "-".join(name) + f"-x{i}", " ".join(desc)) for i, (name, desc) in enumerate(raw)]
    full = SearchIndex(docs).search(" ".join(query), limit=len(docs))
    bounded = SearchIndex()
    bounded._words_remembered = remembered  # few words remembered: the rest take the word-by-word path
    bounded.update(docs)
    got = bounded.search(" ".join(query), limit=len(docs))
    assert [hit.key for hit in got] == [hit.key for hit in full]
    assert all(math.isclose(a.score, b.score, rel_tol=1e-4) for a, b in zip(got, full, strict=True))


# -- stand-ins: a word the catalog keeps writing beside a query word counts, weighed down, as that word ----------

_FILLER_WORDS = ["ledger", "roster", "parcel", "ticket", "survey", "budget", "podcast", "webinar", "sprint", "badge"]
_FILLER = [
    Document(
        f"filler-{i:02}",
        f"tool-{i}",
        f"Handle {_FILLER_WORDS[i % 10]} work. Use when the user asks to sort {_FILLER_WORDS[(i * 3) % 10]} items.",
    )
    for i in range(120)
]
# Three skills say how people ask for drafting ("compose"); the release-notes one never does.
_TEACHERS = [
    Document("draft-invoices", "draft-invoices", "Draft invoices. Use when the user asks to compose invoices."),
    Document("draft-contracts", "draft-contracts", "Draft contracts. Use when the user asks to compose contracts."),
    Document("draft-emails", "draft-emails", "Draft emails. Use when the user asks to compose emails."),
]
_RELEASE_NOTES = [
    Document("a-audit", "audit-release-notes", "Audit release notes."),
    Document("b-summarize", "summarize-release-notes", "Summarize release notes."),
    Document("c-draft", "draft-release-notes", "Draft release notes from the merged changes of a version."),
]


def test_a_word_the_catalog_writes_beside_another_stands_in_for_it() -> None:
    """'compose release notes' finds the drafting skill that never says 'compose': the catalog pairs the two words."""
    index = SearchIndex([*_FILLER, *_TEACHERS, *_RELEASE_NOTES])
    assert index.stand_ins("compos") == [("draft", 1.0)]
    assert keys(index, "compose release notes")[0] == "c-draft"
    assert keys(index, "Compose the release notes", 3)[0] == "c-draft"


def test_a_stand_in_never_outranks_the_word_itself() -> None:
    """A skill holding the query word ranks above one holding only its stand-in, all else equal."""
    own = Document("d-compose", "compose-release-notes", "Compose release notes from the merged changes of a version.")
    index = SearchIndex([*_FILLER, *_TEACHERS, *_RELEASE_NOTES, own])
    assert index.stand_ins("compos")[0][0] == "draft"
    assert keys(index, "compose release notes", 2) == ["d-compose", "c-draft"]


def test_stand_ins_follow_the_catalog_as_it_changes() -> None:
    """Learned when the pairing skills arrive, forgotten when they leave, and the ranking follows both ways."""
    index = SearchIndex([*_FILLER, *_RELEASE_NOTES, _TEACHERS[0]])
    assert index.stand_ins("compos") == []  # one skill pairs them: not enough to learn from
    assert keys(index, "compose release notes")[0] != "c-draft"
    index.update(_TEACHERS[1:])
    assert index.stand_ins("compos") == [("draft", 1.0)]
    assert keys(index, "compose release notes")[0] == "c-draft"
    index.remove("draft-emails")
    index.remove("draft-contracts")
    assert index.stand_ins("compos") == []
    assert keys(index, "compose release notes")[0] != "c-draft"


def test_words_that_meet_by_chance_are_not_stand_ins() -> None:
    """A word every other skill uses is no stand-in, however often it sits beside the query word."""
    common = [Document(f"c{i}", f"common-{i}", f"customer thing {i}") for i in range(40)]
    pairs = [Document(f"p{i}", f"tool-p{i}", "customer compose") for i in range(3)]
    index = SearchIndex([*_FILLER, *common, *pairs])
    assert index.stand_ins("compos") == []


def _stand_ins_by_hand(weighted: list[dict[str, float]], present: list[str]) -> dict[str, tuple[str, float]]:
    """Each query term's stand-in as `skillwire.core.search._related` defines it, counted directly."""
    n, chosen = len(weighted), {}
    for term in present:
        holders = [tf for tf in weighted if term in tf]
        if not 2 <= len(holders) <= 500:
            continue
        found = []
        for other in set().union(*holders) - {term}:
            together = sum(1 for tf in holders if other in tf)
            share = together / len(holders)
            lift = share * n / sum(1 for tf in weighted if other in tf)
            if together >= 2 and share >= 0.5 and lift >= 20:
                found.append((-share * math.log(lift), other, share))
        for _, other, share in sorted(found)[:3]:
            if other not in present:
                chosen[term] = (other, share)
                break
    return chosen


_VOCABULARY = [
    f"{stem}{suffix}"
    for stem in (
        "alpha",
        "bravo",
        "delta",
        "gamma",
        "kilo",
        "lima",
        "omega",
        "sierra",
        "tango",
        "zulu",
        "oscar",
        "romeo",
    )
    for suffix in ("", "ton", "ville", "shire", "ford", "dale", "port", "wick", "burg", "stead", "mere", "holm", "by")
]


def _paired_catalog(seed: int, size: int) -> tuple[list[Document], list[str]]:
    """`size` documents of one or two rare words each, some also holding one of four planted word pairs."""
    rng = random.Random(seed)
    pairs = [tuple(rng.sample(_VOCABULARY, 2)) for _ in range(4)]
    docs = []
    for i in range(size):
        words = rng.sample(_VOCABULARY, rng.randint(1, 2)) + (list(rng.choice(pairs)) if rng.random() < 0.1 else [])
        docs.append(Document(i, f"{rng.choice(_VOCABULARY)}-x{i}", " ".join(words) + " common"))
    queries = (
        [" ".join(pair) for pair in pairs[:1]] + [pair[0] for pair in pairs] + [" ".join(rng.sample(_VOCABULARY, 3))]
    )
    return docs, queries


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=80, max_value=200))
def test_scores_with_stand_ins_equal_the_rule_computed_by_hand(seed: int, size: int) -> None:
    """Catalogs with rare words that pair up: every score equals BM25 with stand-ins computed directly."""
    docs, queries = _paired_catalog(seed, size)
    index = SearchIndex(docs)
    for query in queries:
        expected = _brute_force(docs, query)
        got = {hit.key: hit.score for hit in index.search(query, limit=len(docs))}
        assert got.keys() == expected.keys()
        for key, score in expected.items():
            assert math.isclose(got[key], score, rel_tol=1e-4), (query, key, got[key], score)


def test_planted_pairs_give_stand_ins_in_most_paired_catalogs() -> None:
    """The catalogs above do exercise stand-ins (else the property would check plain BM25 only)."""
    learned = sum(
        any(SearchIndex(docs).stand_ins(terms(query)[0]) for query in queries[1:5])
        for docs, queries in (_paired_catalog(seed, 150) for seed in range(20))
    )
    assert learned >= 10


def test_the_stand_in_catalog_agrees_with_the_rule_computed_by_hand() -> None:
    """The hand-made reference sees the same stand-in the index learned, and every score agrees."""
    docs = [*_FILLER, *_TEACHERS, *_RELEASE_NOTES]
    expected = _brute_force(docs, "compose release notes")
    got = {hit.key: hit.score for hit in SearchIndex(docs).search("compose release notes", limit=len(docs))}
    assert "c-draft" in expected
    assert got.keys() == expected.keys()
    assert all(math.isclose(got[key], score, rel_tol=1e-4) for key, score in expected.items())


def test_an_answer_never_depends_on_what_was_asked_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stand-ins are remembered, but a query is charged for learning them either way: a tight budget binds alike."""
    docs = [*_FILLER, *_TEACHERS, *_RELEASE_NOTES]
    cost = sum(len(terms(f"{doc.name} {doc.description}")) for doc in _TEACHERS)  # about what 'compose' costs
    monkeypatch.setattr("skillwire.core.search._ranking._RELATED_BUDGET", cost // 2)
    fresh = SearchIndex(docs).search("compose release notes", 5)
    warmed = SearchIndex(docs)
    monkeypatch.setattr("skillwire.core.search._ranking._RELATED_BUDGET", 10 * cost)
    assert warmed.stand_ins("compos") == [("draft", 1.0)]  # learned and remembered under a loose budget
    warmed.search("compose", 5)
    monkeypatch.setattr("skillwire.core.search._ranking._RELATED_BUDGET", cost // 2)
    assert warmed.search("compose release notes", 5) == fresh
    assert fresh[0].key != "c-draft"  # over budget: no stand-in, as on a fresh index
