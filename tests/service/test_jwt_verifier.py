"""`JwtVerifier` against an in-memory issuer (httpx2 MockTransport): discovery, key caching, hostile issuers.

skillwire choices: keys cached for a TTL; an unknown `kid` refetches at most once per interval; an issuer
document over 256 KiB, a slow issuer, or metadata naming another issuer makes tokens fail, never hangs
or grows memory. RFC 8414 §3.3 (a MUST): the metadata's `issuer` must be the issuer it was fetched for.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
import jwt
import pytest

from skillwire.service.jwt_verifier import MAX_DOCUMENT_BYTES, JwtSettings, JwtVerifier, metadata_urls
from tests.support.oidc import TestKey
from tests.support.servers import EXAMPLE_SKILLS, http_server

ISSUER = "https://id.example.test"
RESOURCE = "https://skills.example.test/mcp"


class _Streamed(httpx2.AsyncByteStream):
    """A body sent in 64 KiB pieces, as a network would (so the reader's cap is what stops it)."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self._body), 65536):
            yield self._body[start : start + 65536]


def _json(value: object) -> httpx2.Response:
    return httpx2.Response(200, stream=_Streamed(json.dumps(value).encode()))


@dataclass
class FakeIssuer:
    """Serves RFC 8414 metadata and a JWKS; counts requests per path; `jwks_body` may be replaced."""

    keys: list[TestKey]
    metadata_issuer: str = ISSUER
    jwks_uri: str = f"{ISSUER}/jwks"
    jwks_body: Callable[[], bytes] | None = None
    hits: dict[str, int] = field(default_factory=dict)

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        self.hits[path] = self.hits.get(path, 0) + 1
        if path == "/.well-known/oauth-authorization-server":
            return _json({"issuer": self.metadata_issuer, "jwks_uri": self.jwks_uri})
        if path == "/jwks":
            if self.jwks_body is not None:
                return httpx2.Response(200, stream=_Streamed(self.jwks_body()))
            public = [{**json.loads(_public_jwk(k)), "kid": k.kid, "alg": "ES256", "use": "sig"} for k in self.keys]
            return _json({"keys": public})
        return httpx2.Response(404)

    def verifier(self, **settings: Any) -> JwtVerifier:
        client = httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler))
        return JwtVerifier(JwtSettings(issuer=ISSUER, resource=RESOURCE, **settings), client=client)


def _public_jwk(key: TestKey) -> str:
    return str(jwt.algorithms.ECAlgorithm.to_jwk(key.private.public_key()))


def _claims(**changes: Any) -> dict[str, Any]:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": [RESOURCE, "other"], "sub": "alice", "scope": "a b", "exp": now + 60, "iat": now}
    claims.update(changes)
    return claims


def test_metadata_urls_follow_rfc8414_then_oidc() -> None:
    """RFC 8414 §3.1 inserts the well-known segment before the issuer's path; OIDC appends it."""
    assert metadata_urls("https://id.example/tenant1") == (
        "https://id.example/.well-known/oauth-authorization-server/tenant1",
        "https://id.example/tenant1/.well-known/openid-configuration",
    )


def test_valid_token_gives_subject_scopes_and_claims() -> None:
    """What `get_access_token()` hands a handler: subject, scopes and every claim, audience matched in a list."""
    key = TestKey.generate()
    issuer = FakeIssuer([key])

    async def run() -> None:
        access = await issuer.verifier().verify_token(key.sign(_claims()))
        assert access is not None
        assert (access.subject, access.scopes, access.resource) == ("alice", ["a", "b"], RESOURCE)
        assert access.claims is not None
        assert access.claims["iss"] == ISSUER
        assert access.token != key.sign(_claims())  # the secret is not kept in request state

    anyio.run(run)


def test_keys_are_cached_and_an_unknown_kid_refetches_at_most_once_per_interval() -> None:
    """Attack: tokens with random kids must not turn the server into a JWKS-fetching amplifier."""
    key = TestKey.generate()
    issuer = FakeIssuer([key])

    async def run() -> None:
        verifier = issuer.verifier()
        for _ in range(20):
            assert await verifier.verify_token(key.sign(_claims())) is not None
        assert issuer.hits["/jwks"] == 1
        for _ in range(50):
            assert await verifier.verify_token(TestKey.generate().sign(_claims())) is None
        assert issuer.hits["/jwks"] == 1  # refetched just before: rate limited
        assert issuer.hits["/.well-known/oauth-authorization-server"] == 1

    anyio.run(run)


