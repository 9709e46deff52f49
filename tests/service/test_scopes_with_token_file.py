"""`skillwire serve --token-file --scopes` end to end: the subjects a token file names pick each caller's catalog.

skillwire choice (issue 10, caller-scoped catalogs): the token verifiers and the scopes policy meet in the real
command, so two bearer tokens from one file see two catalogs on every verb and on the catalog page.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest

from skillwire.client.session import SkillsClient
from skillwire.core.errors import AuthenticationRequired
from tests.support.servers import EXAMPLE_SKILLS, HttpServer, http_server

BILLING = "billing-token-0123456789abcdef"
CI = "ci-token-0123456789abcdef012345"
POLICY = """\
[[grant]]
subject = "billing"
skills = ["acme/billing/**"]

[[grant]]
subject = "ci"
skills = ["**"]
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    where = tmp_path_factory.mktemp("scoped")
    tokens = where / "tokens.txt"
    tokens.write_text(f"{BILLING} subject=billing\n{CI} subject=ci\n")
    tokens.chmod(0o600)
    policy = where / "scopes.toml"
    policy.write_text(POLICY)
    with http_server([EXAMPLE_SKILLS], "--token-file", str(tokens), "--scopes", str(policy), "--quiet") as server:
        yield server


async def _catalog(url: str, token: str) -> tuple[list[str], bytes, bool]:
    async with SkillsClient.connect(url, headers={"Authorization": f"Bearer {token}"}) as client:
        listing = await client.list_entries()
        uris = sorted(e.uri for e in listing.entries)
        refunds = await client.read("skill://acme/billing/refunds/SKILL.md")
        try:
            await client.get_entry("skill://pdf-processing/SKILL.md")
        except Exception:
            pdf_visible = False
        else:
            pdf_visible = True
    return uris, refunds, pdf_visible


@pytest.mark.anyio
async def test_two_tokens_from_one_file_see_the_catalogs_their_subjects_are_granted(served: HttpServer) -> None:
    """Each token's subject picks its grant: list, get and read agree; a hidden skill is not served to it."""
    url = served.url
    billing, refunds, pdf_visible = await _catalog(url, BILLING)
    assert billing == ["skill://acme/billing/refunds/SKILL.md"]
    assert refunds.startswith(b"---\n")
    assert not pdf_visible
    everything, _, pdf_visible = await _catalog(url, CI)
    assert len(everything) == 5
    assert pdf_visible


@pytest.mark.anyio
async def test_the_catalog_page_shows_each_token_its_own_skills_and_nothing_without_one(served: HttpServer) -> None:
    """The page at / needs the same token as /mcp and never shows a caller more than /mcp would."""
    base = served.url.removesuffix("/mcp")
    async with httpx2.AsyncClient() as http:
        anonymous = await http.get(base + "/")
        billing = await http.get(base + "/", headers={"Authorization": f"Bearer {BILLING}"})
        ci = await http.get(base + "/", headers={"Authorization": f"Bearer {CI}"})
    assert anonymous.status_code == 401
    assert "refunds" in billing.text
    assert "pdf-processing" not in billing.text
    assert "pdf-processing" in ci.text


@pytest.mark.anyio
async def test_a_token_not_in_the_file_is_refused(served: HttpServer) -> None:
    """A near miss of a listed token gets 401 and no catalog."""
    with pytest.raises(AuthenticationRequired):
        await _catalog(served.url, BILLING[:-1] + "X")
