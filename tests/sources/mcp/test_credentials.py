"""Credentials to upstreams (issue 21, point 5): a bearer token from a file, and OAuth client credentials from a real
authorization server (oidc-provider), each for the upstream it names; neither the token nor the secret is logged,
even at --debug; a credentials file that is not one is refused in one line.

Real processes: protected `skillwire serve` upstreams, the authorization server, and gateways in front of them.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from mcp.shared.auth import OAuthToken

from skillwire.client.session import SkillsClient
from skillwire.sources.mcp.credentials import RENEW_BEFORE_S, RenewingTokens
from tests.support.cli import run_cli
from tests.support.oidc import CLIENT_ID, OidcProvider, oidc_provider
from tests.support.servers import EXAMPLE_SKILLS, http_server, serve_command

pytestmark = pytest.mark.anyio

SCOPE = "skills:read"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def op() -> Iterator[OidcProvider]:
    with oidc_provider() as provider:
        yield provider


async def _skills(url: str) -> list[str]:
    async with SkillsClient.connect(url) as client:
        return sorted(e.uri for e in (await client.list_entries()).entries)


def _gateway(upstream_url: str, tmp_path: Path, credentials: Mapping[str, object] | None) -> list[str]:
    command = serve_command([], f"vendor=mcp:{upstream_url}", "--http", "127.0.0.1:0", "--debug")
    command += ["--gateway-cache", str(tmp_path / "gateway"), "--quiet"]
    if credentials is not None:
        (tmp_path / "credentials.json").write_text(json.dumps(credentials), encoding="utf-8")
        command += ["--upstream-credentials", str(tmp_path / "credentials.json")]
    return command


async def test_a_bearer_token_file_opens_a_protected_upstream_and_is_never_logged(tmp_path: Path) -> None:
    token = secrets.token_urlsafe(32)
    (tmp_path / "tokens").write_text(f"{token} subject=gateway\n", encoding="utf-8")
    (tmp_path / "gateway.token").write_text(f"# the gateway's token\n{token}\n", encoding="utf-8")
    with http_server([EXAMPLE_SKILLS], "--quiet", "--token-file", str(tmp_path / "tokens")) as upstream:
        refused = run_cli("serve", f"vendor=mcp:{upstream.url}", "--gateway-cache", str(tmp_path / "none"), "--quiet")
        assert refused.returncode == 2  # without the token: nothing verified, nothing to serve
        assert "needs a bearer token" in refused.stderr
        creds = {upstream.url: {"token_file": "gateway.token"}}  # relative to the credentials file
        with http_server([], command=_gateway(upstream.url, tmp_path, creds)) as gateway:
            served = await _skills(gateway.url)
            assert "skill://vendor/pdf-processing/SKILL.md" in served
            assert len(served) == 5
            assert token not in gateway.stderr


async def test_oauth_client_credentials_from_a_real_issuer_open_a_protected_upstream(
    tmp_path: Path, op: OidcProvider
) -> None:
    (tmp_path / "secret").write_text(op.secret + "\n", encoding="utf-8")
    with http_server([EXAMPLE_SKILLS], "--quiet", "--auth-issuer", op.issuer, "--required-scope", SCOPE) as upstream:
        creds = {
            upstream.url: {"client_id": CLIENT_ID, "client_secret_file": "secret", "issuer": op.issuer, "scope": SCOPE}
        }
        with http_server([], command=_gateway(upstream.url, tmp_path, creds)) as gateway:
            assert len(await _skills(gateway.url)) == 5
            assert op.secret not in gateway.stderr
            assert "access_token" not in gateway.stderr


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[", "not JSON"),
        ("[]", "an object of upstream URLs"),
        ('{"stdio:x": {"token_file": "t"}}', "not an upstream URL"),
        ('{"http://h/mcp": {"token_file": 3}}', "either token_file, or client_id"),
        ('{"http://h/mcp": {"client_id": "a", "client_secret_file": "s"}}', "got client_id, client_secret_file"),
        ('{"http://h/mcp": {"client_id": "a", "client_secret_file": "s", "issuer": "ftp://x"}}', "issuer must be"),
    ],
)
def test_a_credentials_file_that_is_not_one_is_a_one_line_usage_error(tmp_path: Path, text: str, said: str) -> None:
    (tmp_path / "c.json").write_text(text, encoding="utf-8")
    run = run_cli("serve", "v=mcp:http://h/mcp", "--upstream-credentials", str(tmp_path / "c.json"), "--quiet")
    assert run.returncode == 2
    assert said in run.stderr
    assert run.stderr.count("\n") == 1


async def test_a_client_credentials_token_is_renewed_a_minute_before_it_expires() -> None:
    """The token storage the SDK's provider reads hands a token out only while more than RENEW_BEFORE_S of it is
    left, so the provider asks the issuer for a new one before the upstream would refuse the old."""
    tokens = RenewingTokens()
    assert await tokens.get_tokens() is None
    await tokens.set_tokens(OAuthToken(access_token="a", expires_in=3600))
    kept = await tokens.get_tokens()
    assert kept is not None
    assert kept.access_token == "a"
    assert kept.expires_in is not None
    assert 3600 - RENEW_BEFORE_S - 5 <= kept.expires_in <= 3600 - RENEW_BEFORE_S
    await tokens.set_tokens(OAuthToken(access_token="b", expires_in=int(RENEW_BEFORE_S) - 1))
    assert await tokens.get_tokens() is None  # less than a minute left: ask for a new one now
    await tokens.set_tokens(OAuthToken(access_token="c"))  # no lifetime given: kept until the upstream refuses it
    assert (await tokens.get_tokens()) == OAuthToken(access_token="c")
