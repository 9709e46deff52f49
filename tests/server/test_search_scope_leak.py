"""`search_skills` under `--scopes` ranks a caller's skills as if the hidden ones did not exist (issue 19, hole 3).

Two real `skillwire serve --http --token-file --scopes --search-tool` processes: `full` serves the billing skills a
scoped caller may see plus thousands of skills hidden from it; `visible` serves the billing skills alone. Whatever a
billing caller asks, both must answer the same bytes: a hidden skill's words, document frequencies, lengths and the
stand-ins learned from it must not reach the caller's scores, its shortlist or whether it gets an answer at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import HttpServer, http_server, stateless_post
from tests.support.skills import write_skill

BILLING = "billing-token-0123456789ab"
VISIBLE = {
    "acme/billing/refunds": "Refund a customer's charge and post the credit to the ledger",
    "acme/billing/invoices": (
        "Create and send invoices to customers, then file a monthly report of what was billed, paid and still open "
        "for the finance team and the auditors"
    ),
    "acme/billing/statements": (
        "Monthly account statements for customers, one report per account with every charge, refund, fee and "
        "adjustment of the period, sent as a PDF to the account owner"
    ),
}
HIDDEN_ONLY_WORD = "zanzibar"  # in two hidden skills beside "ledger", which one visible skill also says
COMMON = 2_200  # hidden skills saying "monthly report customers": more than the postings a frequent term scans


def _write_visible(root: Path) -> None:
    for path, description in VISIBLE.items():
        write_skill(root, path, description=description)


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("search-scope-leak")
    (base / "tokens.txt").write_text(f"{BILLING} subject=billing\nci-token-0123456789abcdef subject=ci\n")
    (base / "tokens.txt").chmod(0o600)
    (base / "scopes.toml").write_text(
        '[[grant]]\nsubject = "billing"\nskills = ["acme/billing/**"]\n\n[[grant]]\nsubject = "ci"\nskills = ["**"]\n'
    )
    full, visible = base / "full", base / "visible"
    _write_visible(full)
    _write_visible(visible)
    write_skill(full, "zanzibar-sync", description="Sync the Zanzibar ledger with the warehouse")
    write_skill(full, "zanzibar-audit", description="Audit the zanzibar ledger each quarter")
    for i in range(COMMON):  # short, with "report" in the name: every frequent term's best postings are these
        write_skill(full, f"reports/report-{i:04d}", description=f"Monthly report for customers, region {i}")
    return base


def _serve(config: Path, root: str) -> Iterator[HttpServer]:
    options = ("--search-tool", "--token-file", str(config / "tokens.txt"), "--scopes", str(config / "scopes.toml"))
    with http_server([config / root], *options) as server:
        yield server


@pytest.fixture(scope="module")
def full(config: Path) -> Iterator[HttpServer]:
    yield from _serve(config, "full")


@pytest.fixture(scope="module")
def visible(config: Path) -> Iterator[HttpServer]:
    yield from _serve(config, "visible")


def search(server: HttpServer, query: str, token: str = BILLING, limit: int = 10) -> dict[str, Any]:
    """One stateless `tools/call search_skills` with a bearer token; the tool's result (structured and text)."""
    params = {"name": "search_skills", "arguments": {"query": query, "limit": limit}}
    response = stateless_post(server.url, "tools/call", params, token=token)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


def test_a_scoped_callers_search_scores_are_the_same_with_and_without_the_hidden_skills(
    full: HttpServer, visible: HttpServer
) -> None:
    """skillwire choice (the scopes promise: a hidden skill is as if absent): scores, order and results are equal."""
    for query in ("refund ledger", "invoices", "monthly report for customers", "account statements pdf", "refunds"):
        with_hidden, without = search(full, query), search(visible, query)
        assert without["structuredContent"]["skills"], f"{query!r} finds nothing even without hidden skills"
        assert with_hidden == without, f"{query!r}: hidden skills changed what the billing caller gets"


def test_a_word_only_hidden_skills_use_answers_exactly_like_an_unknown_word(full: HttpServer) -> None:
    """skillwire choice: no yes/no oracle. A hidden skill's word teaches no stand-in the caller's search can use."""
    unknown = search(full, "qwxzptlv")
    assert unknown["structuredContent"] == {"skills": []}
    assert search(full, HIDDEN_ONLY_WORD) == unknown
    assert search(full, f"{HIDDEN_ONLY_WORD} sync") == unknown  # "sync" too is said by hidden skills only
    everything = search(full, HIDDEN_ONLY_WORD, token="ci-token-0123456789abcdef")["structuredContent"]["skills"]
    assert {s["uri"] for s in everything} >= {"skill://zanzibar-sync/SKILL.md"}  # it is a real word


def test_a_scoped_caller_finds_its_skills_when_their_words_are_common_across_a_large_hidden_catalog(
    full: HttpServer,
) -> None:
    """skillwire choice (issue 19, "Also"): the shortlist is cut among the caller's skills, not the whole catalog."""
    found = [s["uri"] for s in search(full, "monthly report for customers")["structuredContent"]["skills"]]
    assert set(found[:2]) == {"skill://acme/billing/statements/SKILL.md", "skill://acme/billing/invoices/SKILL.md"}


def test_a_scoped_callers_scores_follow_its_own_skills_as_the_folder_changes_and_never_the_hidden_ones(
    config: Path, tmp_path: Path
) -> None:
    """skillwire choice: hot reload reaches the caller's ranking (its view follows the catalog), hidden edits do not."""
    root = tmp_path / "skills"
    _write_visible(root)
    options = ("--search-tool", "--token-file", str(config / "tokens.txt"), "--scopes", str(config / "scopes.toml"))
    with http_server([root], *options) as server:
        before = search(server, "ledger credit")
        assert [s["uri"] for s in before["structuredContent"]["skills"]] == ["skill://acme/billing/refunds/SKILL.md"]
        write_skill(root, "vault/ledgers", description="Ledger credit ledger credit ledger")
        _until(
            lambda: len(search(server, "ledger", token="ci-token-0123456789abcdef")["structuredContent"]["skills"]) == 2
        )
        assert search(server, "ledger credit") == before
        write_skill(root, "acme/billing/credits", description="Issue a credit note and book it in the ledger")
        _until(lambda: len(search(server, "ledger credit")["structuredContent"]["skills"]) == 2)
        assert search(server, "ledger credit") != before


def _until(done: Callable[[], bool], timeout: float = 15.0) -> None:
    """Wait for the server's watcher to publish a change (a freeze bound, not a speed assertion)."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "the server did not follow the served folder"
        time.sleep(0.1)
