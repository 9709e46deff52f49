"""`skillwire serve --http` as an OAuth 2.1 resource server, against a real authorization server (oidc-provider).

MCP authorization (a MUST for an HTTP server that asks for authorization): bearer access tokens, RFC 9728
Protected Resource Metadata named by `WWW-Authenticate` on 401, audience = this server's resource URL
(RFC 8707). skillwire choices: static tokens from `--token-file`; the catalog page needs the same token as
`/mcp`; a token without a required scope gets 403 `insufficient_scope` (RFC 6750 §3.1).

One oidc-provider and one server per module: every test only reads.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jwt
import pytest

from skillwire.cli.main import main
from skillwire.client.session import SkillsClient
from skillwire.core.errors import AuthenticationRequired
from skillwire.host.host import Host
from tests.support.oidc import OidcProvider, TestKey, hs256_with_public_key, oidc_provider, unsigned_token
from tests.support.servers import EXAMPLE_SKILLS, HttpServer, http_server

SCOPE = "skills:read"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
# Text that only a served skill would show: a name from the catalog and a line of a SKILL.md.
SKILL_MARKERS = ("pdf-processing", "refunds", "git-workflow")


@dataclass
class Deployment:
    """A real issuer, a `skillwire serve --http` trusting it (and a token file), and the tokens handed out."""

    op: OidcProvider
    server: HttpServer
    token_file: Path
    file_token: str
    used: list[str]

    @property
    def resource(self) -> str:
        return self.server.url

    @property
    def base(self) -> str:
        return self.server.url.removesuffix("/mcp")

    def real_token(self, *, resource: str | None = None, scope: str = SCOPE) -> str:
        token = self.op.token(resource=resource or self.resource, scope=scope)
        self.used.append(token)
        return token

    def forged(self, token: str) -> str:
        self.used.append(token)
        return token


@pytest.fixture(scope="module")
def op() -> Iterator[OidcProvider]:
    with oidc_provider() as provider:
        yield provider


@pytest.fixture(scope="module")
def deployment(op: OidcProvider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    token_file = tmp_path_factory.mktemp("auth") / "tokens"
    file_token = secrets.token_urlsafe(32)
    token_file.write_text(f"# CI\n{file_token} subject=ci scopes={SCOPE}\n", encoding="utf-8")
    token_file.chmod(0o600)
    options = ("--auth-issuer", op.issuer, "--token-file", str(token_file), "--required-scope", SCOPE, "--debug")
    with http_server([EXAMPLE_SKILLS], *options) as server:
        yield Deployment(op, server, token_file, file_token, [file_token])
        server.assert_alive()


def _post(url: str, token: str | None, *, scheme: str = "Bearer") -> httpx2.Response:
    headers = dict(MCP_HEADERS)
    if token is not None:
        headers["Authorization"] = f"{scheme} {token}"
    return httpx2.post(url, json=INITIALIZE, headers=headers, timeout=20)


def _get(url: str, token: str | None) -> httpx2.Response:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return httpx2.get(url, headers=headers, timeout=20)


def _assert_refused(response: httpx2.Response, *, status: int = 401) -> None:
    assert response.status_code == status, response.text[:300]
    assert not any(marker in response.text for marker in SKILL_MARKERS)
    assert response.headers["content-type"] == "application/json"


async def _list_names(url: str, headers: dict[str, str]) -> list[str]:
    async with SkillsClient.connect(url, headers=headers) as client:
        listing = await client.list_entries()
        entry = next(e for e in listing.entries if e.name == "pdf-processing")
        data = await client.read(entry.uri)
        assert data.startswith(b"---")
        return sorted(e.name for e in listing.entries)


# -- the real authorization server ---------------------------------------------------------------------------------


def test_token_from_the_real_authorization_server_lists_and_reads(deployment: Deployment) -> None:
    """MCP authorization: a client-credentials JWT from oidc-provider, audience = the resource URL, reads skills."""
    token = deployment.real_token()
    names = anyio.run(_list_names, deployment.resource, {"Authorization": f"Bearer {token}"})
    assert "pdf-processing" in names
    assert "refunds" in names


def test_request_without_a_token_gets_401_naming_the_metadata_that_names_the_issuer(deployment: Deployment) -> None:
    """MCP authorization: 401 + WWW-Authenticate resource_metadata (RFC 9728), whose document names the issuer."""
    response = _post(deployment.resource, None)
    _assert_refused(response)
    challenge = response.headers["www-authenticate"]
    metadata_url = f"{deployment.base}/.well-known/oauth-protected-resource/mcp"
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{metadata_url}"' in challenge
    for url in (metadata_url, f"{deployment.base}/.well-known/oauth-protected-resource"):
        metadata = _get(url, None).json()
        assert metadata["resource"] == deployment.resource
        assert metadata["authorization_servers"] == [deployment.op.issuer]  # exactly: issuers compare as strings
        assert metadata["scopes_supported"] == [SCOPE]


def _challenge(response: httpx2.Response) -> dict[str, str]:
    """The auth-params of a `Bearer` challenge (RFC 6750 §3: `Bearer name="value", ...`), each named once."""
    header = response.headers["www-authenticate"]
    scheme, _, rest = header.partition(" ")
    assert scheme == "Bearer", header
    params: dict[str, str] = {}
    for name, value in re.findall(r'\s*([a-z_]+)="([^"]*)"\s*,?', rest):
        assert name not in params, header
        params[name] = value
    assert re.fullmatch(r'(\s*[a-z_]+="[^"]*"\s*,?)*', rest), header
    return params


@pytest.mark.parametrize("authorization", [None, "Basic dXNlcjpwYXNz", "Digest username=x", ""])
def test_a_request_that_carried_no_bearer_token_gets_a_challenge_with_no_error_code(
    deployment: Deployment, authorization: str | None
) -> None:
    """RFC 6750 §3.1: a request lacking authentication (no header, or another scheme) gets no `error=`: it made
    no error. The challenge still names the metadata, so an MCP client knows where to get a token."""
    headers = dict(MCP_HEADERS) if authorization is None else {**MCP_HEADERS, "Authorization": authorization}
    for response in (
        httpx2.post(deployment.resource, json=INITIALIZE, headers=headers, timeout=20),
        httpx2.get(deployment.base + "/", headers={} if authorization is None else {"Authorization": authorization}),
    ):
        _assert_refused(response)
        params = _challenge(response)
        assert set(params) == {"resource_metadata"}, params
        assert "invalid_token" not in response.text


def test_a_request_with_a_bad_bearer_token_gets_invalid_token(deployment: Deployment) -> None:
    """RFC 6750 §3.1: a token that is expired, revoked, malformed or unknown gets `error="invalid_token"`."""
    for response in (_post(deployment.resource, "not-a-valid-token-at-all"), _get(deployment.base + "/", "x")):
        _assert_refused(response)
        params = _challenge(response)
        assert params["error"] == "invalid_token"
        assert "resource_metadata" in params


def test_catalog_page_needs_the_same_token_as_mcp(deployment: Deployment) -> None:
    """skillwire choice: `/` and `/skills/...` answer 401 without a token, and show the catalog with one."""
    for path in ("/", "/skills/pdf-processing", "/skills/acme/billing/refunds"):
        _assert_refused(_get(deployment.base + path, None))
        _assert_refused(_get(deployment.base + path, "not-a-valid-token-at-all"))
    page = _get(deployment.base + "/", deployment.real_token())
    assert page.status_code == 200
    assert "pdf-processing" in page.text


def test_token_issued_for_another_resource_is_refused(deployment: Deployment) -> None:
    """RFC 8707: a real token whose audience is another server's resource URL does not open this one."""
    token = deployment.real_token(resource="http://127.0.0.1:1/mcp")
    _assert_refused(_post(deployment.resource, token))


