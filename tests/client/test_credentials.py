"""Client-side tokens: `--token-file` / `--header`, and following a 401 only to the server's own origin.

MCP authorization (client): the `WWW-Authenticate` `resource_metadata` URL leads to the authorization
servers. skillwire choices: headers are printable ASCII only (no header smuggling), errors never quote
a token, and metadata is fetched only from the origin of the server that answered 401.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import httpx2
import pytest

from skillwire.cli.errors import UsageError
from skillwire.cli.inspect import headers_from
from skillwire.client.credentials import authentication_required, first_token, parse_header
from skillwire.core.errors import SkillwireError

SECRET = "s3cr3t-t0ken-value-0123456789"


def test_header_with_a_line_break_is_refused_and_not_echoed() -> None:
    """Attack: `--header 'Authorization: Bearer x\\r\\nX-Other: y'` must not smuggle a second header."""
    for text in (f"Authorization: Bearer {SECRET}\r\nX-Other: y", f"Bearer {SECRET}"):
        with pytest.raises(SkillwireError) as caught:
            parse_header(text)
        assert SECRET not in str(caught.value)
    assert parse_header(f"Authorization:  Bearer {SECRET} ") == ("Authorization", f"Bearer {SECRET}")


def test_first_token_skips_comments_and_ignores_the_words_after_it(tmp_path: Path) -> None:
    """The same file `serve --token-file` reads works for a client: its first token is sent."""
    path = tmp_path / "tokens"
    path.write_text(f"# mine\n\n{SECRET} subject=ci scopes=a\nother-token-000000000\n", encoding="utf-8")
    assert first_token(str(path)) == SECRET


def test_token_file_and_an_authorization_header_together_are_refused(tmp_path: Path) -> None:
    """Two credentials for one server is a mistake to report, not to resolve silently."""
    path = tmp_path / "tokens"
    path.write_text(SECRET + "\n", encoding="utf-8")
    both = argparse.Namespace(token_file=str(path), header=[f"authorization: Bearer {SECRET}"])
    with pytest.raises(UsageError, match="not both"):
        headers_from(both, "http://127.0.0.1:1/mcp")
    one = argparse.Namespace(token_file=str(path), header=[])
    assert headers_from(one, "http://127.0.0.1:1/mcp") == {"Authorization": f"Bearer {SECRET}"}
    with pytest.raises(UsageError, match="http"):
        headers_from(one, ["python", "-m", "server"])


class _Recorder(BaseHTTPRequestHandler):
    hits: list[str] = []  # noqa: RUF012  (one server per test; reset by the fixture)

    def do_GET(self) -> None:
        type(self).hits.append(self.path)
        body = b'{"resource": "x", "authorization_servers": ["https://evil.example"]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def elsewhere() -> Iterator[str]:
    _Recorder.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_resource_metadata_on_another_origin_is_not_fetched(elsewhere: str) -> None:
    """Attack: a 401 pointing `resource_metadata` at another host must not make the client fetch from it."""
    challenge = httpx2.Response(
        401, headers={"WWW-Authenticate": f'Bearer error="invalid_token", resource_metadata="{elsewhere}/meta"'}
    )
    error = anyio.run(authentication_required, "http://127.0.0.1:1/mcp", challenge)
    assert _Recorder.hits == []
    assert error.authorization_servers == ()
    assert "names no authorization server" in str(error)
