"""A real HTTP server whose source fails unexpectedly: -32603, nothing internal on the wire, and it keeps serving.

Spec MUST (Error Handling): "Internal errors: -32603 (Internal error)". skillwire choice: the message is generic
(the traceback, with the paths and text of the failure, goes to the server's log only). The server is
`tests.support.faulty_server`: production code end to end, with a source whose disk check raises for one skill.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.support.faulty_server import SECRET
from tests.support.servers import (
    MODES,
    Mode,
    ServerTarget,
    connect,
    directory_read,
    error_json,
    http_server,
    resources_read,
    skills_get,
    skills_list,
)

pytestmark = pytest.mark.anyio

INTERNAL_ERROR = -32603
BROKEN = "skill://broken/SKILL.md"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerTarget]:
    base = tmp_path_factory.mktemp("internal-errors")
    root = base / "skills"
    for name in ("broken", "fine"):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Does {name}\n---\n# Hi\n")
    command = [sys.executable, "-m", "tests.support.faulty_server", str(root), "--fail-on", BROKEN]
    with http_server([root], command=command) as server:
        yield ServerTarget("http", (root,), base / "logs", http=server)
        server.assert_alive()


def assert_generic_internal_error(err: MCPError, root: Path) -> None:
    """-32603, and nothing of the failure itself: no text of it, no path, no traceback, no exception type."""
    assert err.error.code == INTERNAL_ERROR, error_json(err)
    shown = error_json(err)
    for leak in (SECRET, str(root.resolve()), "Traceback", "RuntimeError", "disk check"):
        assert leak not in shown, shown


@pytest.mark.parametrize("mode", MODES)
async def test_an_internal_error_answers_32603_with_nothing_internal_and_the_server_keeps_serving(
    target: ServerTarget, mode: Mode
) -> None:
    """A handshake-era client got code 0 with the exception's text (a server path included)."""
    root = target.roots[0]
    async with connect(target, mode=mode) as client:
        for attempt in range(2):  # the same failure twice: the first one broke nothing
            with pytest.raises(MCPError) as got:
                await skills_get(client, BROKEN)
            assert_generic_internal_error(got.value, root)
            with pytest.raises(MCPError) as listed:
                await directory_read(client, "skill://broken")
            assert_generic_internal_error(listed.value, root)
            assert (await skills_get(client, "skill://fine/SKILL.md")).skill["uri"] == "skill://fine/SKILL.md"
            assert [s["uri"] for s in (await skills_list(client)).skills] == [BROKEN, "skill://fine/SKILL.md"]
            assert (await resources_read(client, BROKEN)).contents, attempt
    target.assert_alive()
    assert SECRET in target.server_stderr()  # the operator's log has the whole story