def test_token_without_the_required_scope_gets_403_and_no_content(deployment: Deployment) -> None:
    """RFC 6750 §3.1: a valid token lacking --required-scope gets 403 insufficient_scope, and nothing is served."""
    token = deployment.real_token(scope="skills:admin")
    response = _post(deployment.resource, token)
    _assert_refused(response, status=403)
    params = _challenge(response)
    assert (params["error"], params["scope"]) == ("insufficient_scope", SCOPE)  # RFC 6750 §3: the scope needed
    page = _get(deployment.base + "/", token)
    _assert_refused(page, status=403)
    assert _challenge(page)["scope"] == SCOPE


# -- hand-made tokens: one flaw each ---------------------------------------------------------------------------------

NEGATIVE_CASES = (
    "wrong_key",
    "unknown_kid",
    "expired",
    "not_yet_valid",
    "wrong_audience",
    "audience_missing",
    "wrong_issuer",
    "alg_none",
    "hs256_signed_with_the_public_key",
    "rs256_header_on_the_ec_key",
    "logout_token_typ",
    "garbage",
)


def _negative_token(case: str, d: Deployment) -> str:
    op, now = d.op, int(time.time())
    claims = op.claims(resource=d.resource)
    if case == "wrong_key":
        return TestKey.generate(kid=op.key.kid).sign(claims)  # the published kid, another key
    if case == "unknown_kid":
        return TestKey.generate().sign(claims)
    if case == "expired":
        return op.key.sign(op.claims(resource=d.resource, iat=now - 900, exp=now - 600))
    if case == "not_yet_valid":
        return op.key.sign(op.claims(resource=d.resource, nbf=now + 600))
    if case == "wrong_audience":
        return op.key.sign(op.claims(resource="http://127.0.0.1:1/mcp"))
    if case == "audience_missing":
        return op.key.sign(op.claims(resource=d.resource, aud=None))
    if case == "wrong_issuer":
        return op.key.sign(op.claims(resource=d.resource, iss="http://127.0.0.1:1"))
    if case == "alg_none":
        return unsigned_token(claims, kid=op.key.kid)
    if case == "hs256_signed_with_the_public_key":
        return hs256_with_public_key(claims, kid=op.key.kid, public_key=op.key.public_pem())
    if case == "rs256_header_on_the_ec_key":
        token = op.key.sign(claims)
        header, _, rest = token.partition(".")
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
        decoded["alg"] = "RS256"
        new_header = base64.urlsafe_b64encode(json.dumps(decoded).encode()).rstrip(b"=").decode()
        return f"{new_header}.{rest}"
    if case == "logout_token_typ":
        return jwt.encode(claims, op.key.private, algorithm="ES256", headers={"kid": op.key.kid, "typ": "logout+jwt"})
    assert case == "garbage"
    return "eyJhbGciOi.JFUzI1NiJ9.x" * 3


