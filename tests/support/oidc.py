"""A real OAuth authorization server for tests: oidc-provider (npm) on 127.0.0.1, and hand-made JWTs.

`oidc_provider()` starts `tools/node/test-oidc-provider.mjs` with the Node in tools/node, waits for its
`{"issuer": ...}` line and stops it afterwards. Its ES256 signing key is made here (`TestKey`), so a test
can also sign tokens with the key the issuer publishes and change one claim at a time.

    with oidc_provider() as op:
        token = op.token(resource="http://127.0.0.1:8000/mcp", scope="skills:read")   # from the real server
        forged = op.key.sign({"iss": op.issuer, "aud": ..., "exp": ...})              # same key, any claims
"""

from __future__ import annotations

import base64
import hmac
import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.conformance import NODE_BIN
from tests.support.servers import REPO_ROOT, STOP_TIMEOUT_S

PROVIDER_SCRIPT = REPO_ROOT / "tools" / "node" / "test-oidc-provider.mjs"
CLIENT_ID = "skillwire-test"
START_TIMEOUT_S = 30.0


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class TestKey:
    """A P-256 key made by the test, with a kid: signs ES256 tokens, and shows its public half."""

    __test__ = False  # not a pytest test class

    private: ec.EllipticCurvePrivateKey
    kid: str

    @classmethod
    def generate(cls, kid: str | None = None) -> TestKey:
        return cls(ec.generate_private_key(ec.SECP256R1()), kid or str(uuid.uuid4()))

    def private_jwk(self) -> dict[str, Any]:
        jwk: dict[str, Any] = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.private))
        return {**jwk, "kid": self.kid}

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def sign(self, claims: Mapping[str, Any], *, kid: str | None = None, alg: str = "ES256") -> str:
        return jwt.encode(dict(claims), self.private, algorithm=alg, headers={"kid": kid or self.kid, "typ": "at+jwt"})


def unsigned_token(claims: Mapping[str, Any], *, kid: str) -> str:
    """`alg: none`: a header and claims, and an empty signature."""
    header = _b64(json.dumps({"alg": "none", "typ": "at+jwt", "kid": kid}).encode())
    return f"{header}.{_b64(json.dumps(dict(claims)).encode())}."


def hs256_with_public_key(claims: Mapping[str, Any], *, kid: str, public_key: bytes) -> str:
    """The key-confusion attack: HS256 "signed" with the issuer's public key as the HMAC secret."""
    header = _b64(json.dumps({"alg": "HS256", "typ": "at+jwt", "kid": kid}).encode())
    signing_input = f"{header}.{_b64(json.dumps(dict(claims)).encode())}"
    signature = hmac.new(public_key, signing_input.encode("ascii"), sha256).digest()
    return f"{signing_input}.{_b64(signature)}"


@dataclass
class OidcProvider:
    """A running oidc-provider: its issuer URL, the client secret, and the ES256 key it signs with."""

    issuer: str
    secret: str
    key: TestKey
    process: subprocess.Popen[str]

    def token(self, *, resource: str, scope: str = "skills:read") -> str:
        """A client-credentials access token (a JWT for `resource`) from the real server."""
        response = httpx2.post(
            f"{self.issuer}/token",
            data={"grant_type": "client_credentials", "scope": scope, "resource": resource},
            auth=(CLIENT_ID, self.secret),
            timeout=10,
        )
        assert response.status_code == 200, f"token endpoint answered {response.status_code}: {response.text[:300]}"
        token = response.json()["access_token"]
        assert isinstance(token, str)
        assert token.count(".") == 2, "oidc-provider did not issue a JWT access token"
        return token

    def claims(self, *, resource: str, scope: str = "skills:read", **changes: Any) -> dict[str, Any]:
        """The claims a token from this issuer for `resource` would carry, with `changes` applied (None drops one)."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": resource,
            "sub": CLIENT_ID,
            "client_id": CLIENT_ID,
            "scope": scope,
            "iat": now,
            "exp": now + 300,
            "jti": str(uuid.uuid4()),
        }
        claims.update(changes)
        return {k: v for k, v in claims.items() if v is not None}


def _node() -> str:
    node = NODE_BIN / "node"
    if not node.exists() or not (REPO_ROOT / "tools" / "node" / "node_modules" / "oidc-provider").exists():
        pytest.fail(
            "the Node.js test tools are missing: run `make tools` (oidc-provider is one of them)", pytrace=False
        )
    return str(node)


@contextmanager
def oidc_provider() -> Iterator[OidcProvider]:
    """Start oidc-provider on a free loopback port, wait for its issuer line, stop it (SIGTERM) afterwards."""
    key = TestKey.generate()
    secret = base64.urlsafe_b64encode(os.urandom(24)).decode("ascii")
    env = {**os.environ, "SIGNING_JWK": json.dumps(key.private_jwk()), "NODE_ENV": "test"}
    process = subprocess.Popen(
        [_node(), str(PROVIDER_SCRIPT), secret],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=PROVIDER_SCRIPT.parent,
    )
    found: list[str] = []
    output: list[str] = []
    ready = threading.Event()

    def read(stream: Any) -> None:
        for line in stream:
            output.append(line)
            if not found and line.startswith("{"):
                issuer = json.loads(line).get("issuer")
                if isinstance(issuer, str):
                    found.append(issuer)
                    ready.set()
        ready.set()

    readers = [threading.Thread(target=read, args=(s,), daemon=True) for s in (process.stdout, process.stderr)]
    for reader in readers:
        reader.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not found and process.poll() is None and time.monotonic() < deadline:
            ready.wait(0.2)
        if not found:
            pytest.fail(f"oidc-provider did not start; output:\n{''.join(output)}", pytrace=False)
        yield OidcProvider(found[0], secret, key, process)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=STOP_TIMEOUT_S)
        for reader in readers:
            reader.join(timeout=STOP_TIMEOUT_S)
