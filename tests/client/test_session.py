"""SkillsClient against real servers (HTTP and stdio subprocesses, in-process) and hand-written misbehaving ones.

Capability Negotiation, Listing Skills (pagination), Getting a Skill, Reading
Skill Content, Reading Directories, Lazy Retrieval (`reads` proves what was read).
"""

from __future__ import annotations

import base64
import hashlib
import shlex
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import pytest
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import ReadResourceRequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skillwire import EXTENSION_ID, ServeOptions, SkillsExtension
from skillwire.client import SkillsClient
from skillwire.core.errors import (
    DirectoryReadNotDeclared,
    ExtensionNotDeclared,
    InvalidEntry,
    RequestFailed,
    UnexpectedResponse,
)
from skillwire.core.wire import DirectoryReadParams, SkillsGetParams, SkillsListParams
from skillwire.service.run import build_server
from tests.support import forkserver
from tests.support.servers import HttpServer, http_server

pytestmark = pytest.mark.anyio

Transport = Literal["http", "stdio", "inprocess"]
TRANSPORTS: tuple[Transport, ...] = ("http", "stdio", "inprocess")
MODES = ("auto", "legacy")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# -- a real skills folder, served three ways ------------------------------------------------------------------------

ALPHA_MD = b"---\r\nname: alpha\r\ndescription: CRLF line endings, kept as they are\r\n---\r\n# Alpha\r\n"
CRLF_DOC = b"first line\r\nsecond line\r\n"
BOM_DOC = b"\xef\xbb\xbfstarts with a byte order mark\n"
BINARY = bytes(range(256)) + b"\xff\xfe\x00"
FILES: dict[str, bytes] = {
    "alpha/SKILL.md": ALPHA_MD,
    "alpha/docs/crlf.md": CRLF_DOC,
    "alpha/docs/bom.md": BOM_DOC,
    "alpha/assets/blob.bin": BINARY,
    "beta/SKILL.md": b"---\nname: beta\ndescription: Second skill\n---\n# Beta\n",
    "gamma/SKILL.md": b"---\nname: gamma\ndescription: Third skill\n---\n# Gamma\n",
}
SKILL_URIS = {f"skill://{name}/SKILL.md" for name in ("alpha", "beta", "gamma")}


@pytest.fixture(scope="module")
def skills_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("skills")
    for rel, data in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


@pytest.fixture(scope="module")
def http(skills_root: Path) -> Iterator[HttpServer]:
    with http_server([skills_root], "--page-size", "1", "--quiet") as server:
        yield server


@asynccontextmanager
async def connected(
    transport: Transport, root: Path, http: Callable[[], HttpServer], log: Path, mode: str = "auto"
) -> AsyncIterator[SkillsClient]:
    """A SkillsClient on a real skillwire server serving `root` with one entry per page."""
    if transport == "http":
        async with SkillsClient.connect(http().url, mode=mode) as client:
            yield client
    elif transport == "stdio":
        argv = forkserver.command(["-m", "skillwire", "serve", str(root), "--page-size", "1", "--quiet"])
        with log.open("w", encoding="utf-8") as errlog:
            async with SkillsClient.connect(shlex.join(argv), mode=mode, errlog=errlog) as client:
                yield client
    else:
        server = build_server(SkillsExtension.from_paths([root], ServeOptions(page_size=1)))
        async with SkillsClient.connect(server, mode=mode) as client:
            yield client


@pytest.fixture
def connect_to(skills_root: Path, request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., Any]:
    def make(transport: Transport, mode: str = "auto") -> Any:
        return connected(transport, skills_root, lambda: request.getfixturevalue("http"), tmp_path / "stdio.log", mode)

    return make


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