def test_control_a_hand_made_token_with_no_flaw_is_accepted(deployment: Deployment) -> None:
    """The negative cases below differ from this token in one way each: it must itself be accepted."""
    token = deployment.forged(deployment.op.key.sign(deployment.op.claims(resource=deployment.resource)))
    assert _post(deployment.resource, token).status_code == 200


@pytest.mark.parametrize("case", NEGATIVE_CASES)
def test_forged_or_flawed_token_gets_401_and_no_content(deployment: Deployment, case: str) -> None:
    """Attack: a JWT with one flaw (key, kid, time, audience, issuer, algorithm) must open neither /mcp nor /."""
    token = deployment.forged(_negative_token(case, deployment))
    _assert_refused(_post(deployment.resource, token))
    _assert_refused(_get(deployment.base + "/", token))


# -- static tokens ---------------------------------------------------------------------------------------------------


def test_token_file_token_reads_and_a_near_miss_does_not(deployment: Deployment) -> None:
    """skillwire choice: a --token-file token opens the server; one differing in its last character does not."""
    token = deployment.file_token
    names = anyio.run(_list_names, deployment.resource, {"Authorization": f"Bearer {token}"})
    assert "pdf-processing" in names
    near = deployment.forged(token[:-1] + ("A" if token[-1] != "A" else "B"))
    _assert_refused(_post(deployment.resource, near))
    _assert_refused(_post(deployment.resource, token, scheme="Basic"))


def test_token_file_is_reread_when_it_changes(deployment: Deployment) -> None:
    """Revocation: rewriting the token file takes the old token away and the new one works, without a restart."""
    old, new = deployment.file_token, deployment.forged(secrets.token_urlsafe(32))
    deployment.token_file.write_text(f"{new} subject=ci scopes={SCOPE}\n", encoding="utf-8")
    try:
        _assert_refused(_post(deployment.resource, old))
        assert _post(deployment.resource, new).status_code == 200
    finally:
        deployment.token_file.write_text(f"{old} subject=ci scopes={SCOPE}\n", encoding="utf-8")
    assert _post(deployment.resource, old).status_code == 200


# -- clients ---------------------------------------------------------------------------------------------------------


