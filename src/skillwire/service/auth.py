"""Authentication for `skillwire serve --http`: an OAuth 2.1 resource server (MCP authorization), plus static tokens.

Built from the SDK's pieces: its `BearerAuthBackend` reads `Authorization: Bearer ...` and asks a
`TokenVerifier`; `AuthContextMiddleware` makes the caller available to handlers through
`mcp.server.auth.middleware.auth_context.get_access_token()` (subject, scopes, claims);
`_RequireToken` (the SDK's `RequireAuthMiddleware` with RFC 6750 §3's challenge) answers 401 with
`WWW-Authenticate: Bearer resource_metadata="<url>"`, adding `error="invalid_token"` only when a bearer token was
sent, and 403 `insufficient_scope` with `scope="<needed>"` for a valid token without a required scope;
`create_protected_resource_routes` serves
RFC 9728 Protected Resource Metadata. Every route is guarded (the MCP endpoint and the catalog page alike)
except the metadata itself, at `/.well-known/oauth-protected-resource` and at the path-suffixed form RFC 9728
§3.1 derives from the resource URL (`/.well-known/oauth-protected-resource/mcp`), and the probes.

Catalog-wide figures (`/metrics`, the detail of `/readyz`: see `ops.py`) are for operators: a token carrying
`OPERATOR_SCOPE`, and that scope alone (not the server's required scopes), so the credential Prometheus holds
need not be one that reads skills.

    config = AuthConfig(resource="https://skills.example.com/mcp", issuer="https://id.example.com")
    app = server.streamable_http_app(..., custom_starlette_routes=routes + metadata_routes(config))
    install(app, config, build_verifier(config))
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from skillwire.service.jwt_verifier import JwtSettings, JwtVerifier, is_loopback_url
from skillwire.service.token_file import TOKEN_FILE_ISSUER, TokenFile

__all__ = [
    "OPERATOR_SCOPE",
    "AuthConfig",
    "CompositeVerifier",
    "build_verifier",
    "install",
    "is_operator",
    "metadata_paths",
    "metadata_routes",
]

WELL_KNOWN = "/.well-known/oauth-protected-resource"
OPERATOR_SCOPE = "skillwire:operator"
"""The scope that shows catalog-wide figures (token file: `TOKEN subject=prometheus scopes=skillwire:operator`)."""


@dataclass(frozen=True, slots=True)
class AuthConfig:
    """How callers authenticate: `resource` is this server's MCP URL (the audience); an issuer or a token file."""

    resource: str
    issuer: str | None = None
    token_file: str | None = None
    required_scopes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.issuer is None and self.token_file is None:
            raise ValueError("authentication needs an issuer (--auth-issuer) or a token file (--token-file)")
        for name, url in (("the resource URL", self.resource), ("--auth-issuer", self.issuer)):
            parts = urlsplit(url or "http://unset")
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
                raise ValueError(f"{name} must be an http(s) URL without query or fragment, not {url!r}")
        if self.issuer is not None and urlsplit(self.issuer).scheme == "http" and not is_loopback_url(self.issuer):
            # The keys that decide who gets in would come over plain HTTP: anyone on the path could swap them.
            raise ValueError(f"--auth-issuer must be https (plain http only on loopback), not {self.issuer!r}")

    @property
    def metadata_url(self) -> str:
        """The Protected Resource Metadata URL named in WWW-Authenticate (RFC 9728 §3.1, path-suffixed)."""
        return str(build_resource_metadata_url(AnyHttpUrl(self.resource)))


class CompositeVerifier:
    """A `TokenVerifier` trying the token file (constant time, every token) and then the issuer's JWTs."""

    def __init__(self, verifiers: list[TokenVerifier]) -> None:
        self.verifiers = verifiers

    def granted(self, tokens: Sequence[AccessToken]) -> list[bool]:
        """`Credentials` (`listen_limits.py`): is each token still granted? A token-file token while its line stands
        (`TokenFile.granted`); a JWT cannot be revoked here (no introspection): it lasts until its `exp`."""
        answers = [True] * len(tokens)
        token_file = next((v for v in self.verifiers if isinstance(v, TokenFile)), None)
        if token_file is not None:
            from_file = [i for i, t in enumerate(tokens) if (t.claims or {}).get("iss") == TOKEN_FILE_ISSUER]
            for i, answer in zip(from_file, token_file.granted([tokens[i] for i in from_file]), strict=True):
                answers[i] = answer
        return answers

    async def verify_token(self, token: str) -> AccessToken | None:
        for verifier in self.verifiers:
            access = await verifier.verify_token(token)
            if access is not None:
                return access
        return None


def build_verifier(config: AuthConfig) -> CompositeVerifier:
    """The verifiers `config` asks for; a bad token file raises `TokenFileError` here, before the server listens."""
    verifiers: list[TokenVerifier] = []
    if config.token_file is not None:
        verifiers.append(TokenFile(config.token_file))
    if config.issuer is not None:
        verifiers.append(JwtVerifier(JwtSettings(issuer=config.issuer, resource=config.resource)))
    return CompositeVerifier(verifiers)


def metadata_paths(config: AuthConfig) -> tuple[str, ...]:
    """The paths that serve the metadata (and so are open to every caller)."""
    return tuple(dict.fromkeys((WELL_KNOWN, urlsplit(config.metadata_url).path)))


