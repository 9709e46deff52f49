"""`SkillsClient`: the Skills extension spoken to ONE connected server, through the SDK's `mcp.Client`.

Capability Negotiation ("Clients issue skills/list and skills/get only after
observing the server's declaration"; "Clients MUST NOT call
resources/directory/read against a server that has not declared
directoryRead: true"), Listing Skills (pagination), Getting a Skill, Reading
Skill Content (plain `resources/read`) and Reading Directories. Entries are
checked with `parse_entry`; an invalid entry is dropped with its reason and the
rest of the listing stays usable. This module fetches and checks shapes; it
does not verify digests (that is `skillwire.host.verify`, against a held entry).

    async with SkillsClient.connect("http://127.0.0.1:8000/mcp") as skills:
        listing = await skills.list_entries()
        data = await skills.read(listing.entries[0].uri)      # raw bytes, still to be verified
"""

from __future__ import annotations

import base64
import binascii
import logging
import shlex
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO, TypeVar

import anyio
import anyio.lowlevel
import httpx2
from anyio.abc import TaskGroup
from mcp import Client
from mcp.client.extension import advertise
from mcp.client.stdio import StdioServerParameters
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import BlobResourceContents, PaginatedRequestParams, Request, Result, TextResourceContents
from pydantic import ConfigDict, ValidationError

from skillwire.client.bounded import ResponseMeter, bounded_http_client, bounded_stdio_client, environment_proxy
from skillwire.client.credentials import authentication_required
from skillwire.errors import ResponseTooLarge, SkillwireError
from skillwire.host.entry import InvalidEntry, SkillEntry, parse_entry
from skillwire.host.limits import DEFAULT_LIMITS, ClientLimits
from skillwire.uri import same_uri
from skillwire.wire import DIRECTORY_READ, EXTENSION_ID, RESOURCES_READ, SKILLS_GET, SKILLS_LIST, SkillsGetParams

logger = logging.getLogger(__name__)

DIRECTORY_MIME_TYPE = "inode/directory"
DEFAULT_TIMEOUT_S = 30.0
_CHECKED_AT_ONCE = 10  # listing entries checked between two turns of the event loop (about 0.3 ms)

Target = str | Sequence[str] | Server[Any] | MCPServer


# -- errors ------------------------------------------------------------------------------------------------------------


class NotDeclared(SkillwireError):
    """The server did not declare a feature, so the client refused to call it (nothing was sent)."""

    def __init__(self, message: str, *, feature: str, server_name: str | None) -> None:
        super().__init__(message)
        self.feature = feature
        self.server_name = server_name


class ExtensionNotDeclared(NotDeclared):
    """The server's capabilities do not declare `io.modelcontextprotocol/skills`: no skills/* call is made."""

    def __init__(self, server_name: str | None) -> None:
        shown = f"server {server_name!r}" if server_name else "the server"
        super().__init__(
            f"{shown} does not declare the {EXTENSION_ID} extension; skills/list and skills/get were not called",
            feature=EXTENSION_ID,
            server_name=server_name,
        )


class DirectoryReadNotDeclared(NotDeclared):
    """The server did not declare `directoryRead: true`, so resources/directory/read MUST NOT be called."""

    def __init__(self, server_name: str | None) -> None:
        shown = f"server {server_name!r}" if server_name else "the server"
        super().__init__(
            f"{shown} does not declare directoryRead: true; resources/directory/read was not called",
            feature=f"{EXTENSION_ID}#directoryRead",
            server_name=server_name,
        )


class UnexpectedResponse(SkillwireError):
    """The server answered with something the spec does not allow (the peer is wrong, not us)."""

    def __init__(self, method: str, reason: str, *, uri: str | None = None) -> None:
        where = f" for {uri[:200]}" if uri else ""
        super().__init__(f"{method}{where}: {reason}")
        self.method = method
        self.reason = reason
        self.uri = uri


# -- values ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Listing:
    """Every usable entry of a skills/list walk, the entries dropped (with reasons), and whether paging finished.

    `complete` is False when paging was cut off (a repeated cursor, a bad cursor, or one of
    the `ClientLimits`: pages, entries, bytes); `cutoff` then says why. Even a complete
    listing is not proof that a server has no other skills (Listing Skills): skills/get
    answers for unlisted ones.
    """

    entries: tuple[SkillEntry, ...]
    problems: tuple[InvalidEntry, ...]
    complete: bool
    cutoff: str | None = None

    def __post_init__(self) -> None:
        if self.complete != (self.cutoff is None):
            raise ValueError("a Listing is complete exactly when it has no cutoff reason")


