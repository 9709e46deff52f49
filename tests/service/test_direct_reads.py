"""Direct reads (`service/direct_reads.py`, issue 23): a well-formed 2026-07-28 skill read is answered without the
SDK's generic pipeline, with the SDK's answer to the byte; anything else reaches the SDK with its body intact.

Over a real `skillwire serve --http`, each file is asked for twice the same way but for the framing: with a
Content-Length (answered directly) and chunked (which the direct path leaves to the SDK). In process, the
decisions: what is answered, what is passed on, and when the direct path stands aside.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from opentelemetry import trace
from starlette.types import Message, Receive, Scope, Send

from skillwire.server.extension import SkillsExtension
from skillwire.server.prompts import SkillPrompts
from skillwire.service.direct_reads import MAX_BODY, DirectReads
from skillwire.service.ops import ServerMetrics
from skillwire.service.run import build_server
from skillwire.service.watch import LiveReload
from skillwire.sources.digest_cache import RACY_NS
from tests.support.servers import HttpServer, http_server

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
WIDE_TEXT = '---\nname: wide\ndescription: Quotes " and \\ and é, 漢字, 😀\n---\nTab\there, "body" \u2028 ok\n'
FILES = {
    "plain/SKILL.md": b"---\nname: plain\ndescription: A plain skill\n---\nBody.\n",
    "wide/SKILL.md": WIDE_TEXT.encode(),
    "wide/data.bin": bytes(range(256)),
    "wide/empty.md": b"",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Written once and left alone long enough that stamps vouch for the bytes (so the second read is a cached one)."""
    base = tmp_path_factory.mktemp("direct")
    for rel, data in FILES.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_bytes(data)
    time.sleep(RACY_NS / 1e9 + 0.1)
    return base


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[HttpServer]:
    with http_server([root], "--no-watch") as served:
        yield served


def _request(uri: object, request_id: object = 7, **params: Any) -> dict[str, Any]:
    params = {"uri": uri, "_meta": META, **params}
    return {"jsonrpc": "2.0", "id": request_id, "method": "resources/read", "params": params}


def _headers(uri: str) -> dict[str, str]:
    return {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": MODERN,
        "mcp-method": "resources/read",
        "mcp-name": uri,
    }


def _ask(url: str, uri: str, *, chunked: bool) -> tuple[int, list[tuple[str, str]], bytes]:
    body = json.dumps(_request(uri)).encode()
    content = iter([body[:9], body[9:]]) if chunked else body
    response = httpx2.post(url, content=content, headers=_headers(uri), timeout=30)
    return response.status_code, [(k, v) for k, v in response.headers.items() if k != "date"], response.content


@pytest.mark.parametrize("rel", FILES)
def test_a_direct_answer_is_the_sdks_to_the_byte_fresh_and_cached(server: HttpServer, rel: str) -> None:
    uri = f"skill://{rel}"
    for _ in range(2):  # the first read verifies and keeps the bytes; the second is answered from the read cache
        direct = _ask(server.url, uri, chunked=False)
        assert direct == _ask(server.url, uri, chunked=True)
        assert direct[0] == 200
        contents = json.loads(direct[2])["result"]["contents"][0]
        served = contents["text"].encode() if "text" in contents else base64.b64decode(contents["blob"])
        assert served == FILES[rel]


def test_a_method_spelled_with_json_escapes_is_answered_alike(server: HttpServer) -> None:
    uri = "skill://plain/SKILL.md"
    body = json.dumps(_request(uri)).encode().replace(b"resources/read", b"resources\\/read")
    answers = [
        httpx2.post(server.url, content=content, headers=_headers(uri), timeout=30)
        for content in (body, iter([body[:9], body[9:]]))
    ]
    assert [a.status_code for a in answers] == [200, 200]
    assert answers[0].content == answers[1].content


def test_a_failed_read_is_the_sdks_error(server: HttpServer) -> None:
    for uri in ("skill://plain/missing.md", "skill://plain/../wide/SKILL.md", "skill://wide"):
        assert _ask(server.url, uri, chunked=False) == _ask(server.url, uri, chunked=True)
        assert _ask(server.url, uri, chunked=False)[0] == 400


# -- in process: what is answered here and what goes on ------------------------------------------------------------


class _Sdk:
    """Stands in for the SDK behind the direct path: records each request that reaches it and its whole body."""

    def __init__(self) -> None:
        self.reached: list[bytes] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        self.reached.append(body)


def _direct(root: Path, sdk: _Sdk, *, guarded: bool = True, extra: bool = False) -> DirectReads:
    """A DirectReads over a server wired as `skillwire serve` wires it (metrics, live reload, prompts)."""
    extension = SkillsExtension.from_paths([root])
    server = build_server(extension)
    LiveReload(extension.service, watch=False).install(server)
    SkillPrompts(extension).install(server)
    metrics = ServerMetrics(extension.service)
    metrics.install(server)
    if extra:

        async def audit(ctx: Any, call_next: Any) -> Any:
            return await call_next(ctx)

        server.middleware.append(audit)
    return DirectReads(
        sdk, server=server, service=extension.service, callers=None, mcp_path="/mcp", metrics=metrics, guarded=guarded
    )


