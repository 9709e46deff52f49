"""`SkillsClient`: the Skills extension spoken to ONE connected server, through the SDK's `mcp.Client`.

Capability Negotiation ("Clients issue skills/list and skills/get only after
observing the server's declaration"; "Clients MUST NOT call
resources/directory/read against a server that has not declared
directoryRead: true"), Listing Skills (pagination), Getting a Skill, Reading
Skill Content (plain `resources/read`) and Reading Directories. This module
holds the connection and what was negotiated on it, and sends the requests; the
answers' shapes are checked in `answers.py`, the skills/list walk (an invalid
entry dropped with its reason, the rest still usable) is `listing.py`. Digests
are not verified here (that is `skillwire.core.hosting.verify`, against a held entry).

    async with SkillsClient.connect("http://127.0.0.1:8000/mcp") as skills:
        listing = await skills.list_entries()
        data = await skills.read(listing.entries[0].uri)      # raw bytes, still to be verified
"""

from __future__ import annotations

import logging
import shlex
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, TextIO, TypeVar

import anyio
import httpx2
from mcp import Client
from mcp.client.extension import advertise
from mcp.client.stdio import StdioServerParameters
from mcp.client.subscriptions import SubscriptionLost
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, PaginatedRequestParams, Request, Result
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError

from skillwire.client.answers import (
    DirectoryListingItem,
    content_bytes,
    directory_item,
    first_error,
)
from skillwire.client.bounded import ResponseMeter, bounded_http_client, bounded_stdio_client, environment_proxy
from skillwire.client.credentials import authentication_required
from skillwire.client.listing import Listing, walk_listing
from skillwire.client.paging import Progress
from skillwire.core.errors import (
    DirectoryReadNotDeclared,
    ExtensionNotDeclared,
    InvalidEntry,
    RequestFailed,
    ResponseTooLarge,
    UnexpectedResponse,
)
from skillwire.core.hosting.entry import SkillEntry, parse_entry
from skillwire.core.hosting.limits import DEFAULT_LIMITS, ClientLimits
from skillwire.core.uri import normal_uri, same_uri
from skillwire.core.wire import (
    DIRECTORY_READ,
    EXTENSION_ID,
    RESOURCES_READ,
    SKILLS_GET,
    DirectoryReadRequest,
    DirectoryReadRequestParams,
    DirectoryReadResult,
    SkillsGetParams,
    SkillsGetRequest,
    SkillsGetResult,
    SkillsListRequest,
    SkillsListResult,
)

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 30.0

Target = str | Sequence[str] | Server[Any] | MCPServer

_R = TypeVar("_R", bound=Result)

LISTEN = "subscriptions/listen"


# -- the client --------------------------------------------------------------------------------------------------------