def metadata_routes(config: AuthConfig) -> list[Route]:
    """RFC 9728 metadata naming the issuer (none for token-file-only servers: a token comes from the operator)."""
    if config.issuer is None:
        return []
    # The SDK's AuthSettings keeps a path-less issuer as written: RFC 8414 compares issuers as exact strings,
    # and a bare AnyHttpUrl would add a trailing slash.
    settings = AuthSettings.model_validate(
        {
            "issuer_url": config.issuer,
            "resource_server_url": config.resource,
            "required_scopes": list(config.required_scopes) or None,
            "validate_token_resource": False,  # JwtVerifier checks the audience itself
        }
    )
    assert settings.resource_server_url is not None
    routes = create_protected_resource_routes(
        resource_url=settings.resource_server_url,
        authorization_servers=[settings.issuer_url],
        scopes_supported=settings.required_scopes,
        resource_name="skillwire",
    )
    suffixed = routes[0]
    if suffixed.path != WELL_KNOWN:
        routes.append(Route(WELL_KNOWN, endpoint=suffixed.endpoint, methods=list(suffixed.methods or ())))
    return routes


def is_operator(scope: Scope) -> bool:
    """Whether the request (after authentication) carries a valid token with `OPERATOR_SCOPE`."""
    user = scope.get("user")
    return isinstance(user, AuthenticatedUser) and OPERATOR_SCOPE in user.scopes


class _Guard:
    """Every path but the metadata goes through the SDK's `RequireAuthMiddleware`; operator paths need
    `OPERATOR_SCOPE` instead of the required scopes."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        config: AuthConfig,
        open_paths: tuple[str, ...] = (),
        operator_paths: tuple[str, ...] = (),
    ) -> None:
        self._open = app
        self._open_paths = frozenset(metadata_paths(config) + open_paths)
        self._operator_paths = frozenset(operator_paths)
        # Token-file-only servers publish no metadata (RFC 9728 metadata names an authorization server), so
        # their 401 names none either: the token comes from whoever runs the server.
        metadata = config.metadata_url if config.issuer is not None else None
        self._guarded = _RequireToken(app, config.required_scopes, metadata)
        self._operators_only = _RequireToken(app, (OPERATOR_SCOPE,), metadata)  # 403 names the scope

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path")
        if scope["type"] == "lifespan" or path in self._open_paths:
            await self._open(scope, receive, send)
        elif path in self._operator_paths:
            await self._operators_only(scope, receive, send)
        else:
            await self._guarded(scope, receive, send)


class _RequireToken:
    """Let through requests whose token (already verified by `BearerAuthBackend`) carries `scopes`; refuse others with
    RFC 6750 §3's challenge.

    The SDK's `RequireAuthMiddleware` says `error="invalid_token"` even to a request that sent no token, and its 403
    names the missing scope only in prose. RFC 6750 §3.1: a request lacking authentication gets no error code (it
    made no error); `invalid_token` is for a bearer token that was sent and refused; `insufficient_scope` comes
    with `scope`, the scopes the resource needs, so a client can ask for them.
    """

    def __init__(self, app: ASGIApp, scopes: Sequence[str], metadata_url: str | None) -> None:
        self.app = app
        self.scopes = tuple(scopes)
        self.metadata_url = metadata_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        if not isinstance(user, AuthenticatedUser):
            if _sent_bearer(scope):
                await self._refuse(send, 401, "invalid_token", "the bearer token is invalid, expired or revoked")
            else:
                await self._refuse(send, 401, None, "authentication required: send Authorization: Bearer <token>")
            return
        if any(needed not in user.scopes for needed in self.scopes):
            needed = " ".join(self.scopes)
            await self._refuse(send, 403, "insufficient_scope", f"the token lacks a scope: needs {needed}")
            return
        await self.app(scope, receive, send)

    async def _refuse(self, send: Send, status: int, error: str | None, description: str) -> None:
        params: list[tuple[str, str]] = []
        if error is not None:
            params += [("error", error), ("error_description", description)]
        if status == 403:
            params.append(("scope", " ".join(self.scopes)))
        if self.metadata_url is not None:
            params.append(("resource_metadata", self.metadata_url))
        challenge = "Bearer" + ("" if not params else " " + ", ".join(f'{k}="{v}"' for k, v in params))
        body = json.dumps(
            {"error": error, "error_description": description} if error else {"error_description": description}
        )
        payload = body.encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode()),
            (b"www-authenticate", challenge.encode()),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


def _sent_bearer(scope: Scope) -> bool:
    """Whether the request carried `Authorization: Bearer ...` (any other scheme, or none, is no token at all)."""
    headers = scope.get("headers", ())
    return any(name == b"authorization" and value[:7].lower() == b"bearer " for name, value in headers)


def install(
    app: Starlette,
    config: AuthConfig,
    verifier: TokenVerifier,
    *,
    open_paths: tuple[str, ...] = (),
    operator_paths: tuple[str, ...] = (),
) -> None:
    """Guard every route of `app` but the metadata and `open_paths` (the page too: a browser must send the header,
    e.g. a proxy); `operator_paths` need a token with `OPERATOR_SCOPE` (and no other scope)."""
    # add_middleware puts each new one outside the last: authentication runs first, then the context, then the guard.
    app.add_middleware(_Guard, config=config, open_paths=open_paths, operator_paths=operator_paths)
    app.add_middleware(AuthContextMiddleware)
    app.add_middleware(AuthenticationMiddleware, backend=BearerAuthBackend(verifier))
