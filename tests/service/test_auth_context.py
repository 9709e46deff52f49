"""The seam for caller-scoped catalogs: a handler learns who is asking through the SDK's `get_access_token()`.

skillwire choice (issue 10): the verified caller (subject, scopes, claims) reaches request handlers in
both protocol eras, including handshake-era sessions whose handlers run outside the HTTP request's task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.auth.middleware.auth_context import get_access_token

from skillwire.client.session import SkillsClient
from skillwire.server.extension import SkillsExtension
from skillwire.server.skill_service import ServeOptions, SkillService
from skillwire.service.auth import AuthConfig
from skillwire.service.run import bind, build_server, serve_http, url_for
from skillwire.sources.folder.source import FolderSource
from tests.support.servers import EXAMPLE_SKILLS

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdefgh"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_handlers_see_the_callers_subject_and_scopes(tmp_path: Path, mode: str) -> None:
    """Two callers, two token-file subjects: each skills/list handler call sees its own caller, never the other."""
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{ALICE} subject=alice scopes=skills:read,acme\n{BOB} subject=bob\n", encoding="utf-8")
    tokens.chmod(0o600)
    extension = SkillsExtension(SkillService(FolderSource([EXAMPLE_SKILLS]), ServeOptions()))
    server = build_server(extension)
    seen: list[tuple[str | None, tuple[str, ...]]] = []

    async def probe(ctx: Any, call_next: Any) -> Any:
        if ctx.method == "skills/list":
            access = get_access_token()
            seen.append((None, ()) if access is None else (access.subject, tuple(access.scopes)))
        return await call_next(ctx)

    server.middleware.append(probe)
    sock = bind("127.0.0.1", 0)
    url = url_for(sock)
    auth = AuthConfig(resource=url, token_file=str(tokens))

    async def run() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: serve_http(server, sock, auth=auth))
            with anyio.fail_after(20):
                for token in (ALICE, BOB, ALICE):
                    headers = {"Authorization": f"Bearer {token}"}
                    async with SkillsClient.connect(url, mode=mode, headers=headers) as client:
                        await client.list_entries()
            group.cancel_scope.cancel()

    anyio.run(run)
    assert seen == [("alice", ("skills:read", "acme")), ("bob", ()), ("alice", ("skills:read", "acme"))]