def test_a_rotated_key_is_picked_up_by_the_unknown_kid_refetch() -> None:
    """Key rotation: a token signed with a newly published key is accepted after one refetch."""
    old, new = TestKey.generate(), TestKey.generate()
    issuer = FakeIssuer([old])

    async def run() -> None:
        verifier = issuer.verifier(refetch_min_interval_s=0.0)
        assert await verifier.verify_token(old.sign(_claims())) is not None
        issuer.keys.append(new)
        assert await verifier.verify_token(new.sign(_claims())) is not None
        assert issuer.hits["/jwks"] == 2

    anyio.run(run)


def test_metadata_naming_another_issuer_is_not_trusted() -> None:
    """RFC 8414 §3.3: metadata whose `issuer` differs from the configured issuer is refused (mix-up attack)."""
    key = TestKey.generate()
    issuer = FakeIssuer([key], metadata_issuer="https://evil.example.test")

    async def run() -> None:
        assert await issuer.verifier().verify_token(key.sign(_claims())) is None
        assert "/jwks" not in issuer.hits

    anyio.run(run)


def test_an_oversized_jwks_is_cut_off_and_refused() -> None:
    """Attack: an issuer (or whoever answers for it) sends an endless key set; reading stops past the cap."""
    key = TestKey.generate()
    sent: list[int] = []

    def huge() -> bytes:
        sent.append(1)
        return b'{"keys": [' + b" " * (MAX_DOCUMENT_BYTES * 4) + b"]}"

    issuer = FakeIssuer([key], jwks_body=huge)

    async def run() -> None:
        assert await issuer.verifier().verify_token(key.sign(_claims())) is None

    anyio.run(run)
    assert sent


def test_a_token_is_refused_when_the_keys_are_not_json() -> None:
    """A broken JWKS makes tokens fail (401), not the request crash (500)."""
    key = TestKey.generate()
    issuer = FakeIssuer([key], jwks_body=lambda: b"<html>")

    async def run() -> None:
        assert await issuer.verifier().verify_token(key.sign(_claims())) is None

    anyio.run(run)


def test_an_hmac_algorithm_cannot_be_configured() -> None:
    """Only asymmetric algorithms: HS256 in the allow-list is a configuration error."""
    with pytest.raises(ValueError, match="asymmetric"):
        JwtSettings(issuer=ISSUER, resource=RESOURCE, algorithms=("HS256",))


def test_keys_offered_over_plain_http_are_not_fetched() -> None:
    """Attack: metadata pointing jwks_uri at plain http (off loopback) would let the path swap the keys."""
    key = TestKey.generate()
    issuer = FakeIssuer([key], jwks_uri="http://id.example.test/jwks")

    async def run() -> None:
        assert await issuer.verifier().verify_token(key.sign(_claims())) is None
        assert "/jwks" not in issuer.hits

    anyio.run(run)


def test_a_refused_header_is_never_echoed_into_the_log_even_at_debug() -> None:
    """skillwire choice (issue 19, hole 6, beyond the token file): a JWT header is the caller's own token text.
    A real `skillwire serve --auth-issuer ... --debug` refusing a token for its `typ` or its `alg` says which
    check failed, naming only a registered value, and no part of what the header said reaches stderr."""
    secret = "Hdr-Secret-0123456789abcdef"
    headers = ({"typ": secret, "alg": "RS256"}, {"typ": "JWT", "alg": secret}, {"typ": "JWT", "alg": "HS256"})
    # The issuer is never asked: both checks come before any key is looked up.
    options = ("--no-watch", "--debug", "--auth-issuer", "http://127.0.0.1:9")
    with http_server([EXAMPLE_SKILLS], *options) as server:
        for header in headers:
            token = f"{_b64(header)}.{_b64({'sub': 'x'})}.c2lnbmF0dXJl"
            response = httpx2.post(server.url, json={}, headers={"Authorization": f"Bearer {token}"}, timeout=20)
            assert response.status_code == 401
        deadline = time.monotonic() + 10
        while server.stderr.count("bearer token refused") < len(headers) and time.monotonic() < deadline:
            time.sleep(0.05)
        refusals = [line for line in server.stderr.splitlines() if "bearer token refused" in line]
        assert not any(secret[i : i + 6] in server.stderr for i in range(len(secret) - 5)), refusals
        assert [line.split("refused: ")[1] for line in refusals] == [
            "its typ is not an access token's (at+jwt or JWT)",
            "an unregistered algorithm is not allowed",
            "algorithm HS256 is not allowed",
        ]


def _b64(value: dict[str, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode("ascii")
