"""Default result shaping for `ServeOptions`, in a module with no imports so `skillwire serve --help` stays fast.

The CLI shows these in its help before anything of the server stack (the SDK, Starlette) is loaded.

    from skillwire.server.defaults import DEFAULT_PAGE_SIZE   # 100 entries per page
"""

from __future__ import annotations

from typing import Literal

CacheScope = Literal["public", "private"]

DEFAULT_PAGE_SIZE = 100
DEFAULT_TTL_MS = 300_000
DEFAULT_CACHE_SCOPE: CacheScope = "public"
DEFAULT_READ_CACHE_BYTES = 64 * 1024 * 1024  # verified contents of hot files kept in memory (`read_cache.py`)
LARGE_READ_BYTES = 1024 * 1024
"""Files at least this large are read afresh (not kept by `read_cache.py`) and share one read budget, smaller ones
another (`service/budget.py`)."""
