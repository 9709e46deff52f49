"""The read budget's queue (`service/budget.py`), driven the way uvicorn drives an ASGI app.

skillwire choice (issue 19): a read that waits for room and whose client leaves meanwhile is dropped (its answer is
never built) and takes no room; a read that finds none in time is answered 503 for its own id. The application
behind the budget is an in-memory stand-in that records what reached it; the budget itself is the real one.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import anyio
import pytest
from starlette.types import Message, Receive, Scope, Send

from skillwire.service.budget import ByteBudget, ReadBudget

MIB = 1024 * 1024


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _scope() -> Scope:
    return {"type": "http", "method": "POST", "path": "/mcp", "headers": [(b"content-type", b"application/json")]}


def _client(request_id: int, leave: anyio.Event | None = None) -> Receive:
    """A connection that sends one `resources/read` and then waits; with `leave`, it disconnects when that is set."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "resources/read", "params": {"uri": "skill://big/data.bin"}}
    ).encode()
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        await (leave or anyio.Event()).wait()
        return {"type": "http.disconnect"}

    return receive


async def _nowhere(message: Message) -> None:
    """The send of a client whose answer the test does not look at."""


def _budget(app: Callable[[Scope, Receive, Send], Awaitable[None]], *, wait: float) -> ReadBudget:
    async def size_of(uri: str) -> int:
        return 2 * MIB

    return ReadBudget(app, size_of, mcp_path="/mcp", large=ByteBudget(3 * MIB), small=ByteBudget(3 * MIB), wait=wait)


@pytest.mark.anyio
async def test_a_read_whose_client_leaves_while_it_waits_is_never_answered_and_takes_no_room() -> None:
    answered: list[int] = []
    first_may_finish = anyio.Event()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        message = await receive()
        answered.append(json.loads(message["body"])["id"])
        await first_may_finish.wait()

    budget = _budget(app, wait=30)
    leave = anyio.Event()
    first = _client(1)
    second = _client(2, leave)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(budget, _scope(), first, _nowhere)
            while not answered:
                await anyio.sleep(0.01)
            group.start_soon(budget, _scope(), second, _nowhere)
            while budget.large.waiting == 0:
                await anyio.sleep(0.01)
            leave.set()
            while budget.large.waiting:
                await anyio.sleep(0.01)
            first_may_finish.set()
    assert answered == [1]
    assert budget.large.used == 0


@pytest.mark.anyio
async def test_a_read_that_finds_no_room_in_time_is_answered_503_for_its_own_id() -> None:
    holding = anyio.Event()
    done = anyio.Event()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        holding.set()
        await done.wait()

    budget = _budget(app, wait=0.05)
    first = _client(1)
    second = _client(2)
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(budget, _scope(), first, _nowhere)
            await holding.wait()
            await budget(_scope(), second, send)
            done.set()
    assert sent[0]["status"] == 503
    assert (b"retry-after", b"5") in sent[0]["headers"]
    answer = json.loads(sent[1]["body"])
    assert answer["id"] == 2
    assert answer["error"]["code"] == -32603
    assert budget.busy == 1
    assert budget.large.used == 0
