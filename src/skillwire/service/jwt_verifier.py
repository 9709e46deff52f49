"""Verify OAuth 2.1 JWT access tokens (RFC 9068) against an issuer's published keys, for the SDK's bearer middleware.

The issuer's metadata is found at RFC 8414 `/.well-known/oauth-authorization-server` (then OIDC
`/.well-known/openid-configuration`); its `issuer` must equal the configured one (RFC 8414 §3.3) and its
`jwks_uri` gives the keys. A token is accepted only if it is signed with an allow-listed asymmetric
algorithm by a published key of the matching type, names this issuer, has this server's resource URL
among its audiences (RFC 8707), is typed as an access token, and is within `nbf`/`iat` (30 s leeway for
clock skew) and `exp` (PyJWT allows the same leeway; the SDK's bearer middleware then checks `exp` exactly).
Signature and claim checks are PyJWT's; this module only chooses the key and the rules.

    verifier = JwtVerifier(JwtSettings(issuer="https://id.example.com", resource="https://skills.example.com/mcp"))
    access = await verifier.verify_token(bearer)   # AccessToken, or None
"""

from __future__ import annotations

import ipaddress
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp.server.auth.provider import AccessToken

logger = logging.getLogger(__name__)

# Asymmetric only: an HMAC algorithm would let anyone holding the public key "sign", and `none` signs nothing.
ALLOWED_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
ACCEPTED_TYPES = frozenset({"at+jwt", "application/at+jwt", "jwt"})
# JWS `alg` values from the IANA JOSE registry: the ones a log line may name (any other is the caller's free text).
REGISTERED_ALGORITHMS = frozenset(
    {*ALLOWED_ALGORITHMS, "HS256", "HS384", "HS512", "none", "ES256K", "Ed25519", "Ed448"}
)
_KEY_TYPES = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}
LEEWAY_S = 30
JWKS_TTL_S = 600.0
REFETCH_MIN_INTERVAL_S = 30.0  # an unknown `kid` refetches the keys at most this often
FETCH_TIMEOUT_S = 5.0
MAX_DOCUMENT_BYTES = 256 * 1024
MAX_TOKEN_CHARS = 16 * 1024


class IssuerUnavailable(Exception):
    """The issuer's metadata or keys could not be fetched or made no sense (the message says which)."""


@dataclass(frozen=True, slots=True)
class JwtSettings:
    """What a token must say: its issuer and this server's resource URL, and which scopes it must carry."""

    issuer: str
    resource: str
    leeway_s: int = LEEWAY_S
    jwks_ttl_s: float = JWKS_TTL_S
    refetch_min_interval_s: float = REFETCH_MIN_INTERVAL_S
    algorithms: tuple[str, ...] = ALLOWED_ALGORITHMS

    def __post_init__(self) -> None:
        for name, url in (("issuer", self.issuer), ("resource", self.resource)):
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.fragment or parts.query:
                raise ValueError(f"{name} must be an http(s) URL without query or fragment, not {url!r}")
        unknown = set(self.algorithms) - set(ALLOWED_ALGORITHMS)
        if unknown:
            raise ValueError(f"only asymmetric algorithms are allowed, not {sorted(unknown)}")


def is_loopback_url(url: str) -> bool:
    """Whether `url` names this machine (localhost, 127.0.0.0/8, ::1): the only place plain http is trusted."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def metadata_urls(issuer: str) -> tuple[str, ...]:
    """Where the issuer's metadata may be: RFC 8414 §3.1 (well-known inserted before the path), then OIDC."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    return (
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    )


