"""FastMCP 4.1's Skills server over streamable HTTP on a port the system picks, for the interop tests.

    python tests/interop/peer_scripts/fastmcp_server.py ROOT        (in the FastMCP peer venv)

The server is the one `bench.peers` measures (`bench/peer_servers/fastmcp_skills.py`); this script only binds
127.0.0.1:0 itself and prints "listening on URL" on stderr, the line `tests.support.servers.http_server` waits for.
fastmcp and uvicorn come from the peer venv, imported by name (neither is type-checked in the project's venv).
"""

from __future__ import annotations

import importlib
import socket
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[3]


def main() -> None:
    sys.path.insert(0, str(REPO_ROOT))
    from bench.peer_servers.fastmcp_skills import build

    uvicorn: Any = importlib.import_module("uvicorn")
    app = build(Path(sys.argv[1])).http_app(path="/mcp", json_response=True)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    print(f"fastmcp: listening on http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    main()