# -- against the real server ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_listing_follows_cursors_to_every_entry(
    connect_to: Callable[..., Any], transport: Transport, mode: str
) -> None:
    """Spec MUST (Listing Skills: pagination mirrors the base list methods): with one entry per page, every entry
    arrives by following nextCursor, in both protocol eras, and listing reads no file (Lazy Retrieval MUST)."""
    async with connect_to(transport, mode) as client:
        assert client.declared
        assert client.directory_read
        assert client.server_name == "skillwire"
        if mode == "legacy":
            assert client.protocol_version not in MODERN_PROTOCOL_VERSIONS
        listing = await client.list_entries()
        assert listing.complete
        assert listing.cutoff is None
        assert listing.problems == ()
        assert {e.uri for e in listing.entries} == SKILL_URIS
        alpha = next(e for e in listing.entries if e.name == "alpha")
        assert alpha.skill_md is not None
        assert alpha.skill_md.digest == sha(ALPHA_MD)
        assert client.reads == []


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_read_returns_the_exact_bytes(connect_to: Callable[..., Any], transport: Transport) -> None:
    """Spec MUST (Integrity and Verification: digests cover raw bytes): CRLF, a BOM and binary come back byte for
    byte and match the listed digests; `reads` records each read in order (skillwire choice)."""
    async with connect_to(transport) as client:
        listing = await client.list_entries()
        alpha = next(e for e in listing.entries if e.name == "alpha")
        expected = {
            "skill://alpha/SKILL.md": ALPHA_MD,
            "skill://alpha/docs/crlf.md": CRLF_DOC,
            "skill://alpha/docs/bom.md": BOM_DOC,
            "skill://alpha/assets/blob.bin": BINARY,
        }
        for uri, data in expected.items():
            got = await client.read(uri)
            assert got == data
            record = alpha.resource(uri)
            assert record is not None
            assert record.digest == sha(got)
            assert record.size == len(got)
        assert client.reads == list(expected)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_get_entry_equals_the_listed_entry(connect_to: Callable[..., Any], transport: Transport) -> None:
    """Spec MUST (Getting a Skill: the entry is identical in shape and meaning to a listing entry); an unknown
    skill's -32602 is RequestFailed with the server's code, message and data, the SDK's MCPError its cause
    (skillwire choice, issue 20: no SDK exception crosses the public API)."""
    async with connect_to(transport) as client:
        listing = await client.list_entries()
        for entry in listing.entries:
            assert await client.get_entry(entry.uri) == entry
        with pytest.raises(RequestFailed) as caught:
            await client.get_entry("skill://nowhere/SKILL.md")
        failed = caught.value
        assert (failed.method, failed.uri, failed.code) == ("skills/get", "skill://nowhere/SKILL.md", -32602)
        assert failed.message == "No skill is served at skill://nowhere/SKILL.md"
        assert failed.data == {"uri": "skill://nowhere/SKILL.md"}
        assert isinstance(failed.__cause__, MCPError)
        assert failed.__cause__.code == -32602
        assert client.reads == []


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_read_directory_follows_cursors(connect_to: Callable[..., Any], transport: Transport) -> None:
    """Spec MUST (Reading Directories: direct children, subdirectories as inode/directory, paginated like
    resources/list): one child per page, all children arrive."""
    async with connect_to(transport) as client:
        children = await client.read_directory("skill://alpha")
        assert {(c.uri, c.is_directory) for c in children} == {
            ("skill://alpha/SKILL.md", False),
            ("skill://alpha/docs", True),
            ("skill://alpha/assets", True),
        }
        docs = await client.read_directory("skill://alpha/docs")
        assert {c.name for c in docs} == {"crlf.md", "bom.md"}
        assert client.reads == []


async def test_connect_takes_an_argv_list(skills_root: Path, tmp_path: Path) -> None:
    """skillwire choice: a stdio target may be an argv list as well as a shell-style command line."""
    argv = forkserver.command(["-m", "skillwire", "serve", str(skills_root), "--quiet"])
    with (tmp_path / "err.log").open("w", encoding="utf-8") as errlog:
        async with SkillsClient.connect(argv, errlog=errlog) as client:
            assert {e.uri for e in (await client.list_entries()).entries} == SKILL_URIS


# -- hand-written servers -------------------------------------------------------------------------------------------

