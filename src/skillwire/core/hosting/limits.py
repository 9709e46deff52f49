"""How much a host accepts from one server: listing caps and times, and the most bytes any response may take.

A server decides what it sends; the host decides how much of it to take. A
resources/read answer may be at most the size its entry lists, grown by the
worst honest encoding of those bytes plus a fixed envelope allowance; anything
more is cut off while it arrives, never buffered whole. A "dynamic" skill lists
no sizes, so the spec's per-skill total (16 MiB) bounds it. A listing that stops
making progress (pages that add no skill) ends within seconds (`client/paging.py`).
The defaults take a real catalog of 100,000 skills (10,000 pages of 10).

    limits = ClientLimits(max_listing_pages=50)
    limits.read_bound(101)          # the most wire bytes a read of a 101-byte file may take
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from skillwire.core.manifest import MAX_TOTAL_BYTES

MIB = 1024 * 1024

# JSON string escaping can spell one content byte as six (`\u0001`); base64 spells three as four,
# and a server may escape its "/" as "\/" (at most 8/3 per byte). Six per byte covers both.
WIRE_BYTES_PER_BYTE = 6


@dataclass(frozen=True, slots=True)
class ClientLimits:
    """Caps on what one server may send a host: positive whole numbers (the `_seconds` ones: any positive number).

    `max_listing_pages`, `max_listing_entries`, `max_listing_bytes`: one skills/list walk stops
    (and says it is incomplete) past any of them. It stops too after `max_stalled_pages` pages in
    a row that add no skill (empty pages, or skills already listed), once `max_stalled_seconds`
    pass without a page that adds one, and when it has taken `max_listing_seconds` in all; the
    same three bound a resources/directory/read walk (`client/paging.py`). One page may take
    what any request may (the connection's read timeout). `max_response_bytes`: any one response that
    is not a resources/read (a listing page, skills/get, a directory page, the handshake).
    `max_read_bytes`: content of a read whose size no entry lists (dynamic skills, cross-origin
    reads). `envelope_bytes`: what a read answer may add to its encoded content (JSON-RPC
    framing, uri, mimeType, _meta).
    """

    max_listing_pages: int = 10_000
    max_listing_entries: int = 200_000
    max_listing_bytes: int = 512 * MIB
    max_stalled_pages: int = 16
    max_stalled_seconds: float = 8  # under 10 s, the most a listing that adds nothing may hold a host (issue 19)
    # 100,000 skills in 10,000 pages of 10 took 76 s over loopback HTTP on a busy 2-core machine: 600 s leaves room
    # for a slower machine or 60 ms a page across a network (`python -m bench.host_listing`).
    max_listing_seconds: float = 600
    max_response_bytes: int = 32 * MIB
    max_read_bytes: int = MAX_TOTAL_BYTES
    envelope_bytes: int = 64 * 1024

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            if spec.name.endswith("_seconds"):
                if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value < math.inf:
                    raise ValueError(f"ClientLimits.{spec.name} must be a positive number of seconds, not {value!r}")
            elif not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"ClientLimits.{spec.name} must be a positive int, not {value!r}")
        if self.max_response_bytes > self.max_listing_bytes:
            raise ValueError(
                f"ClientLimits.max_response_bytes ({self.max_response_bytes}) cannot exceed "
                f"max_listing_bytes ({self.max_listing_bytes}): one page is part of the listing"
            )

    def read_bound(self, size: int | None) -> int:
        """The most bytes a resources/read answer for `size` content bytes may take on the wire.

        `None` (no size listed) bounds the content by `max_read_bytes`.
        """
        content = self.max_read_bytes if size is None else max(0, size)
        return content * WIRE_BYTES_PER_BYTE + self.envelope_bytes

    @property
    def largest_response(self) -> int:
        """The most bytes any single response may take (the bound of the transport's framing)."""
        return max(self.max_response_bytes, self.read_bound(None))


DEFAULT_LIMITS = ClientLimits()
