"""The listen-stream bookkeeping behind `tests/service/test_listen_streams.py` (issue 19, hole 5), in process.

skillwire choices: which token-file line a token came from, who a caller is, each caller's share and the total,
and the id a refused listen request is answered with. The process tests live apart so that they run against any
version of the package (they fail on one without these rules, rather than failing to import).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.auth.provider import AccessToken

from skillwire.service.listen_limits import ListenRefused, ListenSlots, _request_id, caller_key
from skillwire.service.token_file import TokenFile

ALICE = "alice-" + secrets.token_urlsafe(24)
BOB = "bob-" + secrets.token_urlsafe(24)


def _token_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tokens"
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return path


def _file_access(token_file: TokenFile, token: str) -> AccessToken:
    access = anyio.run(token_file.verify_token, token)
    assert access is not None
    return access


def test_a_token_file_line_is_granted_until_it_is_removed_or_changed(tmp_path: Path) -> None:
    """skillwire choice: `TokenFile.granted` follows the line a token came from, named by a handle that is neither
    the token nor its digest; a line with the same subject is another caller."""
    path = _token_file(tmp_path, f"{ALICE} subject=ci scopes=a\n{BOB} subject=ci scopes=a\n")
    token_file = TokenFile(path)
    alice, bob = _file_access(token_file, ALICE), _file_access(token_file, BOB)
    assert ALICE not in repr(alice)
    assert caller_key(alice) != caller_key(bob)
    assert token_file.granted([alice, bob]) == [True, True]
    path.write_text(f"{ALICE} subject=ci scopes=a,b\n{BOB} subject=ci scopes=a\n", encoding="utf-8")
    assert token_file.granted([alice, bob]) == [False, True]
    path.write_text(f"{BOB} subject=ci scopes=a\n", encoding="utf-8")
    assert token_file.granted([alice, bob]) == [False, True]
    path.write_text("not a token file\n", encoding="utf-8")
    assert token_file.granted([alice, bob]) == [False, False]


def test_a_refreshed_jwt_is_the_same_caller_and_another_subject_is_not() -> None:
    """skillwire choice: a JWT's caller is its client, issuer and subject (not its `jti`): refreshing a token
    does not buy another share."""
    claims = {"iss": "https://id.example", "sub": "u1", "client_id": "app"}
    first = AccessToken(token="jwt", client_id="app", subject="u1", scopes=[], claims={**claims, "jti": "1"})
    refreshed = AccessToken(token="jwt", client_id="app", subject="u1", scopes=[], claims={**claims, "jti": "2"})
    other = AccessToken(token="jwt", client_id="app", subject="u2", scopes=[], claims={**claims, "sub": "u2"})
    assert caller_key(first) == caller_key(refreshed) != caller_key(other)
    assert caller_key(None) is None


class _Revoked:
    """`Credentials` that no longer grant the tokens of the subjects named."""

    def __init__(self, *subjects: str) -> None:
        self.subjects = subjects

    def granted(self, tokens: Sequence[AccessToken]) -> list[bool]:
        return [t.subject not in self.subjects for t in tokens]


def test_slots_count_each_caller_apart_and_in_total_and_give_room_back_once() -> None:
    """skillwire choice: a caller past its share is told so; past the total, the SDK's own words; anonymous
    callers (no authentication) meet only the total; releasing twice frees one slot."""
    slots = ListenSlots(max_streams=4, max_per_caller=2)
    alice = AccessToken(token="jwt", client_id="a", subject="alice", scopes=[], claims={"iss": "x"})
    bob = AccessToken(token="jwt", client_id="b", subject="bob", scopes=[], claims={"iss": "x"})
    first = slots.take(alice)
    slots.take(alice)
    with pytest.raises(ListenRefused, match="for this caller: 2 listen streams open"):
        slots.take(alice)
    slots.release(first)
    slots.release(first)
    slots.take(alice)
    slots.take(None)
    slots.take(bob)
    with pytest.raises(ListenRefused) as refused:
        slots.take(None)
    assert str(refused.value) == "Subscription limit reached"
    assert len(slots) == 4
    assert slots.end_revoked(_Revoked("bob")) == 1
    assert slots.end_revoked(_Revoked("bob")) == 0  # already ended


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen"}', 7),
        (b'{"id": "x-1"}', "x-1"),
        (b'{"id": true}', None),
        (b'{"id": {"nested": 1}}', None),
        (b"[1, 2]", None),
        (b"not json", None),
        (b'{"id": 1, "pad": "' + b"x" * 70_000 + b'"}', None),
    ],
)
def test_a_refused_listen_request_is_answered_with_its_id_only_when_it_has_a_plain_one(
    body: bytes, expected: object
) -> None:
    """JSON-RPC: an error answers the request's id, or null when it cannot be told; a huge body is not read."""
    chunks = [body[i : i + 4096] for i in range(0, len(body), 4096)]

    async def receive() -> dict[str, Any]:
        chunk = chunks.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

    assert anyio.run(_request_id, receive) == expected
