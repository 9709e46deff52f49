"""The host's verified on-disk cache of MCP-served skill files, keyed by server label and uri.

cache = SkillCache()
data = cache.get("docs-server", resource)      # re-hashed on every access; None on a miss
cache.put("docs-server", resource, data)       # refuses bytes that do not match the entry
"""

from skillwire.cache.store import (
    AGENT_FOLDERS,
    MARKER_NAME,
    SkillCache,
    default_root,
    location_problem,
)

__all__ = [
    "AGENT_FOLDERS",
    "MARKER_NAME",
    "SkillCache",
    "default_root",
    "location_problem",
]