class _Walk:
    """The entries of a skills/list walk so far: each page's raw entries checked (`parse_entry`), repeats dropped."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self.entries: list[SkillEntry] = []
        self.problems: list[InvalidEntry] = []
        self.listed: set[str] = set()
        self.counted = 0

    def add(self, raws: list[Any]) -> None:
        """Check some of a page's entries, up to the listing's entry limit."""
        for raw in raws[: max(0, self.max_entries - self.counted)]:
            try:
                entry = parse_entry(raw)
            except InvalidEntry as problem:
                self.problems.append(problem)
                continue
            if entry.uri in self.listed:
                self.problems.append(InvalidEntry(entry.uri, "listed more than once; the first entry is kept"))
                continue
            self.listed.add(entry.uri)
            self.entries.append(entry)
        self.counted += len(raws)

    def listing(self, cutoff: str | None) -> Listing:
        return Listing(tuple(self.entries), tuple(self.problems), complete=cutoff is None, cutoff=cutoff)


@dataclass(slots=True, eq=False)
class _PageAhead:
    """A skills/list request sent before the previous page was checked: its answer (or error), once it came."""

    bound: int
    done: anyio.Event = field(default_factory=anyio.Event)
    page: tuple[_SkillsListResult, int] | None = None
    error: Exception | None = None

    async def answer(self) -> tuple[_SkillsListResult, int]:
        await self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.page is not None
        return self.page


@dataclass(frozen=True, slots=True)
class DirectoryListingItem:
    """One direct child from resources/directory/read: a file, or a directory (`mimeType: inode/directory`)."""

    uri: str
    name: str
    mime_type: str | None = None
    size: int | None = None
    description: str | None = None

    @property
    def is_directory(self) -> bool:
        return self.mime_type == DIRECTORY_MIME_TYPE


# -- the extension's requests and results on the wire ------------------------------------------------------------------


class _SkillsListRequest(Request[PaginatedRequestParams | None, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: PaginatedRequestParams | None = None


class _SkillsGetRequest(Request[SkillsGetParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"
    params: SkillsGetParams


class _DirectoryReadParams(PaginatedRequestParams):
    uri: str


class _DirectoryReadRequest(Request[_DirectoryReadParams, Literal["resources/directory/read"]]):
    method: Literal["resources/directory/read"] = "resources/directory/read"
    params: _DirectoryReadParams


class _OpenResult(Result):
    """Keeps every key the server sent; fields are `Any` so this module checks them and names the problem."""

    model_config = ConfigDict(extra="allow")


class _SkillsListResult(_OpenResult):
    skills: Any = None
    next_cursor: Any = None


class _SkillsGetResult(_OpenResult):
    skill: Any = None


class _DirectoryReadResult(_OpenResult):
    resources: Any = None
    next_cursor: Any = None


_R = TypeVar("_R", bound=Result)


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
        with `AuthenticationRequired`, naming the authorization servers the server trusts.
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
        try:
            async with client:
                yield cls(client, meter=meter)
        except Exception:
            if url is None or not challenges:
                raise
            sent = auth is not None or any(name.lower() == "authorization" for name in headers or {})
            raise await authentication_required(
                url, challenges[-1], proxy=environment_proxy(url), token_sent=sent
            ) from None

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

    # -- skills/list, skills/get ---------------------------------------------------------------------------------------

    async def list_entries(self, *, max_pages: int | None = None) -> Listing:
        """Every skills/list entry, following nextCursor; invalid entries land in `problems`, not in `entries`.

        Paging stops early (`complete=False`) on a repeated or non-string cursor, or past a
        limit (`max_pages`, default `limits.max_listing_pages`; `max_listing_entries`;
        `max_listing_bytes`, and `max_response_bytes` for one page, cut off as it arrives).
        An entry whose uri was already listed is dropped as a problem (the first one is kept):
        one uri is one skill within a server. Each next page is asked for as soon as its cursor
        arrives, and the page in hand is checked a few entries at a time meanwhile, letting the
        event loop send that request: the server builds one page while the host checks the last.
        """
        self._require_extension()
        page_limit = self.limits.max_listing_pages if max_pages is None else max_pages
        if page_limit < 1:
            return _Walk(0).listing(f"stopped after {page_limit} pages")
        failed: Exception | None = None
        async with anyio.create_task_group() as tasks:
            try:
                listing = await self._walk_pages(tasks, page_limit)
            except Exception as err:  # raised below as itself, not wrapped in the task group's ExceptionGroup
                failed = err
            finally:
                tasks.cancel_scope.cancel()  # a page asked for ahead is not needed once the walk stopped
        if failed is not None:
            raise failed
        return listing

    async def _walk_pages(self, tasks: TaskGroup, page_limit: int) -> Listing:
        limits = self.limits
        walk = _Walk(limits.max_listing_entries)
        seen_cursors: set[str] = set()
        received = 0
        ahead = self._ask_ahead(tasks, None, min(limits.max_response_bytes, limits.max_listing_bytes))
        for page_number in range(1, page_limit + 1):
            try:
                page, took = await ahead.answer()
            except ResponseTooLarge:
                if ahead.bound < limits.max_response_bytes:
                    cut = f"the listing passed {limits.max_listing_bytes:,} bytes in {page_number} pages"
                else:
                    cut = f"page {page_number} passed {ahead.bound:,} bytes"
                return walk.listing(cut)
            received += took
            if not isinstance(page.skills, list):
                raise UnexpectedResponse(SKILLS_LIST, "the result has no `skills` array")
            raws: list[Any] = page.skills
            next_cursor = page.next_cursor
            end: str | None = None  # why the walk stops after this page ("" for a complete listing)
            if walk.counted + len(raws) > limits.max_listing_entries:
                end = f"the listing passed {limits.max_listing_entries:,} entries"
            elif next_cursor is None:
                end = ""
            elif (why := _cursor_problem(next_cursor, seen_cursors)) is not None:
                end = why
            elif page_number == page_limit:
                end = f"stopped after {page_limit} pages"
            else:
                assert isinstance(next_cursor, str)
                seen_cursors.add(next_cursor)
                bound = min(limits.max_response_bytes, limits.max_listing_bytes - received)
                ahead = self._ask_ahead(tasks, next_cursor, bound)
            for start in range(0, len(raws), _CHECKED_AT_ONCE):
                walk.add(raws[start : start + _CHECKED_AT_ONCE])
                await anyio.lowlevel.checkpoint()  # the request for the next page moves on meanwhile
            if end is not None:
                return walk.listing(end or None)
        raise AssertionError("every page either continues the walk or ends it")

    def _ask_ahead(self, tasks: TaskGroup, cursor: str | None, bound: int) -> _PageAhead:
        """Send the skills/list request for `cursor` now, in its own task; its answer is awaited later."""
        ahead = _PageAhead(bound)
        tasks.start_soon(self._fetch_page, ahead, cursor)
        return ahead

    async def _fetch_page(self, ahead: _PageAhead, cursor: str | None) -> None:
        try:
            params = None if cursor is None else PaginatedRequestParams(cursor=cursor)
            request = _SkillsListRequest(params=params)
            ahead.page = await self._send_measured(request, _SkillsListResult, None, ahead.bound)
        except Exception as err:  # handed to the walk, which raises it where it awaits this page
            ahead.error = err
        finally:
            ahead.done.set()

    async def get_entry(self, uri: str) -> SkillEntry:
        """The current entry for the skill whose SKILL.md is `uri` (skills/get).

        Raises InvalidEntry if the server's entry breaks the entry rules, or if it is the
        entry of another skill; an MCPError (-32602 for an unknown skill) passes through.
        """
        self._require_extension()
        request = _SkillsGetRequest(params=SkillsGetParams(uri=uri))
        result, _ = await self._send_measured(request, _SkillsGetResult, uri, self.limits.max_response_bytes)
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
                raise UnexpectedResponse(RESOURCES_READ, f"malformed result ({_first_error(err)})", uri=uri) from None
            except MCPError:
                if expectation.passed is not None:
                    raise ResponseTooLarge(uri, method=RESOURCES_READ, limit=limit, expected=size) from None
                raise
        data = _content_bytes(uri, result.contents)
        if size is None and len(data) > self.limits.max_read_bytes:
            raise ResponseTooLarge(uri, method=RESOURCES_READ, limit=self.limits.max_read_bytes)
        return data

    async def read_directory(self, uri: str, *, max_pages: int = 100) -> tuple[DirectoryListingItem, ...]:
        """The direct children of the directory resource `uri`, following cursors.

        Refuses, without sending anything, unless the server declared `directoryRead: true`.
        Children that are not direct children of `uri` are dropped with a warning. Paging
        that does not end (a repeated cursor, or more than `max_pages`) raises
        UnexpectedResponse: a partial directory is not returned as if it were whole. The
        result is a live observation; it never extends a held entry's manifest.
        """
        if not self.directory_read:
            raise DirectoryReadNotDeclared(self.server_name)
        items: list[DirectoryListingItem] = []
        seen_cursors: set[str] = set()
        cursor: str | None = None
        for _ in range(max_pages):
            request = _DirectoryReadRequest(params=_DirectoryReadParams(uri=uri, cursor=cursor))
            page, _ = await self._send_measured(request, _DirectoryReadResult, uri, self.limits.max_response_bytes)
            if not isinstance(page.resources, list):
                raise UnexpectedResponse(DIRECTORY_READ, "the result has no `resources` array", uri=uri)
            for raw in page.resources:
                item = _directory_item(uri, raw)
                if item is None:
                    logger.warning("resources/directory/read %s: dropped a child that is not a direct child", uri)
                else:
                    items.append(item)
            next_cursor = page.next_cursor
            if next_cursor is None:
                return tuple(items)
            if not isinstance(next_cursor, str) or next_cursor in seen_cursors or next_cursor == "":
                raise UnexpectedResponse(DIRECTORY_READ, "the server repeated (or mangled) its cursor", uri=uri)
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
        bound becomes ResponseTooLarge (named by `name`, else by the method).
        """
        with self._meter.expect(request.method, name, limit=limit) as expectation:
            try:
                result = await self._client.session.send_request(request, result_type)
            except ValidationError as err:
                raise UnexpectedResponse(request.method, f"malformed result ({_first_error(err)})", uri=name) from None
            except MCPError:
                if expectation.passed is not None:
                    raise ResponseTooLarge(name or request.method, method=request.method, limit=limit) from None
                raise
            return result, expectation.received


