"""agentskills-mcp-server's own CLI, bound to a chosen HOST:PORT.

    python bench/peer_servers/agentskills_cli.py HOST PORT --config server.json    (in its venv, Python >= 3.12)

`python -m agentskills_mcp_server --config F --transport streamable-http` always binds 127.0.0.1:8000 at
log level INFO (an access-log line per request). This runs that same `main()` unchanged (config loading, providers,
`create_mcp_server`, limits) and only adjusts the final `MCPServer.run_streamable_http_async` call: HOST:PORT,
logging at warning and JSON responses, the transport settings every server in `bench.peers` runs with.

The package is imported by name at run time: it is not installed in the project's environment.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    args, rest = parser.parse_known_args()
    mcpserver: Any = importlib.import_module("mcp.server.mcpserver.server")
    original = mcpserver.MCPServer.run_streamable_http_async

    async def run(self: Any, **kwargs: Any) -> None:
        logging.getLogger().setLevel(logging.WARNING)
        self.settings.log_level = "WARNING"
        kwargs.update(host=args.host, port=args.port, json_response=True)
        await original(self, **kwargs)

    mcpserver.MCPServer.run_streamable_http_async = run
    cli: Any = importlib.import_module("agentskills_mcp_server.__main__")
    sys.argv = ["agentskills_mcp_server", *rest, "--transport", "streamable-http"]
    cli.main()


if __name__ == "__main__":
    main()
