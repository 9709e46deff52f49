"""An embedder's server: the SDK's `MCPServer` with the Skills extension wired in by `skills.install(mcp)`.

    python -m tests.support.embedded_server ROOT                      # stdio
    python -m tests.support.embedded_server ROOT --http 127.0.0.1:0   # stdio, and HTTP beside it

With `--http` it serves streamable HTTP as well as stdio, from the same server, and prints "listening on URL" on
stderr: one process answers one stdio client and any number of HTTP clients, and exits when stdin ends.
"""

from __future__ import annotations

import argparse
import socket
import sys

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer

from skillwire import SkillsExtension


async def serve(root: str, http: str | None) -> None:
    mcp = MCPServer("embedded")
    SkillsExtension.from_paths([root]).install(mcp)
    if http is None:
        await mcp.run_stdio_async()
        return
    host, _, port = http.rpartition(":")
    sock = socket.create_server((host, int(port)))
    web = uvicorn.Server(uvicorn.Config(mcp.streamable_http_app(host=host), log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: web.serve(sockets=[sock]))
        while not web.started:
            await anyio.sleep(0.01)
        print(f"listening on http://{host}:{sock.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
        await mcp.run_stdio_async()
        web.should_exit = True


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--http", metavar="HOST:PORT")
    args = parser.parse_args(argv)
    anyio.run(serve, args.root, args.http)


if __name__ == "__main__":
    main(sys.argv[1:])
