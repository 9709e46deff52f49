"""The search index: ranking, stemming, names, incremental changes, determinism and hostile queries."""

from __future__ import annotations

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from skillwire.search import _TOP, MAX_QUERY_TERMS, Document, SearchIndex, name_key, terms

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
    """BM25 as the module docstring defines it, computed directly (the reference for small catalogs)."""
    index = SearchIndex(docs)
    wanted = list(dict.fromkeys(terms(query)))
    weighted = []
    for doc in docs:
        tf: dict[str, float] = {}
        for text, weight in ((doc.name, 4.0), (doc.description, 1.0), (doc.other, 0.5)):
            for term in terms(text):
                tf[term] = tf.get(term, 0.0) + weight
        weighted.append(tf)
    average = sum(sum(tf.values()) for tf in weighted) / len(docs)
    scores = {}
    for doc, tf in zip(docs, weighted, strict=True):
        length = sum(tf.values())
        score = 0.0
        for term in wanted:
            df = sum(1 for other in weighted if term in other)
            if term in tf:
                idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
                score += idf * tf[term] * 2.2 / (tf[term] + 1.2 * (0.25 + 0.75 * length / average))
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