def test_client_without_a_token_is_told_which_authorization_server_to_ask(deployment: Deployment) -> None:
    """MCP authorization (client side): a 401 is followed to the metadata; the error names the issuer."""

    async def connect() -> None:
        async with SkillsClient.connect(deployment.resource):
            pass

    with pytest.raises(AuthenticationRequired) as caught:
        anyio.run(connect)
    assert caught.value.status == 401
    assert caught.value.authorization_servers == (deployment.op.issuer,)
    assert deployment.op.issuer in str(caught.value)


def test_inspect_with_token_file_lists_the_skills(
    deployment: Deployment, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`skillwire inspect --token-file FILE` sends the file's first token and lists the catalog."""
    token_file = tmp_path / "token"
    token_file.write_text(f"# from the issuer\n{deployment.real_token()}\n", encoding="utf-8")
    assert main(["inspect", deployment.resource, "--token-file", str(token_file)]) == 0
    assert "pdf-processing" in capsys.readouterr().out


def test_inspect_without_a_token_prints_one_line_naming_the_authorization_server(
    deployment: Deployment, capsys: pytest.CaptureFixture[str]
) -> None:
    """MCP authorization (client side): no traceback, one stderr line naming the issuer and how to pass a token."""
    assert main(["inspect", deployment.resource]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0] == (
        f"skillwire: error: {deployment.resource} needs a bearer token from the authorization server "
        f"{deployment.op.issuer}; pass it with --token-file FILE or --header 'Authorization: Bearer TOKEN'"
    )


def test_inspect_with_a_refused_token_says_so_in_one_line(
    deployment: Deployment, capsys: pytest.CaptureFixture[str]
) -> None:
    """A token the server refuses (expired here) is named as refused, not as missing; still one line, no token."""
    now = int(time.time())
    expired = deployment.forged(
        deployment.op.key.sign(deployment.op.claims(resource=deployment.resource, exp=now - 600))
    )
    assert main(["inspect", deployment.resource, "--header", f"Authorization: Bearer {expired}"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"skillwire: error: {deployment.resource} refused the bearer token sent (expired, revoked, or not for this "
        f"server); it takes one from the authorization server {deployment.op.issuer}"
    ]


def test_pull_and_host_send_the_header_too(
    deployment: Deployment, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pull --header` and `host --token-file` reach a server that needs a token."""
    header = f"Authorization: Bearer {deployment.real_token()}"
    dest = tmp_path / "pdf"
    assert main(["pull", deployment.resource, "skill://pdf-processing/SKILL.md", str(dest), "--header", header]) == 0
    assert (dest / "SKILL.md").is_file()
    token_file = tmp_path / "token"
    token_file.write_text(deployment.file_token + "\n", encoding="utf-8")
    assert main(["host", "--server", f"docs={deployment.resource}", "--token-file", str(token_file)]) == 0
    assert "docs:pdf-processing" in capsys.readouterr().out


class _Bearer(httpx2.Auth):
    """An httpx2 `Auth` as an application would write one (a token source that could refresh)."""

    def __init__(self, token: str) -> None:
        self.token = token

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        request.headers["Authorization"] = f"Bearer {self.token}"
        yield request


def test_host_add_server_takes_an_httpx_auth_and_a_missing_one_names_the_issuer(deployment: Deployment) -> None:
    """`Host.add_server(..., auth=...)` reaches a protected server; without it the error names the issuer."""

    async def run() -> None:
        async with Host() as host:
            await host.add_server("docs", deployment.resource, auth=_Bearer(deployment.real_token()))
            assert "docs:pdf-processing" in {item.handle for item in host.catalog()}
            with pytest.raises(AuthenticationRequired) as caught:
                await host.add_server("bare", deployment.resource)
            assert caught.value.authorization_servers == (deployment.op.issuer,)

    anyio.run(run)


# -- last: nothing above leaked a token --------------------------------------------------------------------------------


def test_tokens_never_appear_in_server_stderr_even_at_debug(deployment: Deployment) -> None:
    """Tokens and keys never appear in logs: every token sent above (valid or forged) is absent from --debug stderr."""
    _post(deployment.resource, deployment.real_token())
    time.sleep(0.2)
    stderr = deployment.server.stderr
    assert "listening on" in stderr
    assert len(deployment.used) > 5
    for token in deployment.used:
        assert token not in stderr
        signature = token.split(".")[-1]
        assert len(signature) < 16 or signature not in stderr  # not even a JWT's signature part
    private: dict[str, Any] = deployment.op.key.private_jwk()
    assert private["d"] not in stderr
