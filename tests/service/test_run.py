"""The standalone runner's listening socket (skillwire choice)."""

from __future__ import annotations

import asyncio
import socket

from skillwire.service.run import bind


def test_accepted_connections_get_tcp_nodelay() -> None:
    """Without TCP_NODELAY, Nagle's algorithm and a client's delayed ACK hold each keep-alive response ~40 ms.

    asyncio turns it on only for sockets created as IPPROTO_TCP, so `bind` must create them that way."""

    async def main() -> int:
        seen: list[int] = []

        def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        listener = bind("127.0.0.1", 0)
        server = await asyncio.start_server(accepted, sock=listener)
        host, port = listener.getsockname()[:2]
        async with server:
            _, writer = await asyncio.open_connection(host, port)
            for _ in range(100):
                if seen:
                    break
                await asyncio.sleep(0.01)
            writer.close()
        return seen[0]

    assert asyncio.run(main()) != 0
