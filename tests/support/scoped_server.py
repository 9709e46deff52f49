"""A real skills HTTP server with the SDK's bearer auth and a scopes policy, for tests.

    python -m tests.support.scoped_server ROOT --scopes scopes.toml --tokens tokens.json [--no-watch]

`tokens.json` maps each bearer token a test may send to the `AccessToken` fields it stands for
(`client_id`, `scopes`, `subject`, `claims`). Everything else is the production path: the SDK's
`AuthenticationMiddleware`/`AuthContextMiddleware` and `RequireAuthMiddleware`, `get_access_token()`
inside handlers, `PolicyFile`, `SkillsExtension`, the catalog page and `LiveReload`. Only the token
verifier is a stand-in (the real ones are JWT and token-file verifiers); it is an exact dictionary lookup.
Prints "listening on URL" on stderr, as `skillwire serve --http` does.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from skillwire.server.extension import SkillsExtension
from skillwire.server.skill_service import ServeOptions, SkillService
from skillwire.service.catalog_page import catalog_routes
from skillwire.service.run import MCP_PATH, bind, build_server, url_for
from skillwire.service.scopes_file import PolicyFile
from skillwire.service.watch import LiveReload
from skillwire.sources.folder.source import FolderSource


class DictTokenVerifier:
    """An SDK `TokenVerifier` that knows a fixed set of tokens (a test's stand-in for JWT verification)."""

    def __init__(self, tokens: dict[str, dict[str, Any]]) -> None:
        self._tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        fields = self._tokens.get(token)
        if fields is None:
            return None
        return AccessToken(token=token, **fields)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--scopes", required=True)
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--no-watch", dest="watch", action="store_false")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    tokens = json.loads(Path(args.tokens).read_text(encoding="utf-8"))
    callers = PolicyFile.load(args.scopes)
    service = SkillService(FolderSource(args.roots), ServeOptions(page_size=args.page_size))
    extension = SkillsExtension(service, callers=callers)
    server = build_server(extension)
    live = LiveReload(service, watch=args.watch, debounce_ms=200, step_ms=20, callers=callers)
    live.install(server)
    sock = bind("127.0.0.1", 0)
    url = url_for(sock)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=True,
        host="127.0.0.1",
        auth=AuthSettings(issuer_url="http://127.0.0.1/issuer", resource_server_url=None),  # type: ignore[arg-type]
        token_verifier=DictTokenVerifier(tokens),
        custom_starlette_routes=catalog_routes(service, callers),
    )
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", log_config=None, lifespan="on", access_log=False))
    original_startup = uv.startup

    async def startup(sockets: Any = None) -> None:
        await original_startup(sockets=sockets)
        print(f"listening on {url}", file=sys.stderr, flush=True)

    uv.startup = startup  # type: ignore[method-assign]
    original_shutdown = uv.shutdown

    async def shutdown(sockets: Any = None) -> None:
        live.notifier.close()
        await original_shutdown(sockets=sockets)

    uv.shutdown = shutdown  # type: ignore[method-assign]

    async def serve() -> None:
        async with live.running():
            await uv.serve(sockets=[sock])

    anyio.run(serve)


if __name__ == "__main__":
    main()