Handler = Callable[[ServerRequestContext[Any, Any], Any], Any]


def good_entry(name: str) -> dict[str, Any]:
    body = f"---\nname: {name}\ndescription: d\n---\n".encode()
    uri = f"skill://{name}/SKILL.md"
    return {
        "uri": uri,
        "frontmatter": {"name": name, "description": "d"},
        "resources": [{"uri": uri, "digest": sha(body), "size": len(body)}],
    }


class FakeServer:
    """A low-level SDK server with hand-written handlers that counts every request it receives."""

    def __init__(self, settings: dict[str, Any] | None) -> None:
        self.server: Server[Any] = Server("fake")
        self.calls: list[str] = []
        if settings is not None:
            self.server.extensions[EXTENSION_ID] = settings
            self.server.middleware.append(self._declare_on_initialize)
        self._settings = settings

    def handle(self, method: str, params_type: type[Any], answer: Callable[[Any], dict[str, Any]]) -> None:
        async def handler(ctx: ServerRequestContext[Any, Any], params: Any) -> HandlerResult:
            self.calls.append(method)
            result = answer(params)
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and method in ("resources/read", "skills/list"):
                result = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", **result}
            return result

        self.server.add_request_handler(method, params_type, handler)

    async def _declare_on_initialize(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        # mcp 2.3 leaves `extensions` out of a handshake-era InitializeResult; put the declaration back.
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            result["capabilities"].setdefault("extensions", {})[EXTENSION_ID] = self._settings
        return result


@pytest.mark.parametrize("mode", MODES)
async def test_invalid_entries_are_dropped_with_reasons(mode: str) -> None:
    """Spec MUST (Resources: an invalid entry MUST NOT be loaded) and skillwire choice (one bad entry never fails
    the listing): bad entries land in `problems` with a reason, good ones stay usable; a repeated uri is dropped."""
    missing_resources = {k: v for k, v in good_entry("nores").items() if k != "resources"}
    wrong_name = {**good_entry("named"), "frontmatter": {"name": "other", "description": "d"}}
    bad_digest = good_entry("baddigest")
    bad_digest["resources"][0]["digest"] = "sha256:XYZ"
    fake = FakeServer({})
    pages: dict[str | None, dict[str, Any]] = {
        None: {
            "skills": [good_entry("one"), missing_resources, "not an object", wrong_name],
            "nextCursor": "p2",
        },
        "p2": {"skills": [bad_digest, {**good_entry("dyn"), "resources": "dynamic"}, good_entry("one")]},
    }
    fake.handle("skills/list", SkillsListParams, lambda p: pages[p.cursor])
    async with SkillsClient.connect(fake.server, mode=mode) as client:
        listing = await client.list_entries()
    assert listing.complete
    assert [e.uri for e in listing.entries] == ["skill://one/SKILL.md", "skill://dyn/SKILL.md"]
    assert listing.entries[1].is_dynamic
    reasons = {p.uri: p.reason for p in listing.problems}
    assert len(listing.problems) == 5
    assert "resources is missing" in reasons["skill://nores/SKILL.md"]
    assert reasons[None] == "an entry must be a JSON object"
    assert "differs from frontmatter.name" in reasons["skill://named/SKILL.md"]
    assert "digest" in reasons["skill://baddigest/SKILL.md"]
    assert "listed more than once" in reasons["skill://one/SKILL.md"]
    assert fake.calls == ["skills/list", "skills/list"]


async def test_a_repeated_cursor_stops_the_listing() -> None:
    """skillwire choice: a server that hands back a cursor it already gave cannot loop the client; the listing is
    returned with what arrived and marked incomplete (Listing Skills MUST: partial is not proof of absence)."""
    fake = FakeServer({})
    fake.handle(
        "skills/list",
        SkillsListParams,
        lambda p: {"skills": [good_entry("a" if p.cursor is None else "b")], "nextCursor": "again"},
    )
    async with SkillsClient.connect(fake.server) as client:
        listing = await client.list_entries()
    assert not listing.complete
    assert listing.cutoff is not None
    assert "repeated" in listing.cutoff
    assert [e.name for e in listing.entries] == ["a", "b"]
    assert fake.calls == ["skills/list", "skills/list"]


async def test_paging_stops_after_max_pages() -> None:
    """skillwire choice: a listing that never ends is cut off after `max_pages` requests, marked incomplete."""
    fake = FakeServer({})
    counter = iter(range(1_000_000))
    fake.handle("skills/list", SkillsListParams, lambda p: {"skills": [], "nextCursor": f"c{next(counter)}"})
    async with SkillsClient.connect(fake.server) as client:
        listing = await client.list_entries(max_pages=3)
    assert not listing.complete
    assert listing.cutoff == "stopped after 3 pages"
    assert len(fake.calls) == 3


@pytest.mark.parametrize("mode", MODES)
async def test_undeclared_extension_sends_no_skills_request(mode: str) -> None:
    """Spec MUST (Capability Negotiation: clients issue skills/list and skills/get only after observing the
    declaration): against a server that did not declare the extension nothing is sent."""
    fake = FakeServer(None)
    fake.handle("skills/list", SkillsListParams, lambda p: {"skills": [good_entry("a")]})
    fake.handle("skills/get", SkillsGetParams, lambda p: {"skill": good_entry("a")})
    async with SkillsClient.connect(fake.server, mode=mode) as client:
        assert not client.declared
        assert not client.directory_read
        with pytest.raises(ExtensionNotDeclared) as caught:
            await client.list_entries()
        assert caught.value.feature == EXTENSION_ID
        with pytest.raises(ExtensionNotDeclared):
            await client.get_entry("skill://a/SKILL.md")
    assert fake.calls == []


@pytest.mark.parametrize("settings", [{}, {"directoryRead": False}, {"directoryRead": "true"}])
async def test_directory_read_refused_without_declaration(settings: dict[str, Any]) -> None:
    """Spec MUST (Clients MUST NOT call resources/directory/read against a server that has not declared
    directoryRead: true): refused before anything is sent, even though the server would answer."""
    fake = FakeServer(settings)
    fake.handle("resources/directory/read", DirectoryReadParams, lambda p: {"resources": []})
    async with SkillsClient.connect(fake.server) as client:
        assert client.declared
        assert not client.directory_read
        with pytest.raises(DirectoryReadNotDeclared):
            await client.read_directory("skill://a")
    assert fake.calls == []


async def test_directory_read_drops_children_outside_the_directory() -> None:
    """skillwire choice: a directory result may only name direct children of the directory that was read."""
    fake = FakeServer({"directoryRead": True})
    children = [
        {"uri": "skill://a/ok.md", "name": "ok.md", "mimeType": "text/markdown", "size": 3},
        {"uri": "skill://a/sub", "name": "sub", "mimeType": "inode/directory"},
        {"uri": "skill://a/sub/deeper.md", "name": "deeper.md"},
        {"uri": "skill://b/elsewhere.md", "name": "elsewhere.md"},
        {"uri": "skill://a/..", "name": ".."},
        {"name": "no uri"},
    ]
    fake.handle("resources/directory/read", DirectoryReadParams, lambda p: {"resources": children})
    async with SkillsClient.connect(fake.server) as client:
        items = await client.read_directory("skill://a")
    assert [(i.uri, i.is_directory, i.size) for i in items] == [
        ("skill://a/ok.md", False, 3),
        ("skill://a/sub", True, None),
    ]


@pytest.mark.parametrize(
    ("contents", "problem"),
    [
        ([], "expected one content item, got 0"),
        ([{"uri": "skill://a/x.md", "text": "1"}, {"uri": "skill://a/x.md", "text": "2"}], "got 2"),
        ([{"uri": "skill://a/other.md", "text": "x"}], "the content item is for"),
        ([{"uri": "skill://a/x.md", "blob": "not base64!"}], "not valid base64"),
    ],
)
async def test_read_refuses_results_it_cannot_trust(contents: list[dict[str, Any]], problem: str) -> None:
    """skillwire choice: a read must yield exactly one content item for the uri asked, else UnexpectedResponse."""
    fake = FakeServer({})
    fake.handle("resources/read", ReadResourceRequestParams, lambda p: {"contents": contents})
    async with SkillsClient.connect(fake.server) as client:
        with pytest.raises(UnexpectedResponse) as caught:
            await client.read("skill://a/x.md")
        assert client.reads == ["skill://a/x.md"]
    assert problem in str(caught.value)


# One URI equality on the host side (`core.uri.same_uri`): another spelling of the uri asked for is that uri.
ASKED = "skill://a/caf%C3%A9.md"
RESPELLED = ("skill://a/caf%c3%a9.md", "skill://a/café.md", "skill://%61/caf%C3%A9.md")


@pytest.mark.parametrize("spelling", RESPELLED)
async def test_read_takes_a_content_item_for_another_spelling_of_the_uri(spelling: str) -> None:
    """skillwire choice (RFC 3986 6.2.2, as `same_uri` reads it): a content item whose uri differs from the one
    asked only in percent-encoding case, needless encoding or raw UTF-8 is for that uri, and its bytes are read."""
    fake = FakeServer({})
    fake.handle("resources/read", ReadResourceRequestParams, lambda p: {"contents": [{"uri": spelling, "text": "é"}]})
    async with SkillsClient.connect(fake.server) as client:
        assert await client.read(ASKED) == "é".encode()


async def test_directory_read_keeps_children_spelled_another_way() -> None:
    """skillwire choice: a child spelled another way than the directory asked for is still its child (kept with
    the uri the server sent), and one child in two spellings is listed once."""
    fake = FakeServer({"directoryRead": True})
    children = [
        {"uri": "skill://a/café/x.md", "name": "x.md"},
        {"uri": "skill://a/caf%c3%a9/y.md", "name": "y.md"},
        {"uri": "skill://a/caf%C3%A9/%78.md", "name": "x.md again"},
    ]
    fake.handle("resources/directory/read", DirectoryReadParams, lambda p: {"resources": children})
    async with SkillsClient.connect(fake.server) as client:
        items = await client.read_directory("skill://a/caf%C3%A9")
    assert [(i.uri, i.name) for i in items] == [("skill://a/café/x.md", "x.md"), ("skill://a/caf%c3%a9/y.md", "y.md")]


async def test_one_skill_listed_in_two_spellings_is_listed_once() -> None:
    """skillwire choice: two entries whose uris `same_uri` holds equal are one skill listed twice; the first is kept."""
    first, second = good_entry("one"), good_entry("one")
    for entry, uri in ((first, "skill://docs/one/SKILL.md"), (second, "skill://d%6Fcs/one/SKILL.md")):
        entry["uri"] = entry["resources"][0]["uri"] = uri
    fake = FakeServer({})
    fake.handle("skills/list", SkillsListParams, lambda p: {"skills": [first, second]})
    async with SkillsClient.connect(fake.server) as client:
        listing = await client.list_entries()
    assert [e.uri for e in listing.entries] == ["skill://docs/one/SKILL.md"]
    assert [(p.uri, p.reason) for p in listing.problems] == [
        ("skill://d%6Fcs/one/SKILL.md", "listed more than once; the first entry is kept")
    ]


async def test_read_decodes_a_blob() -> None:
    """Spec (base Resources): a blob is base64 of the raw bytes; `read` returns those bytes."""
    fake = FakeServer({})
    data = b"\x00\xffbinary\r\n"
    blob = base64.b64encode(data).decode()
    fake.handle("resources/read", ReadResourceRequestParams, lambda p: {"contents": [{"uri": p.uri, "blob": blob}]})
    async with SkillsClient.connect(fake.server) as client:
        assert await client.read("skill://a/x.bin") == data


async def test_get_entry_rejects_an_invalid_or_foreign_entry() -> None:
    """Spec MUST (Resources: an invalid entry MUST NOT be loaded) and skillwire choice (the entry must be for the
    uri asked): both raise InvalidEntry."""
    fake = FakeServer({})
    answers = {
        "skill://bad/SKILL.md": {"skill": {**good_entry("bad"), "resources": 7}},
        "skill://asked/SKILL.md": {"skill": good_entry("other")},
    }
    fake.handle("skills/get", SkillsGetParams, lambda p: answers[p.uri])
    async with SkillsClient.connect(fake.server) as client:
        with pytest.raises(InvalidEntry, match="array or the string 'dynamic'"):
            await client.get_entry("skill://bad/SKILL.md")
        with pytest.raises(InvalidEntry, match="entry of another skill"):
            await client.get_entry("skill://asked/SKILL.md")


async def test_malformed_listing_is_an_unexpected_response() -> None:
    """skillwire choice: a skills/list result without a `skills` array is the peer's error, reported as such."""
    fake = FakeServer({})
    fake.handle("skills/list", SkillsListParams, lambda p: {"entries": []})
    async with SkillsClient.connect(fake.server) as client:
        with pytest.raises(UnexpectedResponse, match="no `skills` array"):
            await client.list_entries()


def refuse(params: Any) -> dict[str, Any]:
    """A handler that answers every request with the server's own JSON-RPC error, and data."""
    raise MCPError(-32602, "not here\u202e", {"why": "refused"})


async def test_every_error_answer_is_request_failed() -> None:
    """skillwire choice (issue 20): an error answer to skills/list, skills/get, resources/read or
    resources/directory/read is RequestFailed naming the request, with the server's code, message and data; the
    SDK's MCPError is only its cause."""
    fake = FakeServer({"directoryRead": True})
    fake.handle("skills/list", SkillsListParams, refuse)
    fake.handle("skills/get", SkillsGetParams, refuse)
    fake.handle("resources/read", ReadResourceRequestParams, refuse)
    fake.handle("resources/directory/read", DirectoryReadParams, refuse)
    uri = "skill://a/SKILL.md"
    async with SkillsClient.connect(fake.server) as client:
        calls: dict[str, tuple[Callable[[], Awaitable[object]], str | None]] = {
            "skills/list": (client.list_entries, None),
            "skills/get": (lambda: client.get_entry(uri), uri),
            "resources/read": (lambda: client.read(uri, size=3), uri),
            "resources/directory/read": (lambda: client.read_directory("skill://a"), "skill://a"),
        }
        for method, (call, named) in calls.items():
            with pytest.raises(RequestFailed) as caught:
                await call()
            failed = caught.value
            assert (failed.method, failed.uri, failed.code, failed.message) == (method, named, -32602, "not here\u202e")
            assert failed.data == {"why": "refused"}
            assert isinstance(failed.__cause__, MCPError)
            assert "\u202e" not in str(failed)
    assert fake.calls == list(calls)


@pytest.mark.parametrize("mode", MODES)
async def test_a_refused_handshake_is_request_failed(mode: str) -> None:
    """skillwire choice (issue 20): a server that answers the handshake with an error raises RequestFailed (method
    `connect`); an MCPError raised by the caller's own block is the caller's, and passes untouched."""
    fake = FakeServer({})

    async def turn_away(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method in ("initialize", "server/discover"):
            raise MCPError(-32600, "no clients today")
        return await call_next(ctx)

    fake.server.middleware.insert(0, turn_away)
    with pytest.raises(RequestFailed) as caught:
        async with SkillsClient.connect(fake.server, mode=mode):
            pass
    assert (caught.value.method, caught.value.code, caught.value.message) == ("connect", -32600, "no clients today")
    assert isinstance(caught.value.__cause__, MCPError)

    own = MCPError(-1, "the caller's")
    with pytest.raises((MCPError, ExceptionGroup)) as passed:  # as the SDK hands it on: in its task group's group
        async with SkillsClient.connect(FakeServer({}).server, mode=mode):
            raise own
    leaf: BaseException = passed.value
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    assert leaf is own