async def fetch_json(client: httpx2.AsyncClient, url: str) -> dict[str, Any]:
    """GET `url` as a JSON object: no redirects, at most MAX_DOCUMENT_BYTES read, bounded in time."""
    try:
        with anyio.fail_after(FETCH_TIMEOUT_S):
            # Raw bytes, counted as they arrive: a compressed answer is refused rather than inflated.
            headers = {"Accept": "application/json", "Accept-Encoding": "identity"}
            async with client.stream("GET", url, headers=headers) as response:
                if response.status_code != 200:
                    raise IssuerUnavailable(f"{url} answered HTTP {response.status_code}")
                if response.headers.get("content-encoding", "identity").lower() != "identity":
                    raise IssuerUnavailable(f"{url} answered with a content encoding it was not asked for")
                body = bytearray()
                async for chunk in response.aiter_raw():
                    body += chunk
                    if len(body) > MAX_DOCUMENT_BYTES:
                        raise IssuerUnavailable(f"{url} answered more than {MAX_DOCUMENT_BYTES:,} bytes")
    except TimeoutError:
        raise IssuerUnavailable(f"{url} did not answer within {FETCH_TIMEOUT_S:g} s") from None
    except httpx2.HTTPError as error:
        raise IssuerUnavailable(f"{url}: {type(error).__name__}") from None
    try:
        value = json.loads(bytes(body))
    except ValueError:
        raise IssuerUnavailable(f"{url} did not answer JSON") from None
    if not isinstance(value, dict):
        raise IssuerUnavailable(f"{url} did not answer a JSON object")
    return value


@dataclass(slots=True)
class _Keys:
    by_kid: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    fetched_at: float = float("-inf")


