"""agentskills-mcp-server 0.7 over streamable HTTP, announcing its URL, for `make interop-peers`.

    python tests/interop/peer_scripts/agentskills_server.py CONFIG        (in its peer venv, Python >= 3.12)

The server is the one `bench.peers` measures (`bench/peer_servers/agentskills_cli.py`, its own CLI bound to a
chosen port). It cannot be handed a bound socket, so this script picks a free loopback port, starts it there, and
prints "listening on URL" on stderr (the line `tests.support.servers.http_server` waits for) once the port
accepts connections.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
HOST = "127.0.0.1"


def _announce_when_listening(port: int) -> None:
    while True:
        try:
            socket.create_connection((HOST, port), timeout=0.5).close()
        except OSError:
            time.sleep(0.05)
            continue
        print(f"agentskills: listening on http://{HOST}:{port}/mcp", file=sys.stderr, flush=True)
        return


def main() -> None:
    sys.path.insert(0, str(REPO_ROOT))
    from bench.peer_servers import agentskills_cli

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port = sock.getsockname()[1]
    threading.Thread(target=_announce_when_listening, args=(port,), daemon=True).start()
    sys.argv = [sys.argv[0], HOST, str(port), "--config", sys.argv[1]]
    agentskills_cli.main()


if __name__ == "__main__":
    main()
