"""The `mcp` SDK's floor for resources/read: a low-level `Server` that answers every read with one static text.

    python bench/peer_servers/bare_sdk.py HOST PORT SIZE

No catalog, no lookup: whatever URI is asked for, the answer is SIZE bytes of markdown under that URI. Served over
streamable HTTP at /mcp with JSON responses, the way skillwire serves (`skillwire/service/run.py`), so the difference
between the two is what skillwire adds on top of the SDK. Both protocol eras are served, as the SDK does by default.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp_types import ReadResourceRequestParams, ReadResourceResult, TextResourceContents


def build(size: int) -> Server[Any]:
    line = "Follow the steps.\n"
    text = ("# static\n\n" + line * (size // len(line) + 1))[:size]

    async def read(ctx: ServerRequestContext[Any], params: ReadResourceRequestParams) -> ReadResourceResult:
        return ReadResourceResult(contents=[TextResourceContents(uri=params.uri, mime_type="text/markdown", text=text)])

    return Server("bare-sdk", version="0", on_read_resource=read)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("size", type=int, help="bytes of the one resource")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    app = build(args.size).streamable_http_app(streamable_http_path="/mcp", json_response=True, host=args.host)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
