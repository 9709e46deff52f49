"""`subscriptions/listen` streams and the credential that opened them (issue 19: hole 5, and the listen share).

skillwire choices, each against a real `skillwire serve --http` process and real SDK clients:
- a stream lives no longer than its credential: it ends (the spec's graceful close, the listen result) when its
  token leaves the `--token-file` or its line's subject or scopes change, as soon as the server re-reads the file
  (no request or catalog change needed), and when its JWT's `exp` passes (at that instant, not at the next event);
  so does a handshake-era session's GET event stream (it carries list_changed just the same);
- one caller (a token-file token; a JWT's issuer, subject and client) holds at most its share of the listen
  streams, `--max-listen-streams-per-caller` (default 16); more are refused as the total bound refuses (JSON-RPC
  -32603 "Subscription limit reached ...") while another caller still gets a stream.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.server.subscriptions import ResourcesListChanged
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ServerEvent

from tests.support.oidc import oidc_provider
from tests.support.servers import EXAMPLE_SKILLS, http_server
from tests.support.skills import write_skill

pytestmark = pytest.mark.anyio

DEADLINE_S = 10.0  # only detects a stream that never ends; a prompt end takes about a second
INTERNAL_ERROR = -32603  # what the total bound answers (the SDK's ListenHandler); the share answers the same
DOCUMENTED_SHARE = 16  # the default of --max-listen-streams-per-caller (docs/deploying.md, SECURITY.md)
ALICE = "alice-" + secrets.token_urlsafe(24)
BOB = "bob-" + secrets.token_urlsafe(24)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def caller(url: str, token: str, *, mode: str = "auto", **kwargs: Any) -> AsyncIterator[Client]:
    """An SDK client that sends `token` as its bearer token on every request."""
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
        Client(
            streamable_http_client(url, http_client=http), mode=mode, cache=None, read_timeout_seconds=60, **kwargs
        ) as c,
    ):
        yield c


@asynccontextmanager
async def legacy_caller(url: str, token: str) -> AsyncIterator[list[str]]:
    """A handshake-era session opened with `token`; the list_changed notifications its GET event stream brings."""
    heard: list[str] = []

    async def on_message(message: types.ServerNotification | Exception) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            heard.append("list_changed")

    async with caller(url, token, mode="legacy", message_handler=on_message):
        yield heard


async def _until_closed(subscription: AsyncIterator[ServerEvent]) -> list[ServerEvent]:
    """Every event until the server ends the stream gracefully (`SubscriptionLost` if it drops it instead)."""
    return [event async for event in subscription]


def _token_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tokens"
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return path


# -- a stream outlives no credential -----------------------------------------------------------------------------------


@pytest.mark.parametrize("edit", ["removed", "rescoped"])
async def test_open_streams_end_when_their_token_line_is_removed_or_changed(tmp_path: Path, edit: str) -> None:
    """Issue 19 hole 5: with its token's line removed from the token file (new requests get 401), or its scopes
    changed (what it was allowed to hear about is no longer what the file says), an open listen stream ended
    neither and kept receiving list_changed; so did a handshake-era session's GET event stream. Both must end
    once the server re-reads the file, with no request sent; another token's stream goes on."""
    root = tmp_path / "skills"
    write_skill(root, "alpha")
    tokens = _token_file(tmp_path, f"{ALICE} subject=alice scopes=skills:read\n{BOB} subject=bob\n")
    with http_server([root], "--token-file", str(tokens), "--quiet") as server:
        async with (
            caller(server.url, ALICE) as alice,
            caller(server.url, BOB) as bob,
            legacy_caller(server.url, ALICE) as alice_legacy_heard,
            alice.listen(resources_list_changed=True) as alice_stream,
            bob.listen(resources_list_changed=True) as bob_stream,
        ):
            alice_line = "" if edit == "removed" else f"{ALICE} subject=alice scopes=other\n"
            tokens.write_text(f"{alice_line}{BOB} subject=bob\n", encoding="utf-8")
            # No request and no catalog change: the server must notice the file by itself.
            with anyio.fail_after(DEADLINE_S):
                assert await _until_closed(alice_stream) == []
            write_skill(root, "beta")  # news that Bob hears about, and Alice's ended streams cannot
            with anyio.fail_after(DEADLINE_S):
                assert await bob_stream.__anext__() == ResourcesListChanged()
            await anyio.sleep(1.5)  # sent to every stream at once: Alice's event stream would have it by now
            assert alice_legacy_heard == []
        server.assert_alive()