class SkillsClient:
    """The Skills extension over one connected SDK `Client`. Build it with `SkillsClient.connect(...)`.

    `server_name` and `server_version` are the server's self-reported serverInfo: display only. A host identifies
    servers by its own label ("Hosts MUST identify servers by a host-assigned label,
    not the server's self-reported serverInfo.name").
    """

    def __init__(self, client: Client, *, meter: ResponseMeter | None = None) -> None:
        self._client = client
        self._meter = meter if meter is not None else ResponseMeter(DEFAULT_LIMITS)
        settings = (client.server_capabilities.extensions or {}).get(EXTENSION_ID)
        self.declared: bool = isinstance(settings, dict)
        self.directory_read: bool = isinstance(settings, dict) and settings.get("directoryRead") is True
        info = client.server_info
        self.server_name: str | None = info.name if info is not None else None
        self.server_version: str | None = info.version if info is not None else None
        self.reads: list[str] = []

    @classmethod
    @asynccontextmanager
    async def connect(
        cls,
        target: Target,
        *,
        mode: str = "auto",
        read_timeout_seconds: float | None = DEFAULT_TIMEOUT_S,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        errlog: TextIO | None = None,
        limits: ClientLimits = DEFAULT_LIMITS,
        auth: httpx2.Auth | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[SkillsClient]:
        """Connect to `target` and yield a client; the connection closes when the block ends.

        `target`: an `http://`/`https://` URL (streamable HTTP); a command line (a string,
        shlex-split) or an argv list, spawned as a stdio server (`env`, `cwd` and
        `errlog`, the server's stderr, apply only here); or an in-process low-level
        `Server` / `MCPServer`. `mode` is the SDK's: "auto" (2026-07-28 `server/discover`,
        falling back to `initialize`), "legacy" (`initialize` only), or a modern version.
        The SDK's response cache is off: a host must see what the server serves now.
        Over HTTP and stdio every answer is bounded by `limits` while it arrives (an
        in-process server has no wire to bound). `auth` (an httpx2 `Auth`) and `headers` (e.g.
        `{"Authorization": "Bearer ..."}`) go on every HTTP request; a 401/403 ends the connection
        with `AuthenticationRequired`, naming the authorization servers the server trusts. An error
        answer to the handshake is `RequestFailed` (its `method` is `connect`).
        """
        meter = ResponseMeter(limits)
        server: Any
        challenges: list[httpx2.Response] = []
        url: str | None = None
        if isinstance(target, Server | MCPServer):
            server = target
        elif isinstance(target, str) and target.startswith(("http://", "https://")):
            url = target
            server = bounded_http_client(target, meter, auth=auth, headers=headers, challenges=challenges)
        else:
            if auth is not None or headers:
                raise ValueError("auth and headers apply to http(s) servers only")
            argv = shlex.split(target) if isinstance(target, str) else list(target)
            if not argv:
                raise ValueError("an empty command line cannot start a stdio server")
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
            server = bounded_stdio_client(params, errlog if errlog is not None else sys.stderr, meter)
        client = Client(
            server,
            mode=mode,
            cache=None,
            read_timeout_seconds=read_timeout_seconds,
            extensions=[advertise(EXTENSION_ID)],
        )
        in_block = False
        try:
            async with client:
                in_block = True
                yield cls(client, meter=meter)
                in_block = False
        except Exception as err:
            if url is not None and challenges:
                sent = auth is not None or any(name.lower() == "authorization" for name in headers or {})
                raise await authentication_required(
                    url, challenges[-1], proxy=environment_proxy(url), token_sent=sent
                ) from None
            refused = None if in_block else _sdk_error(err)  # the caller's own block: its errors are its own
            if refused is not None:
                raise _failed(refused, "connect", None) from refused
            raise

    @property
    def limits(self) -> ClientLimits:
        """The caps this client holds the server to."""
        return self._meter.limits

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol version (2026-07-28, or a handshake-era one)."""
        return self._client.protocol_version

    @property
    def instructions(self) -> str | None:
        """The server's instructions, which may point at skill URIs (confirm them with `get_entry`)."""
        return self._client.instructions

    @property
    def sends_changes(self) -> bool:
        """Whether `changes` can follow this server: the 2026-07-28 era and a `resources.listChanged` capability."""
        resources = self._client.server_capabilities.resources
        modern = self.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS
        return modern and resources is not None and bool(resources.list_changed)

    @asynccontextmanager
    async def changes(self) -> AsyncIterator[AsyncIterator[object]]:
        """The server's change events for its resources (skills are resources): a `subscriptions/listen` stream
        asking for `resourcesListChanged`. Each event means "list again"; the loop ends when the server closes the
        stream, and a dropped stream raises. Only when `sends_changes`; RequestFailed when the server refuses."""
        if not self.sends_changes:
            raise RuntimeError("the server sends no change events (see sends_changes)")
        try:
            async with self._client.listen(resources_list_changed=True) as subscription:
                yield subscription
        except MCPError as err:
            raise _failed(err, LISTEN, None) from err
        except SubscriptionLost as err:
            raise RequestFailed(LISTEN, CONNECTION_CLOSED, str(err)) from err

    # -- skills/list, skills/get ---------------------------------------------------------------------------------------

    async def list_entries(self, *, max_pages: int | None = None) -> Listing:
        """Every skills/list entry, following nextCursor; invalid entries land in `problems`, not in `entries`.

        Paging stops early (`complete=False`) on a repeated or non-string cursor, or past a
        limit (`max_pages`, default `limits.max_listing_pages`; `max_listing_entries`;
        `max_listing_bytes`, and `max_response_bytes` for one page, cut off as it arrives), or
        when it makes no progress (`max_stalled_pages` pages in a row, or `max_stalled_seconds`,
        without a new skill) or takes `max_listing_seconds` in all (`client/paging.py`).
        An entry whose uri was already listed is dropped as a problem (the first one is kept):
        one uri is one skill within a server. Each next page is asked for as soon as its cursor
        arrives, and the page in hand is checked a few entries at a time meanwhile, letting the
        event loop send that request: the server builds one page while the host checks the last.
        """
        self._require_extension()
        page_limit = self.limits.max_listing_pages if max_pages is None else max_pages
        return await walk_listing(self._list_page, self.limits, page_limit)

    async def _list_page(self, cursor: str | None, bound: int) -> tuple[SkillsListResult, int]:
        """Send skills/list for `cursor` (None: the first page), its answer bounded to `bound` bytes."""
        params = None if cursor is None else PaginatedRequestParams(cursor=cursor)
        return await self._send_measured(SkillsListRequest(params=params), SkillsListResult, None, bound)

    async def get_entry(self, uri: str) -> SkillEntry:
        """The current entry for the skill whose SKILL.md is `uri` (skills/get).

        Raises InvalidEntry if the server's entry breaks the entry rules, or if it is the
        entry of another skill; RequestFailed if the server answers with an error (-32602
        for an unknown skill).
        """
        self._require_extension()
        request = SkillsGetRequest(params=SkillsGetParams(uri=uri))
        result, _ = await self._send_measured(request, SkillsGetResult, uri, self.limits.max_response_bytes)
        if result.skill is None:
            raise UnexpectedResponse(SKILLS_GET, "the result has no `skill` object", uri=uri)
        entry = parse_entry(result.skill)
        if not same_uri(entry.uri, uri):
            raise InvalidEntry(entry.uri, f"skills/get for {uri[:200]} answered with the entry of another skill")
        return entry

    # -- resources/read, resources/directory/read ----------------------------------------------------------------------

    async def read(self, uri: str, *, size: int | None = None) -> bytes:
        """The raw bytes of the resource at `uri` (resources/read): text is UTF-8 encoded, a blob base64-decoded.

        `size` is the size the held entry lists: the answer may take at most
        `limits.read_bound(size)` bytes on the wire and is cut off as soon as it passes that
        (ResponseTooLarge). With no size listed, the content may be at most `limits.max_read_bytes`.
        The result must hold exactly one content item whose uri is `uri`. The bytes are
        not verified here: check them against the held entry (`verify_bytes`).
        """
        self.reads.append(uri)
        limit = self.limits.read_bound(size)
        with self._meter.expect(RESOURCES_READ, uri, limit=limit) as expectation:
            try:
                result = await self._client.read_resource(uri)
            except ValidationError as err:
                raise UnexpectedResponse(RESOURCES_READ, f"malformed result ({first_error(err)})", uri=uri) from None
            except MCPError as err:
                if expectation.passed is not None:
                    raise ResponseTooLarge(uri, method=RESOURCES_READ, limit=limit, expected=size) from None
                raise _failed(err, RESOURCES_READ, uri) from err
        data = content_bytes(uri, result.contents)
        if size is None and len(data) > self.limits.max_read_bytes:
            raise ResponseTooLarge(uri, method=RESOURCES_READ, limit=self.limits.max_read_bytes)
        return data

    async def read_directory(self, uri: str, *, max_pages: int = 100) -> tuple[DirectoryListingItem, ...]:
        """The direct children of the directory resource `uri`, following cursors.

        Refuses, without sending anything, unless the server declared `directoryRead: true`.
        Children that are not direct children of `uri` are dropped with a warning, and so is a
        child listed twice. Paging that does not end (a repeated cursor, more than `max_pages`,
        past `limits.max_listing_bytes`, or no progress: `Progress`) raises UnexpectedResponse
        or ResponseTooLarge: a partial directory is not returned as if it were whole. The
        result is a live observation; it never extends a held entry's manifest.
        """
        if not self.directory_read:
            raise DirectoryReadNotDeclared(self.server_name)
        items: dict[str, DirectoryListingItem] = {}
        seen_cursors: set[str] = set()
        cursor: str | None = None
        received = 0
        progress = Progress(self.limits, now=anyio.current_time(), what="child")
        for _ in range(max_pages):
            request = DirectoryReadRequest(params=DirectoryReadRequestParams(uri=uri, cursor=cursor))
            bound = min(self.limits.max_response_bytes, self.limits.max_listing_bytes - received)
            deadline, late = progress.deadline()
            with anyio.CancelScope(deadline=deadline) as waiting:
                page, took = await self._send_measured(request, DirectoryReadResult, uri, bound)
            if waiting.cancelled_caught:
                raise UnexpectedResponse(DIRECTORY_READ, f"paging stopped: {late}", uri=uri)
            received += took
            if not isinstance(page.resources, list):
                raise UnexpectedResponse(DIRECTORY_READ, "the result has no `resources` array", uri=uri)
            before, strangers, repeats = len(items), 0, 0
            for raw in page.resources:
                item = directory_item(uri, raw)
                if item is None:
                    strangers += 1
                elif (key := normal_uri(item.uri)) in items:  # one child in two spellings is listed twice
                    repeats += 1
                else:
                    items[key] = item
            if strangers or repeats:
                logger.warning(
                    "resources/directory/read %s: dropped %d children that are not direct children, %d listed twice",
                    uri,
                    strangers,
                    repeats,
                )
            next_cursor = page.next_cursor
            if next_cursor is None:
                return tuple(items.values())
            if not isinstance(next_cursor, str) or next_cursor in seen_cursors or next_cursor == "":
                raise UnexpectedResponse(DIRECTORY_READ, "the server repeated (or mangled) its cursor", uri=uri)
            if (why := progress.page(now=anyio.current_time(), added=len(items) - before)) is not None:
                raise UnexpectedResponse(DIRECTORY_READ, f"paging stopped: {why}", uri=uri)
            seen_cursors.add(next_cursor)
            cursor = next_cursor
        raise UnexpectedResponse(DIRECTORY_READ, f"paging did not end within {max_pages} pages", uri=uri)

    # -- plumbing ------------------------------------------------------------------------------------------------------

    def _require_extension(self) -> None:
        if not self.declared:
            raise ExtensionNotDeclared(self.server_name)

    async def _send_measured(
        self, request: Request[Any, Any], result_type: type[_R], name: str | None, limit: int
    ) -> tuple[_R, int]:
        """Send one extension request whose answer may take `limit` bytes; the result and the bytes it took.

        A result the SDK cannot parse becomes UnexpectedResponse; an answer cut off at its
        bound becomes ResponseTooLarge (named by `name`, else by the method); an error answer, RequestFailed.
        """
        with self._meter.expect(request.method, name, limit=limit) as expectation:
            try:
                result = await self._client.session.send_request(request, result_type)
            except ValidationError as err:
                raise UnexpectedResponse(request.method, f"malformed result ({first_error(err)})", uri=name) from None
            except MCPError as err:
                if expectation.passed is not None:
                    raise ResponseTooLarge(name or request.method, method=request.method, limit=limit) from None
                raise _failed(err, request.method, name) from err
            return result, expectation.received


def _sdk_error(err: BaseException) -> MCPError | None:
    """The SDK's MCPError that `err` is, or that its task groups wrapped (alone) in `err`; else None."""
    while isinstance(err, BaseExceptionGroup) and len(err.exceptions) == 1:
        err = err.exceptions[0]
    return err if isinstance(err, MCPError) else None


def _failed(err: MCPError, method: str, uri: str | None) -> RequestFailed:
    """The SDK's error for a request, as the skillwire exception a caller catches (`err` stays its `__cause__`)."""
    return RequestFailed(method, err.code, err.message, uri=uri, data=err.data)
