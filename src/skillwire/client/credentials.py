"""Bearer tokens for HTTP servers, and what a 401 says about where to get one (MCP authorization, RFC 9728).

A client sends `Authorization: Bearer TOKEN` from a token file (its first token: the format `skillwire
serve --token-file` reads) or from headers given as is. When a server answers 401 or 403, its
`WWW-Authenticate` header names its Protected Resource Metadata; that document names the authorization
servers a token must come from, and `authentication_required` turns it into one clear error.

    headers = {"Authorization": f"Bearer {first_token('ci.token')}"}
    async with SkillsClient.connect(url, headers=headers) as client: ...
"""

from __future__ import annotations

import json
import os
import re
import stat
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    extract_field_from_www_auth,
    extract_resource_metadata_from_www_auth,
)

from skillwire.core.errors import AuthenticationRequired, SkillwireError

__all__ = ["authentication_required", "first_token", "parse_header"]

MAX_TOKEN_FILE_BYTES = 1024 * 1024
MAX_METADATA_BYTES = 64 * 1024
METADATA_TIMEOUT_S = 10.0
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 6750 §2.1 b64token
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 token
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")


def first_token(path: str) -> str:
    """The first token in a token file (blank lines and `#` comments skipped; words after the token ignored)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise SkillwireError(f"cannot open the token file {path}: {error.strerror or error}") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise SkillwireError(f"the token file {path} is not a regular file")
        data = handle.read(MAX_TOKEN_FILE_BYTES + 1)
    if len(data) > MAX_TOKEN_FILE_BYTES:
        raise SkillwireError(f"the token file {path} is larger than {MAX_TOKEN_FILE_BYTES:,} bytes")
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if not _TOKEN.fullmatch(words[0]):
            raise SkillwireError(f"{path}:{number}: not a bearer token (A-Z a-z 0-9 - . _ ~ + / then '=')")
        return words[0]
    raise SkillwireError(f"the token file {path} holds no token")


def parse_header(text: str) -> tuple[str, str]:
    """`Name: value` as a (name, value) pair; no control characters (a header cannot smuggle another)."""
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not _HEADER_NAME.fullmatch(name) or not _HEADER_VALUE.fullmatch(value):
        # The text is not quoted back: it may well hold a token.
        raise SkillwireError("a header is 'Name: value' in printable ASCII, e.g. 'Authorization: Bearer TOKEN'")
    return name, value


def _same_origin(a: str, b: str) -> bool:
    pa, pb = urlsplit(a), urlsplit(b)
    return (pa.scheme, pa.hostname, pa.port) == (pb.scheme, pb.hostname, pb.port)


async def _metadata(client: httpx2.AsyncClient, url: str) -> dict[str, object] | None:
    """The JSON object at `url`, read to at most MAX_METADATA_BYTES; None if anything is off."""
    try:
        with anyio.fail_after(METADATA_TIMEOUT_S):
            headers = {"Accept": "application/json", "Accept-Encoding": "identity"}  # raw bytes, counted
            async with client.stream("GET", url, headers=headers) as response:
                if response.status_code != 200 or response.headers.get("content-encoding", "identity") != "identity":
                    return None
                body = bytearray()
                async for chunk in response.aiter_raw():
                    body += chunk
                    if len(body) > MAX_METADATA_BYTES:
                        return None
    except (TimeoutError, httpx2.HTTPError):
        return None
    try:
        value = json.loads(bytes(body))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


async def authentication_required(
    url: str, challenge: httpx2.Response, *, proxy: str | None = None, token_sent: bool = False
) -> AuthenticationRequired:
    """The error for a 401/403 `challenge` from the server at `url`, naming the authorization servers it trusts.

    The metadata is looked for where `WWW-Authenticate` says, then at the RFC 9728 well-known URLs, but only on
    the server's own origin: a hostile server cannot make the client fetch from elsewhere.
    """
    servers: tuple[str, ...] = ()
    candidates = build_protected_resource_metadata_discovery_urls(
        extract_resource_metadata_from_www_auth(challenge), url
    )
    if challenge.status_code == 401:
        async with httpx2.AsyncClient(follow_redirects=False, proxy=proxy) as client:
            for candidate in (c for c in candidates if _same_origin(c, url)):
                metadata = await _metadata(client, candidate)
                listed = metadata.get("authorization_servers") if metadata is not None else None
                if isinstance(listed, list):
                    servers = tuple(str(s) for s in listed if isinstance(s, str))
                    break
    return AuthenticationRequired(
        url,
        status=challenge.status_code,
        error=extract_field_from_www_auth(challenge, "error"),
        authorization_servers=servers,
        scope=extract_field_from_www_auth(challenge, "scope") or _required_scope(challenge),
        token_sent=token_sent,
    )


def _required_scope(challenge: httpx2.Response) -> str | None:
    """The SDK's 403 says `error_description="Required scope: X"`."""
    description = extract_field_from_www_auth(challenge, "error_description") or ""
    prefix = "Required scope: "
    return description[len(prefix) :] if description.startswith(prefix) else None