async def test_open_streams_opened_with_a_jwt_end_when_the_jwt_expires(tmp_path: Path) -> None:
    """Issue 19 hole 5: a listen stream (and a handshake-era GET event stream) opened with a JWT kept going past
    the token's `exp` (the bearer middleware refuses the same token from then on). It must end at `exp`, by a
    timer, with no event to wake it; a stream opened with a later-expiring token of another caller goes on."""
    root = tmp_path / "skills"
    write_skill(root, "alpha")
    with oidc_provider() as op, http_server([root], "--auth-issuer", op.issuer, "--quiet") as server:
        exp = int(time.time()) + 4
        short = op.key.sign(op.claims(resource=server.url, exp=exp))
        lasting = op.key.sign(op.claims(resource=server.url, sub="another-client", client_id="another-client"))
        async with (
            caller(server.url, short) as expiring,
            caller(server.url, lasting) as other,
            legacy_caller(server.url, short) as expiring_legacy_heard,
            expiring.listen(resources_list_changed=True) as expiring_stream,
            other.listen(resources_list_changed=True) as other_stream,
        ):
            with anyio.fail_after(exp - time.time() + DEADLINE_S):
                assert await _until_closed(expiring_stream) == []
            assert time.time() >= exp - 1, "ended before the token expired"  # -1: exp is in whole seconds
            write_skill(root, "beta")
            with anyio.fail_after(DEADLINE_S):
                assert await other_stream.__anext__() == ResourcesListChanged()
            await anyio.sleep(1.5)
            assert expiring_legacy_heard == []
        server.assert_alive()


# -- one caller's share --------------------------------------------------------------------------------------------


async def _refusal(client: Client) -> MCPError:
    with pytest.raises(MCPError) as refused:
        async with client.listen(resources_list_changed=True):
            pass
    return refused.value


async def _hold(stack: AsyncExitStack, client: Client, count: int) -> None:
    for _ in range(count):
        subscription: Any = await stack.enter_async_context(client.listen(resources_list_changed=True))
        assert subscription.honored.resources_list_changed is True


async def test_one_token_cannot_hold_more_than_its_share_of_listen_streams(tmp_path: Path) -> None:
    """Issue 19: one valid token could hold all 256 listen slots, locking every other caller out of change news.
    At the default limits a token gets 16 streams; its 17th is refused, and another token still gets one."""
    tokens = _token_file(tmp_path, f"{ALICE} subject=alice\n{BOB} subject=bob\n")
    with http_server([EXAMPLE_SKILLS], "--token-file", str(tokens), "--quiet") as server:
        async with caller(server.url, ALICE) as alice, caller(server.url, BOB) as bob, AsyncExitStack() as held:
            await _hold(held, alice, DOCUMENTED_SHARE)
            refused = await _refusal(alice)
            assert refused.error.code == INTERNAL_ERROR
            assert refused.error.message.startswith("Subscription limit reached"), refused.error.message
            await _hold(held, bob, 1)
        server.assert_alive()


async def test_the_listen_share_per_caller_is_configurable_and_counts_callers_apart(tmp_path: Path) -> None:
    """skillwire choice: `--max-listen-streams-per-caller N`; the refusal says it is this caller's share (not the
    server's total), and a stream that closes gives its caller the room back."""
    tokens = _token_file(tmp_path, f"{ALICE} subject=alice\n{BOB} subject=bob\n")
    options = ("--token-file", str(tokens), "--max-listen-streams-per-caller", "2", "--quiet")
    with http_server([EXAMPLE_SKILLS], *options) as server:
        async with caller(server.url, ALICE) as alice, caller(server.url, BOB) as bob:
            async with AsyncExitStack() as held:
                await _hold(held, alice, 2)
                refused = await _refusal(alice)
                assert refused.error.code == INTERNAL_ERROR
                assert "this caller" in refused.error.message, refused.error.message
                await _hold(held, bob, 2)
            # Room again once the streams close: the server sees a close a moment after the client does.
            with anyio.fail_after(DEADLINE_S):
                while True:
                    try:
                        async with alice.listen(resources_list_changed=True):
                            break
                    except MCPError:
                        await anyio.sleep(0.05)
        server.assert_alive()


# -- the bookkeeping, without a server -------------------------------------------------------------------------------
