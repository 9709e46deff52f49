"""Secure by default: Host and Origin checked on every route and bind; a network bind needs authentication.

skillwire choices (issue 10, item 3) against DNS rebinding and accidental exposure. The servers are real
`skillwire serve --http` processes; "non-loopback" is 0.0.0.0 reached only through 127.0.0.1.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from skillwire.cli.main import main
from skillwire.service import run
from skillwire.service.guard import HostPolicy, bind_refusal
from tests.support.servers import EXAMPLE_SKILLS, HttpServer, http_server

BINDS = {
    "127.0.0.1": ("127.0.0.1:0", "127.0.0.1", ()),
    "127.0.0.2": ("127.0.0.2:0", "127.0.0.2", ()),
    "0.0.0.0": ("0.0.0.0:0", "127.0.0.1", ("--allow-unauthenticated",)),
}
ROUTES = ("/", "/skills/git-workflow", "/mcp", "/.well-known/oauth-protected-resource", "/no-such-page")
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
).encode()


@pytest.fixture(scope="module", params=sorted(BINDS))
def bound(request: pytest.FixtureRequest) -> Iterator[tuple[HttpServer, str, int]]:
    address, connect_host, options = BINDS[request.param]
    with http_server([EXAMPLE_SKILLS], "--no-watch", "--quiet", *options, address=address) as server:
        port = urlsplit(server.url).port
        assert port is not None
        yield server, connect_host, port
        server.assert_alive()


def _request(host: str, port: int, method: str, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(host, port, timeout=20)
    try:
        body = INITIALIZE if method == "POST" else None
        if body is not None:
            headers = {**headers, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _method(path: str) -> str:
    return "POST" if path == "/mcp" else "GET"


@pytest.mark.parametrize("path", ROUTES)
def test_foreign_host_gets_421_on_every_route_and_bind(bound: tuple[HttpServer, str, int], path: str) -> None:
    """DNS rebinding: a page on evil.example reaching this server by IP gets nothing (page and /mcp alike)."""
    _server, host, port = bound
    status, body = _request(host, port, _method(path), path, {"Host": "evil.example"})
    assert status == 421, (status, body[:200])
    assert b"git-workflow" not in body
    assert b"skill://" not in body


@pytest.mark.parametrize("path", ROUTES)
def test_foreign_origin_gets_403_on_every_route_and_bind(bound: tuple[HttpServer, str, int], path: str) -> None:
    """A browser page from another origin, with a correct Host, is refused on every route."""
    _server, host, port = bound
    status, body = _request(
        host, port, _method(path), path, {"Host": f"{host}:{port}", "Origin": "http://evil.example"}
    )
    assert status == 403, (status, body[:200])
    assert b"skill://" not in body


def test_the_names_a_server_is_reached_by_are_answered(bound: tuple[HttpServer, str, int]) -> None:
    """The checks refuse only foreign names: the page and /mcp answer on the loopback names of the port."""
    _server, host, port = bound
    for name in (f"{host}:{port}", f"localhost:{port}"):
        status, body = _request(host, port, "GET", "/", {"Host": name, "Origin": f"http://{name}"})
        assert (status, b"git-workflow" in body) == (200, True), name
        status, body = _request(host, port, "POST", "/mcp", {"Host": name})
        assert (status, b"protocolVersion" in body) == (200, True), (name, body[:200])


@pytest.mark.parametrize("address", ["0.0.0.0:0", "[::]:0", "skills.example.com:8000"])
def test_network_bind_without_authentication_refuses_to_start(
    address: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`serve --http 0.0.0.0:P` with no authentication would serve every skill to the LAN: it exits first."""

    def no_bind(host: str, port: int) -> None:  # a test never listens on a network address, even on broken code
        pytest.fail(f"serve tried to listen on {host}:{port}")

    monkeypatch.setattr(run, "bind", no_bind)
    code = main(["serve", str(EXAMPLE_SKILLS), "--quiet", "--no-watch", "--http", address])
    err = capsys.readouterr().err
    assert code != 0
    assert "listening" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "--allow-unauthenticated" in lines[0]


def test_bind_refusal_accepts_loopback_authentication_or_the_explicit_opt_out() -> None:
    """The rule itself: loopback needs nothing; a network bind needs authentication or the explicit flag."""
    for host in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert bind_refusal(host, authenticated=False, allow_unauthenticated=False) is None
    assert bind_refusal("0.0.0.0", authenticated=True, allow_unauthenticated=False) is None
    assert bind_refusal("0.0.0.0", authenticated=False, allow_unauthenticated=True) is None
    assert bind_refusal("192.0.2.1", authenticated=False, allow_unauthenticated=False) is not None


def test_public_url_and_allowed_hosts_are_answered_and_nothing_else() -> None:
    """Behind a proxy the public host name is allowed (any port: a rebinding page cannot pick the name)."""
    policy = HostPolicy.for_bind(
        "127.0.0.1", 8000, public_url="https://skills.example.com/mcp", allowed_hosts=["proxy.internal:8443"]
    )
    assert policy.host_ok("skills.example.com")
    assert policy.host_ok("Skills.Example.com:443")
    assert policy.host_ok("proxy.internal:8443")
    assert not policy.host_ok("proxy.internal:9000")
    assert policy.host_ok("127.0.0.1:8000")
    assert not policy.host_ok("127.0.0.1:8001")
    assert not policy.host_ok("evil.example")
    assert not policy.host_ok(None)
    assert not policy.host_ok("")
    assert policy.origin_ok("https://skills.example.com")
    assert policy.origin_ok(None)
    assert not policy.origin_ok("null")
    assert not policy.origin_ok("https://evil.example")
    assert not policy.origin_ok("http://localhost:3000")
