"""Another MCP server's skills as a source (a gateway): `mcp:https://HOST/PATH` or `mcp:stdio:COMMAND [ARGS...]`.

Every byte is verified against the upstream's own manifest before it is kept or served, and kept on disk by digest
(`GatewayCache`), so a restart serves at once and an upstream that is down keeps its last verified state served.
"""

from __future__ import annotations

from dataclasses import replace

from skillwire.core.errors import SpecError
from skillwire.sources.mcp.credentials import load_credentials
from skillwire.sources.mcp.fetch import Settings
from skillwire.sources.mcp.lock import LockFile
from skillwire.sources.mcp.source import PROVENANCE_KEY, McpSource, UpstreamHealth
from skillwire.sources.mcp.store import DEFAULT_MAX_BYTES, GatewayCache
from skillwire.sources.mcp.upstream import Upstream, parse_upstream
from skillwire.sources.port import SkillSource, SourceOptions

__all__ = [
    "PROVENANCE_KEY",
    "GatewayCache",
    "LockFile",
    "McpSource",
    "Settings",
    "Upstream",
    "UpstreamHealth",
    "open_spec",
    "parse_upstream",
]


def open_spec(target: str, options: SourceOptions) -> SkillSource:
    """`mcp:https://HOST/PATH` (or http://), or `mcp:stdio:COMMAND [ARGS...]`; content is kept in
    `options.gateway_cache` (default `$XDG_CACHE_HOME/skillwire/gateway`), at most `options.gateway_cache_bytes`."""
    upstream = parse_upstream(target)
    if options.upstream_credentials is not None:
        given = load_credentials(options.upstream_credentials).get(target)
        if given is not None:
            upstream = replace(upstream, auth=given.factory(target))
    limit = options.gateway_cache_bytes if options.gateway_cache_bytes is not None else DEFAULT_MAX_BYTES
    try:
        cache = GatewayCache.shared(options.gateway_cache, max_bytes=limit)
    except (OSError, ValueError) as err:
        raise SpecError(f"mcp:{upstream.shown}: cannot use the gateway cache: {err}") from None
    lock = None if options.lock is None else LockFile.shared(options.lock)
    return McpSource(upstream, cache=cache, lock=lock)