async def _post(
    app: DirectReads, body: bytes, headers: dict[str, str], *, path: str = "/mcp", pieces: int = 1, length: bool = True
) -> list[Message]:
    """POST `body` in `pieces` messages, with a Content-Length unless `length` is False (chunked); what was sent."""
    raw = [(k.encode(), v.encode()) for k, v in headers.items()]
    if length:
        raw.append((b"content-length", str(len(body)).encode()))
    scope = {"type": "http", "method": "POST", "path": path, "root_path": "", "headers": raw}
    step = max(1, len(body) // pieces)
    chunks = [body[i : i + step] for i in range(0, len(body), step)] or [b""]
    messages: list[Message] = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)
    ]

    async def receive() -> Message:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


async def test_a_well_formed_read_is_answered_without_reaching_the_sdk(root: Path) -> None:
    sdk = _Sdk()
    app = _direct(root, sdk)
    sent = await _post(app, json.dumps(_request("skill://plain/SKILL.md")).encode(), _headers("skill://plain/SKILL.md"))
    assert sdk.reached == []
    assert app.answered == 1
    assert sent[0]["status"] == 200
    answer = json.loads(sent[1]["body"])
    assert answer["id"] == 7
    assert answer["result"]["contents"][0]["text"] == FILES["plain/SKILL.md"].decode()
    assert answer["result"]["resultType"] == "complete"


URI = "skill://plain/SKILL.md"
PASSED_ON: list[tuple[str, dict[str, str | None], object]] = [
    ("handshake era", {"mcp-protocol-version": "2025-11-25"}, _request(URI)),
    ("no version header", {"mcp-protocol-version": None}, _request(URI)),
    ("not JSON content", {"content-type": "text/plain"}, _request(URI)),
    ("accepts only SSE", {"accept": "text/event-stream"}, _request(URI)),
    ("name header differs", {"mcp-name": "skill://wide/SKILL.md"}, _request(URI)),
    ("method header differs", {"mcp-method": "resources/list"}, _request(URI)),
    ("another method", {"mcp-method": "resources/list"}, {**_request(URI), "method": "resources/list"}),
    ("notification", {}, {k: v for k, v in _request(URI).items() if k != "id"}),
    ("boolean id", {}, _request(URI, True)),
    ("float id", {}, _request(URI, 1.5)),
    ("null id", {}, _request(URI, None)),
    ("old jsonrpc", {}, {**_request(URI), "jsonrpc": "1.0"}),
    ("batch", {}, [_request(URI)]),
    ("params a list", {}, {**_request(URI), "params": [URI]}),
    ("uri a number", {"mcp-name": "1"}, _request(1)),
    ("not a skill uri", {"mcp-name": "file:///etc/passwd"}, _request("file:///etc/passwd")),
    ("no _meta", {}, {**_request(URI), "params": {"uri": URI}}),
    ("_meta version differs", {}, _request(URI, _meta={**META, "io.modelcontextprotocol/protocolVersion": "x"})),
    ("hostile uri", {"mcp-name": "skill://plain/../../etc/passwd"}, _request("skill://plain/../../etc/passwd")),
    ("missing file", {"mcp-name": "skill://plain/nope.md"}, _request("skill://plain/nope.md")),
    ("a directory", {"mcp-name": "skill://plain"}, _request("skill://plain")),
    ("too large", {}, _request(URI, padding="x" * MAX_BODY)),
    ("not JSON", {}, b'{"jsonrpc": "2.0", "id": 1, '),
]


@pytest.mark.parametrize(("case", "changed", "message"), PASSED_ON, ids=[c[0] for c in PASSED_ON])
async def test_anything_else_reaches_the_sdk_with_its_body_intact(
    root: Path, case: str, changed: dict[str, str | None], message: object
) -> None:
    sdk = _Sdk()
    app = _direct(root, sdk)
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    headers = {k: v for k, v in {**_headers(URI), **changed}.items() if v is not None}
    sent = await _post(app, body, headers, pieces=3)
    assert sdk.reached == [body]
    assert sent == []
    assert app.answered == 0


async def test_a_repeated_routing_header_reaches_the_sdk(root: Path) -> None:
    sdk = _Sdk()
    app = _direct(root, sdk)
    body = json.dumps(_request(URI)).encode()
    raw = [(k.encode(), v.encode()) for k, v in _headers(URI).items()]
    raw += [(b"mcp-method", b"resources/read"), (b"content-length", str(len(body)).encode())]
    messages: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> Message:
        return messages.pop(0)

    async def send(message: Message) -> None:
        raise AssertionError("answered directly")

    await app({"type": "http", "method": "POST", "path": "/mcp", "headers": raw}, receive, send)
    assert sdk.reached == [body]


async def test_without_a_content_length_or_elsewhere_the_sdk_answers(root: Path) -> None:
    sdk = _Sdk()
    app = _direct(root, sdk)
    body = json.dumps(_request(URI)).encode()
    await _post(app, body, _headers(URI), pieces=2, length=False)  # chunked
    await _post(app, body, _headers(URI), path="/mcp/")
    assert sdk.reached == [body, body]


@pytest.mark.parametrize("why", ["not guarded", "unknown middleware", "tracing"])
async def test_it_stands_aside(root: Path, why: str, monkeypatch: pytest.MonkeyPatch) -> None:
    sdk = _Sdk()
    app = _direct(root, sdk, guarded=why != "not guarded", extra=why == "unknown middleware")
    if why == "tracing":
        monkeypatch.setattr(trace, "get_tracer_provider", trace.NoOpTracerProvider)
    body = json.dumps(_request(URI)).encode()
    await _post(app, body, _headers(URI))
    assert sdk.reached == [body]
