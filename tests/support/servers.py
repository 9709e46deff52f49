"""Real `skillwire serve` processes and real SDK clients connected to them.

Nothing here is mocked: an HTTP server is `python -m skillwire serve ROOT --http 127.0.0.1:0`
in a subprocess, and a stdio server is the same command spawned by the SDK's stdio client.

    with serve_target("http", [root], log_dir) as target:
        async with connect(target, mode="modern") as client:
            listing = await skills_list(client)

The Skills extension's verbs are sent as `types.Request` subclasses with `Literal`
method names through `client.session.send_request`, with result models that keep
every key the server sent (`extra="allow"`), so `wire(result)` is the JSON result.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx2
import pytest
from deploy.fleet import stop as stop_process  # one way to stop a child: SIGTERM (or the given signal), then SIGKILL
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import Request, Result
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ConfigDict
from pydantic.alias_generators import to_camel

from tests.support import forkserver

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_SKILLS = REPO_ROOT / "examples" / "skills"

EXTENSION_ID = "io.modelcontextprotocol/skills"
MODERN_VERSION = "2026-07-28"
INVALID_PARAMS = -32602

Transport = Literal["stdio", "http"]
Mode = Literal["modern", "legacy"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "http")
MODES: tuple[Mode, ...] = ("modern", "legacy")

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
REQUEST_TIMEOUT_S = 30.0

_LISTENING = re.compile(r"listening on (http://\S+)")


def serve_command(roots: Sequence[Path], *options: str, fresh: bool = False) -> list[str]:
    """The command line that serves `roots` (stdio unless `options` say otherwise).

    It starts as a fork of a warm interpreter (tests/support/forkserver.py) unless `fresh`: a test that looks at the
    server's own pid (its memory, its limits) asks for a fresh interpreter.
    """
    return forkserver.command(["-m", "skillwire", "serve", *(str(r) for r in roots), *options], fresh=fresh)


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env


# -- HTTP server subprocess -------------------------------------------------------------------------------------------


def stateless_post(
    url: str, method: str, params: dict[str, Any], *, token: str | None = None, request_id: int = 1, timeout: float = 30
) -> httpx2.Response:
    """One stateless 2026-07-28 request over HTTP, as a modern client sends it: the `_meta` that era asks for, its
    routing headers (`Mcp-Method`, and `Mcp-Name` for a tools/call) and a bearer token when given."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN_VERSION,
        "Mcp-Method": method,
    }
    if method == "tools/call":
        headers["Mcp-Name"] = params["name"]
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}
    return httpx2.post(url, json=body, headers=headers, timeout=timeout)


@dataclass
class HttpServer:
    """A running `skillwire serve --http` process and what it has written to stderr so far.

    `process` is what the test started: through the fork server, a launcher standing in for the server. `pid` is the
    server's own, and only a fresh server has one the test can look at.
    """

    url: str
    process: subprocess.Popen[str]
    _lines: list[str]
    fresh: bool = False

    @property
    def pid(self) -> int:
        assert self.fresh, "a test that looks at the server's pid starts it with http_server(..., fresh=True)"
        return self.process.pid

    @property
    def stderr(self) -> str:
        return "".join(self._lines)

    def assert_alive(self) -> None:
        code = self.process.poll()
        assert code is None, f"the server exited with status {code}; stderr:\n{self.stderr}"


def _drain(stream: Any, lines: list[str], ready: threading.Event, found: list[str]) -> None:
    for line in stream:
        lines.append(line)
        if not found and (match := _LISTENING.search(line)):
            found.append(match.group(1))
            ready.set()
    ready.set()  # end of stream: the process is gone; let the waiter look


