"""Credentials a gateway presents to its upstreams: a bearer token from a file, or OAuth client credentials.

`serve --upstream-credentials FILE` names them per upstream URL (exactly as in `mcp:URL`), secrets only in files
(relative paths are taken from FILE's folder):

    {"https://tools.example/mcp": {"token_file": "secrets/tools.token"},
     "https://maps.example/mcp": {"client_id": "gateway", "client_secret_file": "secrets/maps.secret",
                                  "issuer": "https://id.example.com", "scope": "skills:read"}}

A token file is read again for every connection (a rotated token is used at once; the first token in the file, as
`client.credentials.first_token` reads it). Client credentials use the SDK's `ClientCredentialsOAuthProvider`: the
token endpoint is discovered from the upstream's protected-resource metadata and the issuer's metadata (only that
issuer's), the token is kept in memory and replaced `RENEW_BEFORE_S` before it expires. Neither the token nor the
secret is ever logged or shown: a refusal names only the upstream and what failed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path

import httpx2
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from skillwire.client.credentials import first_token
from skillwire.core.errors import SkillwireError, SpecError
from skillwire.sources.mcp.jsonfile import read_json_file
from skillwire.sources.safe_open import read_regular

__all__ = ["RENEW_BEFORE_S", "AuthFactory", "ClientCredentials", "RenewingTokens", "TokenFile", "load_credentials"]

RENEW_BEFORE_S = 60.0
_MAX_FILE_BYTES = 1 << 20
_MAX_SECRET_BYTES = 4096

AuthFactory = Callable[[], httpx2.Auth]
"""Makes the `httpx2.Auth` for one connection (each refresh and each change stream connects anew)."""


@dataclass(frozen=True, slots=True)
class TokenFile:
    """A bearer token read from `path` for every connection."""

    path: str

    def factory(self, url: str) -> AuthFactory:
        return lambda: _TokenFileAuth(self.path)


@dataclass(frozen=True, slots=True)
class ClientCredentials:
    """OAuth client credentials: the client, the file holding its secret, the issuer and the scope to ask for."""

    client_id: str
    secret_file: str
    issuer: str
    scope: str | None = None

    def factory(self, url: str) -> AuthFactory:
        tokens = RenewingTokens()  # shared by every connection to this upstream: one token until it is about to expire

        def make() -> httpx2.Auth:
            return ClientCredentialsOAuthProvider(
                server_url=url,
                storage=tokens,
                client_id=self.client_id,
                client_secret=_secret(self.secret_file),
                scope=self.scope,
                issuer=self.issuer,
            )

        return make


def load_credentials(path: str) -> dict[str, TokenFile | ClientCredentials]:
    """The credentials FILE names, by upstream URL; SpecError saying what is wrong with FILE (never a secret)."""
    raw = read_json_file(path, limit=_MAX_FILE_BYTES, what="a credentials file")
    if not isinstance(raw, dict):
        raise SpecError(f"{path}: an object of upstream URLs is expected")
    folder = Path(os.path.abspath(path)).parent
    found: dict[str, TokenFile | ClientCredentials] = {}
    for url, given in raw.items():
        if not url.startswith(("http://", "https://")):
            raise SpecError(f"{path}: {url[:200]!r} is not an upstream URL (credentials are for http(s) upstreams)")
        found[url] = _credential(given, folder, f"{path}: {url[:200]}")
    return found


def _credential(given: object, folder: Path, where: str) -> TokenFile | ClientCredentials:
    if not isinstance(given, dict):
        raise SpecError(f"{where}: an object with token_file, or client_id and client_secret_file, is expected")
    keys = set(given)
    if keys == {"token_file"} and isinstance(given["token_file"], str):
        return TokenFile(str(folder / given["token_file"]))
    allowed = {"client_id", "client_secret_file", "issuer", "scope"}
    strings = all(isinstance(given[k], str) for k in keys)
    if keys <= allowed and {"client_id", "client_secret_file", "issuer"} <= keys and strings:
        if not given["issuer"].startswith(("http://", "https://")):
            raise SpecError(f"{where}: issuer must be the authorization server's http(s) URL")
        return ClientCredentials(
            given["client_id"], str(folder / given["client_secret_file"]), given["issuer"], given.get("scope")
        )
    raise SpecError(
        f"{where}: either token_file, or client_id, client_secret_file and issuer (and scope), all strings; "
        f"got {', '.join(sorted(keys)) or 'nothing'}"
    )


class _TokenFileAuth(httpx2.Auth):
    """`Authorization: Bearer <the first token in the file>` on every request of one connection."""

    def __init__(self, path: str) -> None:
        self.token = first_token(path)

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        request.headers["Authorization"] = f"Bearer {self.token}"
        yield request


class RenewingTokens:
    """The SDK's token storage, in memory: a token is handed out until `RENEW_BEFORE_S` before it expires, so a
    new one is asked for before the upstream would refuse the old."""

    def __init__(self) -> None:
        self._token: OAuthToken | None = None
        self._expires_at: float | None = None
        self._client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        if self._token is None:
            return None
        if self._expires_at is None:
            return self._token
        left = self._expires_at - time.time() - RENEW_BEFORE_S
        if left <= 0:
            return None
        return self._token.model_copy(update={"expires_in": int(left)})

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._token = tokens
        self._expires_at = None if tokens.expires_in is None else time.time() + tokens.expires_in

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self._client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._client = client_info


def _secret(path: str) -> str:
    """The client secret: the first line of a regular file of at most 4 KiB, without surrounding spaces."""
    try:
        data = read_regular(path, limit=_MAX_SECRET_BYTES, follow_links=True)
    except OSError as err:
        raise SkillwireError(f"cannot read the client secret file {path}: {err.strerror or err}") from None
    lines = data.decode("utf-8", "replace").strip().splitlines()
    if len(data) > _MAX_SECRET_BYTES or not lines or not lines[0].strip():
        raise SkillwireError(f"the client secret file {path} holds no secret of at most {_MAX_SECRET_BYTES} bytes")
    return lines[0].strip()
