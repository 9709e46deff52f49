"""Keyset pagination for every catalog listing: pages, and the opaque cursors that name the last key handed out.

A cursor names a key, not a position, so it stays meaningful when the catalog is rebuilt between two pages.
"""

from __future__ import annotations

import base64
import binascii
import json
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from skillwire.core.errors import InvalidCursor

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a listing and the opaque cursor for the next, if any."""

    items: tuple[T, ...]
    next_cursor: str | None


# Cursors are opaque to clients; inside they name the last key handed out (keyset
# pagination), so a cursor stays meaningful when the catalog is rebuilt.
_CURSOR_VERSION = 1


def encode_cursor(scope: str, last_key: str) -> str:
    raw = json.dumps({"v": _CURSOR_VERSION, "s": scope, "k": last_key}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, scope: str) -> str:
    """The last key named by `cursor`, or InvalidCursor if it is not one of ours for `scope`."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeEncodeError):
        raise InvalidCursor("Invalid cursor: not one this server handed out") from None
    if not isinstance(data, dict) or data.get("v") != _CURSOR_VERSION or not isinstance(data.get("k"), str):
        raise InvalidCursor("Invalid cursor: not one this server handed out")
    if data.get("s") != scope:
        raise InvalidCursor("Invalid cursor: it belongs to a different listing")
    key: str = data["k"]
    return key


def paginate(keys: Sequence[str], cursor: str | None, limit: int, *, scope: str) -> tuple[Sequence[str], str | None]:
    """The page of sorted `keys` after `cursor` (keyset pagination) and the cursor for the next page, if any."""
    start = 0 if cursor is None else bisect_right(keys, decode_cursor(cursor, scope))
    chunk = keys[start : start + limit]
    more = start + limit < len(keys)
    return chunk, (encode_cursor(scope, chunk[-1]) if more and chunk else None)
