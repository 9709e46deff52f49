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

from skillwire.server.extension import SkillsExtension
from skillwire.server.prompts import SkillPrompts
from skillwire.service.budget import ByteBudget, ReadBudget
from skillwire.service.run import build_server, file_reads
from tests.support.servers import EXAMPLE_SKILLS

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


@pytest.mark.parametrize("spelling", ["resources\\/read", "\\u0072esources/read"])
@pytest.mark.anyio
async def test_a_method_spelled_with_json_escapes_is_charged_as_the_read_it_is(spelling: str) -> None:
    """JSON may escape any character of the method's name; the SDK decodes it to `resources/read` all the same."""
    holding = anyio.Event()
    done = anyio.Event()
    reached: list[bytes] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        reached.append((await receive())["body"])
        holding.set()
        await done.wait()

    budget = _budget(app, wait=0.05)
    body = b'{"jsonrpc": "2.0", "id": 2, "method": "%s", "params": {"uri": "skill://big/data.bin"}}' % spelling.encode()
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def escaped() -> Message:
        if pending:
            return pending.pop(0)
        await anyio.Event().wait()
        return {"type": "http.disconnect"}

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(budget, _scope(), _client(1), _nowhere)
            await holding.wait()
            await budget(_scope(), escaped, send)  # no room for a second 2 MiB read: 503, never the application
            done.set()
    assert len(reached) == 1
    assert sent[0]["status"] == 503
    assert json.loads(sent[1]["body"])["id"] == 2


@pytest.mark.anyio
async def test_a_deeply_nested_body_is_passed_on_not_a_crash() -> None:
    """The SDK answers it as a parse error; the budget must not fail first on Python's recursion limit."""
    reached: list[bytes] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        reached.append((await receive())["body"])

    body = b'{"method": "resources/read", "params": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def deep() -> Message:
        return pending.pop(0)

    await _budget(app, wait=1)(_scope(), deep, _nowhere)
    assert reached == [body]


def _request(request_id: int, method: str, params: dict[str, object]) -> Receive:
    """A connection that sends one request and then waits."""
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        await anyio.Event().wait()
        return {"type": "http.disconnect"}

    return receive


@pytest.mark.parametrize("prompts", [True, False])
@pytest.mark.anyio
async def test_a_prompt_get_waits_for_room_as_a_read_of_its_skill_md_does(prompts: bool) -> None:
    """skillwire choice (issue 22): with `serve --prompts`, prompts/get answers with a SKILL.md's bytes, so it takes
    room in the same budget as resources/read of that file; a server without prompts sizes no prompts/get."""
    extension = SkillsExtension.from_paths([EXAMPLE_SKILLS])
    server = build_server(extension)
    if prompts:
        SkillPrompts(extension).install(server)
    asked: list[str] = []

    async def size_of(uri: str) -> int:
        asked.append(uri)
        return 2 * MIB

    holding = anyio.Event()
    done = anyio.Event()
    reached: list[int] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        reached.append(json.loads((await receive())["body"])["id"])
        holding.set()
        await done.wait()

    budget = ReadBudget(
        app,
        size_of,
        mcp_path="/mcp",
        large=ByteBudget(3 * MIB),
        small=ByteBudget(3 * MIB),
        wait=0.05,
        reads=file_reads(server),
    )
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(budget, _scope(), _client(1), _nowhere)
            await holding.wait()
            got = _request(2, "prompts/get", {"name": "acme:billing:refunds"})
            if prompts:
                await budget(_scope(), got, send)
            else:
                group.start_soon(budget, _scope(), got, send)
                await anyio.wait_all_tasks_blocked()
            done.set()
    if prompts:
        assert asked == ["skill://big/data.bin", "skill://acme/billing/refunds/SKILL.md"]
        assert sent[0]["status"] == 503
        assert json.loads(sent[1]["body"])["id"] == 2
        assert reached == [1]
    else:
        assert asked == ["skill://big/data.bin"]
        assert reached == [1, 2]