def _content_bytes(uri: str, contents: Sequence[TextResourceContents | BlobResourceContents]) -> bytes:
    """The bytes of the one content item a resources/read result must hold (for `uri`, and nothing else)."""
    if len(contents) != 1:
        raise UnexpectedResponse(RESOURCES_READ, f"expected one content item, got {len(contents)}", uri=uri)
    item = contents[0]
    if item.uri != uri:
        raise UnexpectedResponse(RESOURCES_READ, f"the content item is for {item.uri[:200]!r}", uri=uri)
    if isinstance(item, TextResourceContents):
        try:
            return item.text.encode("utf-8")
        except UnicodeEncodeError:
            raise UnexpectedResponse(RESOURCES_READ, "text holds a lone surrogate (not UTF-8)", uri=uri) from None
    assert isinstance(item, BlobResourceContents)
    try:
        return base64.b64decode(item.blob, validate=True)
    except (binascii.Error, ValueError):
        raise UnexpectedResponse(RESOURCES_READ, "blob is not valid base64", uri=uri) from None


def _directory_item(directory: str, raw: object) -> DirectoryListingItem | None:
    """A child of `directory` from its wire form, or None if it is not a direct child with a uri."""
    if not isinstance(raw, dict):
        return None
    uri = raw.get("uri")
    prefix = directory + "/"
    if not isinstance(uri, str) or not uri.startswith(prefix):
        return None
    tail = uri[len(prefix) :]
    if tail in ("", ".", "..") or "/" in tail:
        return None
    name, mime, size, description = raw.get("name"), raw.get("mimeType"), raw.get("size"), raw.get("description")
    return DirectoryListingItem(
        uri=uri,
        name=name if isinstance(name, str) else tail,
        mime_type=mime if isinstance(mime, str) else None,
        size=size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None,
        description=description if isinstance(description, str) else None,
    )


def _cursor_problem(cursor: object, seen: set[str]) -> str | None:
    """Why a nextCursor cannot be followed (not a string, empty, or repeated), or None if it can."""
    if not isinstance(cursor, str):
        return f"nextCursor is a {type(cursor).__name__}, not a string"
    if cursor == "":
        return "nextCursor is an empty string"
    if cursor in seen:
        return f"the server repeated the cursor {_shorten(cursor, 80)}"
    return None


def _shorten(text: str, limit: int) -> str:
    """A server's string, quoted for a message: escaped, and cut to `limit` characters."""
    clean = text.encode("unicode_escape").decode("ascii")
    return repr(clean if len(clean) <= limit else clean[:limit] + "...")


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0] if err.errors() else None
    if first is None:
        return "does not match the schema"
    where = ".".join(str(p) for p in first.get("loc", ())) or "(result)"
    return f"{where}: {first.get('msg', 'invalid')}"
