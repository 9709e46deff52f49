"""The session cap (`--max-sessions`) with authentication on: only an authenticated caller's request moves it.

skillwire choices (issue 19, hole 4): a request is authenticated before any session bookkeeping, so a POST
answered 401 (no token, a wrong one) or 403 (a token without the required scope) never ends a live session to
make room; and a caller presenting another caller's session id (answered 404 by the SDK, as an unknown session)
does not make the cap forget that session, which would leave the SDK's own table full and lock everyone out.
Real `skillwire serve --http --token-file ... --max-sessions 3` processes, real HTTP requests.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.servers import EXAMPLE_SKILLS, HttpServer, http_server

SCOPE = "skills:read"
ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef012"
WEAK = "weak-token-0123456789abcdef01"  # valid, but without the required scope
CAP = 3
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


@pytest.fixture
def capped(tmp_path: Path) -> Iterator[HttpServer]:
    tokens = tmp_path / "tokens"
    tokens.write_text(
        f"{ALICE} subject=alice scopes={SCOPE}\n{BOB} subject=bob scopes={SCOPE}\n{WEAK} subject=weak\n",
        encoding="utf-8",
    )
    tokens.chmod(0o600)
    options = ("--quiet", "--no-watch", "--token-file", str(tokens), "--required-scope", SCOPE)
    with http_server([EXAMPLE_SKILLS], *options, "--max-sessions", str(CAP)) as server:
        yield server
        server.assert_alive()


def _post(
    server: HttpServer, body: dict[str, object], *, token: str | None, session: str | None = None
) -> tuple[int, str | None]:
    """POST `body` to /mcp with `token` (None: no Authorization) and `session`: the status, the session id sent."""
    parts = urlsplit(server.url)
    assert parts.hostname is not None
    assert parts.port is not None
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if session is not None:
        headers["Mcp-Session-Id"] = session
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=15)
    try:
        conn.request("POST", "/mcp", body=json.dumps(body), headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("mcp-session-id")
    finally:
        conn.close()


def _open_sessions(server: HttpServer, token: str, count: int) -> list[str]:
    sessions = []
    for _ in range(count):
        status, session = _post(server, INITIALIZE, token=token)
        assert status == 200
        assert session is not None
        sessions.append(session)
    return sessions


def test_unauthenticated_or_unscoped_initialize_posts_never_end_an_authenticated_session(capped: HttpServer) -> None:
    """Attack (issue 19, hole 4): with the cap full of live sessions, `initialize` POSTs answered 401 or 403
    evicted one each. Now every one of the three sessions still answers after a dozen such POSTs."""
    sessions = _open_sessions(capped, ALICE, CAP)
    refused = [
        *(_post(capped, INITIALIZE, token=None)[0] for _ in range(4)),
        *(_post(capped, INITIALIZE, token="not-a-listed-token-0123456789")[0] for _ in range(4)),
        *(_post(capped, INITIALIZE, token=WEAK)[0] for _ in range(4)),
    ]
    assert refused == [401] * 8 + [403] * 4
    assert [_post(capped, PING, token=ALICE, session=s)[0] for s in sessions] == [200] * CAP


def test_another_callers_session_id_does_not_make_the_cap_forget_a_live_session(capped: HttpServer) -> None:
    """Attack: Bob sends Alice's session ids (404 from the SDK: not his) so the cap forgets them while the SDK
    still holds them; the cap then evicts nothing and every new session got 503 until they idled out. Now the
    cap still counts them and ends the least recently used one to admit Bob's new session."""
    sessions = _open_sessions(capped, ALICE, CAP)
    assert [_post(capped, PING, token=BOB, session=s)[0] for s in sessions] == [404] * CAP
    status, _ = _post(capped, INITIALIZE, token=BOB)
    assert status == 200
    assert [_post(capped, PING, token=ALICE, session=s)[0] for s in sessions] == [404, 200, 200]
