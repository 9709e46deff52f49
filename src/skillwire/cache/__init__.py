"""The host's caches of verified MCP-served skill files, keyed by server label and the held entry's record.

`MemoryCache` (in memory, bounded, on by default in `Host`) and `SkillCache` (on disk, opt-in) both satisfy
`ContentCache`, the store `Host` asks.

cache = SkillCache()
data = cache.get("docs-server", resource)      # re-hashed on every access; None on a miss
cache.put("docs-server", resource, data)       # refuses bytes that do not match the entry
"""

from skillwire.cache.memory import DEFAULT_MEMORY_CACHE_BYTES, MemoryCache
from skillwire.cache.port import ContentCache
from skillwire.cache.store import (
    AGENT_FOLDERS,
    MARKER_NAME,
    SkillCache,
    default_root,
    location_problem,
)

__all__ = [
    "AGENT_FOLDERS",
    "DEFAULT_MEMORY_CACHE_BYTES",
    "MARKER_NAME",
    "ContentCache",
    "MemoryCache",
    "SkillCache",
    "default_root",
    "location_problem",
]