class JwtVerifier:
    """A `TokenVerifier` for JWT access tokens from one issuer; keys cached for a TTL, refetched on an unknown `kid`."""

    def __init__(self, settings: JwtSettings, *, client: httpx2.AsyncClient | None = None) -> None:
        self.settings = settings
        self._client = client
        self._jwks_uri: str | None = None
        self._keys = _Keys()
        self._lock = anyio.Lock()
        self._last_attempt = float("-inf")
        self._last_warning = float("-inf")

    def _http(self) -> httpx2.AsyncClient:
        if self._client is None:
            self._client = httpx2.AsyncClient(follow_redirects=False, timeout=FETCH_TIMEOUT_S)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    async def _discover(self) -> str:
        if self._jwks_uri is not None:
            return self._jwks_uri
        problems = []
        for url in metadata_urls(self.settings.issuer):
            try:
                metadata = await fetch_json(self._http(), url)
            except IssuerUnavailable as error:
                problems.append(str(error))
                continue
            # RFC 8414 §3.3: the issuer in the metadata MUST be identical to the issuer it was found for.
            if metadata.get("issuer") != self.settings.issuer:
                problems.append(f"{url} names another issuer")
                continue
            jwks_uri = metadata.get("jwks_uri")
            if not isinstance(jwks_uri, str) or not (
                urlsplit(jwks_uri).scheme == "https"
                or (urlsplit(jwks_uri).scheme == "http" and is_loopback_url(jwks_uri))
            ):
                problems.append(f"{url} has no usable jwks_uri")
                continue
            self._jwks_uri = jwks_uri
            return jwks_uri
        raise IssuerUnavailable("; ".join(problems))

    async def _refresh(self) -> None:
        """Fetch the key set (one fetch at a time; an unknown kid refetches at most every refetch_min_interval_s)."""
        async with self._lock:
            now = time.monotonic()
            if now - self._last_attempt < self.settings.refetch_min_interval_s:
                return  # fetched (or failed) moments ago, maybe for a request waiting on the lock: do not hammer
            self._last_attempt = now
            document = await fetch_json(self._http(), await self._discover())
            keys = document.get("keys")
            if not isinstance(keys, list):
                raise IssuerUnavailable("the JWKS has no keys list")
            by_kid: dict[str | None, dict[str, Any]] = {}
            for key in keys:
                if isinstance(key, dict) and key.get("use", "sig") == "sig":
                    kid = key.get("kid")
                    by_kid[kid if isinstance(kid, str) else None] = key
            self._keys = _Keys(by_kid, time.monotonic())

    async def _key_for(self, kid: str | None) -> dict[str, Any] | None:
        if time.monotonic() - self._keys.fetched_at > self.settings.jwks_ttl_s:
            await self._refresh()
        key = self._keys.by_kid.get(kid)
        if key is None:
            await self._refresh()
            key = self._keys.by_kid.get(kid)
        return key

    def _warn(self, message: str, *args: object) -> None:
        now = time.monotonic()
        if now - self._last_warning >= 60:
            self._last_warning = now
            logger.warning(message, *args)

    async def verify_token(self, token: str) -> AccessToken | None:
        """`TokenVerifier`: the token's `AccessToken` if every check passes, else None (the reason logged at debug)."""
        if len(token) > MAX_TOKEN_CHARS or token.count(".") != 2:
            return None
        import jwt  # here: a server that checks no token does not hold PyJWT and its crypto (about 1.5 MB)

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            logger.debug("bearer token refused: not a JWS")
            return None
        # RFC 9068 §4 asks for typ "at+jwt"; Keycloak, Entra ID and others send "JWT", so that is accepted too.
        # Any other type (a logout token, a DPoP proof, ...) is some other JWT, not an access token.
        # The header is the token's own text: a refusal names a registered value, never what the caller wrote.
        typ = header.get("typ", "JWT")
        if not isinstance(typ, str) or typ.lower() not in ACCEPTED_TYPES:
            logger.debug("bearer token refused: its typ is not an access token's (at+jwt or JWT)")
            return None
        alg = header.get("alg")
        if alg not in self.settings.algorithms:
            registered = isinstance(alg, str) and alg in REGISTERED_ALGORITHMS
            shown = f"algorithm {alg}" if registered else "an unregistered algorithm"
            logger.debug("bearer token refused: %s is not allowed", shown)
            return None
        kid = header.get("kid")
        try:
            jwk = await self._key_for(kid if isinstance(kid, str) else None)
        except IssuerUnavailable as error:
            self._warn("cannot check bearer tokens: the issuer's keys are unavailable: %s", error)
            return None
        if jwk is None:
            logger.debug("bearer token refused: no published key has its kid")
            return None
        # The key's type must be the algorithm's (an RSA key never checks an EC signature), and a key
        # that names its algorithm is used only with that one.
        if jwk.get("kty") != _KEY_TYPES[alg[:2]] or jwk.get("alg", alg) != alg:
            logger.debug("bearer token refused: the key does not fit algorithm %s", alg)
            return None
        try:
            key = jwt.PyJWK(jwk, algorithm=alg)
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key,
                algorithms=[alg],
                audience=self.settings.resource,
                issuer=self.settings.issuer,
                leeway=self.settings.leeway_s,
                options={"require": ["exp", "iss", "aud"], "verify_nbf": True},
            )
        except jwt.PyJWTError as error:
            logger.debug("bearer token refused: %s", type(error).__name__)
            return None
        return access_token_from_claims(claims, resource=self.settings.resource)


def _scopes(claims: dict[str, Any]) -> list[str]:
    scope = claims.get("scope", claims.get("scp"))
    if isinstance(scope, str):
        return scope.split()
    if isinstance(scope, list):
        return [s for s in scope if isinstance(s, str)]
    return []


def access_token_from_claims(claims: dict[str, Any], *, resource: str) -> AccessToken:
    """RFC 9068 claims as the SDK's `AccessToken` (`client_id`, `sub`, `scope`; every claim kept in `claims`)."""
    subject = claims.get("sub")
    client_id = claims.get("client_id", claims.get("azp", subject))
    exp = claims.get("exp")
    return AccessToken(
        token="jwt",  # the secret stays out of request state and logs
        client_id=str(client_id) if client_id is not None else "",
        scopes=_scopes(claims),
        expires_at=int(exp) if isinstance(exp, int | float) else None,
        resource=resource,
        subject=str(subject) if subject is not None else None,
        claims=claims,
    )