@contextmanager
def http_server(
    roots: Sequence[Path],
    *options: str,
    timeout: float = START_TIMEOUT_S,
    address: str = "127.0.0.1:0",
    command: Sequence[str] | None = None,
    fresh: bool = False,
) -> Iterator[HttpServer]:
    """Start `skillwire serve ROOTS --http ADDRESS`, wait for its "listening on" line, stop it afterwards.

    Only loopback addresses (or 0.0.0.0, connected to through 127.0.0.1) belong here. `command`: another server
    command line that prints "listening on URL" (roots, options and address are then unused). `fresh`: see
    `serve_command`.
    """
    if command is None:
        command = serve_command(roots, "--http", address, *options, fresh=fresh)
    command = list(command)
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=_child_env(),
        cwd=REPO_ROOT,
    )
    lines: list[str] = []
    found: list[str] = []
    ready = threading.Event()
    reader = threading.Thread(target=_drain, args=(process.stderr, lines, ready, found), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + timeout
        while not found:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (ready.wait(min(remaining, 0.2)) and not found):
                break
        if not found:
            code = process.poll()
            state = f"exited with status {code}" if code is not None else f"did not listen within {timeout:.0f}s"
            stop_process(process)
            reader.join(timeout=STOP_TIMEOUT_S)
            pytest.fail(f"`{' '.join(command[1:])}` {state}; stderr:\n{''.join(lines)}", pytrace=False)
        server = HttpServer(url=found[0], process=process, _lines=lines, fresh=fresh or not forkserver.enabled())
        yield server
    finally:
        stop_process(process)
        reader.join(timeout=STOP_TIMEOUT_S)


# -- targets: what a test connects to ---------------------------------------------------------------------------------


@dataclass
class ServerTarget:
    """Where a client connects: a running HTTP server, or a command the stdio client spawns per connection."""

    transport: Transport
    roots: tuple[Path, ...]
    log_dir: Path
    http: HttpServer | None = None
    _stdio_logs: list[Path] = field(default_factory=list)

    @property
    def url(self) -> str:
        assert self.http is not None, "not an HTTP target"
        return self.http.url

    def server_stderr(self) -> str:
        """Everything the server process(es) wrote to stderr, for failure messages."""
        if self.http is not None:
            return self.http.stderr
        return "".join(p.read_text(encoding="utf-8", errors="replace") for p in self._stdio_logs if p.exists())

    def assert_alive(self) -> None:
        if self.http is not None:
            self.http.assert_alive()


@contextmanager
def serve_target(transport: Transport, roots: Sequence[Path], log_dir: Path) -> Iterator[ServerTarget]:
    """A target serving `roots` over `transport`: an HTTP server started now, or a stdio command."""
    log_dir.mkdir(parents=True, exist_ok=True)
    if transport == "http":
        with http_server(roots) as server:
            yield ServerTarget(transport, tuple(roots), log_dir, http=server)
            server.assert_alive()
    else:
        yield ServerTarget(transport, tuple(roots), log_dir)


@asynccontextmanager
async def connect(target: ServerTarget, *, mode: Mode = "modern") -> AsyncIterator[Client]:
    """An SDK client connected to `target`: modern (`server/discover`, 2026-07-28) or legacy (`initialize`).

    The response cache is off, so every call reaches the server.
    """
    async with AsyncExitStack() as stack:
        server: Any
        if target.transport == "http":
            server = target.url
        else:
            log = target.log_dir / f"stdio-server-{len(target._stdio_logs)}.log"
            target._stdio_logs.append(log)
            params = StdioServerParameters(
                command=sys.executable, args=serve_command(target.roots)[1:], env=_child_env(), cwd=REPO_ROOT
            )
            server = stdio_client(params, errlog=stack.enter_context(log.open("w", encoding="utf-8")))
        sdk_mode = "auto" if mode == "modern" else "legacy"
        try:
            client = await stack.enter_async_context(
                Client(server, mode=sdk_mode, cache=None, read_timeout_seconds=REQUEST_TIMEOUT_S)
            )
        except Exception as err:
            pytest.fail(
                f"cannot connect to the {target.transport} server ({mode}): {err!r}\n"
                f"server stderr:\n{target.server_stderr()}",
                pytrace=False,
            )
        if mode == "modern":
            assert client.protocol_version == MODERN_VERSION, (
                f"expected the 2026-07-28 era, negotiated {client.protocol_version}"
            )
            assert client.session.discover_result is not None
        else:
            assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
            assert client.session.initialize_result is not None
        yield client


# -- the extension's requests and results -----------------------------------------------------------------------------

Params = dict[str, Any]


class SkillsListRequest(Request[Params | None, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: Params | None = None


class SkillsGetRequest(Request[Params | None, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"
    params: Params | None = None


class DirectoryReadRequest(Request[Params | None, Literal["resources/directory/read"]]):
    method: Literal["resources/directory/read"] = "resources/directory/read"
    params: Params | None = None


class ResourcesReadRequest(Request[Params | None, Literal["resources/read"]]):
    """`resources/read` with params as given (the typed SDK call would refuse a hostile uri before sending)."""

    method: Literal["resources/read"] = "resources/read"
    params: Params | None = None


class ResourcesListRequest(Request[Params | None, Literal["resources/list"]]):
    method: Literal["resources/list"] = "resources/list"
    params: Params | None = None


class _OpenResult(Result):
    """A result that keeps every key the server sent."""

    model_config = ConfigDict(extra="allow", alias_generator=to_camel, populate_by_name=True)


class SkillsListResult(_OpenResult):
    skills: list[dict[str, Any]]
    next_cursor: str | None = None


class SkillsGetResult(_OpenResult):
    skill: dict[str, Any]


class DirectoryReadResult(_OpenResult):
    resources: list[dict[str, Any]]
    next_cursor: str | None = None


class ResourcesReadResult(_OpenResult):
    contents: list[dict[str, Any]]


class ResourcesListResult(_OpenResult):
    resources: list[dict[str, Any]]
    next_cursor: str | None = None


Method = Literal["skills/list", "skills/get", "resources/directory/read", "resources/read", "resources/list"]

_ROUTES: Mapping[str, tuple[type[Request[Any, Any]], type[_OpenResult]]] = {
    "skills/list": (SkillsListRequest, SkillsListResult),
    "skills/get": (SkillsGetRequest, SkillsGetResult),
    "resources/directory/read": (DirectoryReadRequest, DirectoryReadResult),
    "resources/read": (ResourcesReadRequest, ResourcesReadResult),
    "resources/list": (ResourcesListRequest, ResourcesListResult),
}

R = TypeVar("R", bound=_OpenResult)


def wire(result: Result) -> dict[str, Any]:
    """The result as the JSON object the server sent (keys as on the wire, nothing added)."""
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return dumped


async def _send(client: Client, request: Request[Any, Any], result_type: type[R]) -> R:
    return await client.session.send_request(request, result_type)


async def send(client: Client, method: Method, params: Params | None) -> dict[str, Any]:
    """Send `method` with exactly `params` (plus the SDK's `_meta`) and return the JSON result."""
    request_type, result_type = _ROUTES[method]
    request = request_type.model_validate({"method": method, "params": params})
    return wire(await _send(client, request, result_type))


async def skills_list(client: Client, cursor: str | None = None) -> SkillsListResult:
    return await _send(
        client, SkillsListRequest(params=None if cursor is None else {"cursor": cursor}), SkillsListResult
    )


async def skills_get(client: Client, uri: str) -> SkillsGetResult:
    return await _send(client, SkillsGetRequest(params={"uri": uri}), SkillsGetResult)


async def directory_read(client: Client, uri: str, cursor: str | None = None) -> DirectoryReadResult:
    params: Params = {"uri": uri} if cursor is None else {"uri": uri, "cursor": cursor}
    return await _send(client, DirectoryReadRequest(params=params), DirectoryReadResult)


async def resources_read(client: Client, uri: str) -> ResourcesReadResult:
    return await _send(client, ResourcesReadRequest(params={"uri": uri}), ResourcesReadResult)


async def resources_list(client: Client, cursor: str | None = None) -> ResourcesListResult:
    request = ResourcesListRequest(params=None if cursor is None else {"cursor": cursor})
    return await _send(client, request, ResourcesListResult)


async def all_skills(client: Client) -> list[dict[str, Any]]:
    """Every skills/list entry, following nextCursor."""
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(10_000):
        page = await skills_list(client, cursor)
        entries.extend(page.skills)
        cursor = page.next_cursor
        if cursor is None:
            return entries
    raise AssertionError("skills/list never stopped handing out cursors")


def error_json(err: MCPError) -> str:
    """The JSON-RPC error object (code, message, data) as text, for leak checks."""
    return json.dumps(err.error.model_dump(mode="json", by_alias=True, exclude_none=True), ensure_ascii=False)


def canonical_json(value: object) -> str:
    """Key order ignored, everything else (types included: 151 is not 151.0 nor true) compared."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def run_skillwire(
    *args: str, stdin: str = "", timeout: float = 60.0, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `python -m skillwire ARGS...` from the repository root, capturing text; never raises on exit status."""
    return subprocess.run(
        forkserver.command(["-m", "skillwire", *args]),
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=timeout,
        check=False,
    )
