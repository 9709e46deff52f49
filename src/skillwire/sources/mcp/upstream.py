"""Which upstream MCP server an `mcp:` source reads from, how it is shown, and the key its state is kept under.

    mcp:https://tools.example/mcp        streamable HTTP (http:// too)
    mcp:stdio:COMMAND [ARGS...]          a stdio server the gateway starts (the rest is split as a shell would)

Both protocol eras are spoken (`SkillsClient`'s "auto": `server/discover`, falling back to `initialize`). What is
shown (the label, logs, refusals, each entry's `_meta`) never holds a URL's user, password, query or fragment; a
stdio command line is shown as given, so it must hold no secret (credentials come from files: `credentials.py`).

    upstream = parse_upstream("https://tools.example/mcp")
    upstream.shown    # 'https://tools.example/mcp'
    upstream.key      # the file name of its state in the gateway cache
"""

from __future__ import annotations

import hashlib
import shlex
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx2

from skillwire.client.session import Target
from skillwire.core.display import terminal_safe
from skillwire.core.errors import SpecError

__all__ = ["STDIO", "Upstream", "parse_upstream"]

STDIO = "stdio:"
_USAGE = "needs mcp:https://HOST/PATH, mcp:http://HOST/PATH or mcp:stdio:COMMAND [ARGS...]"


@dataclass(frozen=True, slots=True)
class Upstream:
    """An upstream server: what `SkillsClient.connect` is given, how people see it, and who it is.

    `identity`: what tells two upstreams apart (the URL or command line as given); `key` is derived from it.
    """

    target: Target
    shown: str
    identity: str
    auth: Callable[[], httpx2.Auth] | None = field(default=None, compare=False)
    """Makes the credentials of one connection (`credentials.py`); None: the upstream is asked without any."""

    def connection_auth(self) -> httpx2.Auth | None:
        return None if self.auth is None else self.auth()

    @property
    def key(self) -> str:
        """The upstream's name in the gateway cache: 32 hex digits of the sha256 of its identity."""
        return hashlib.sha256(self.identity.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def parse_upstream(target: str) -> Upstream:
    """The upstream an `mcp:TARGET` spec names; SpecError saying what is expected when it names none."""
    if target.startswith(("http://", "https://")):
        parts = urllib.parse.urlsplit(target)
        try:
            port = parts.port
        except ValueError:
            raise SpecError(f"mcp:{terminal_safe(target)}: the port is not a number; {_USAGE}") from None
        if not parts.hostname:
            raise SpecError(f"mcp:{terminal_safe(target)}: no host; {_USAGE}")
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        netloc = host if port is None else f"{host}:{port}"
        shown = f"{parts.scheme}://{netloc}{parts.path}" + ("?..." if parts.query else "")
        return Upstream(target, terminal_safe(shown), target)
    if target.startswith(STDIO):
        try:
            argv = shlex.split(target[len(STDIO) :])
        except ValueError as err:
            raise SpecError(f"mcp:{terminal_safe(target)}: {err}; {_USAGE}") from None
        if not argv:
            raise SpecError(f"mcp:{terminal_safe(target)}: no command; {_USAGE}")
        return Upstream(argv, terminal_safe(STDIO + shlex.join(argv)), STDIO + shlex.join(argv))
    raise SpecError(f"mcp:{terminal_safe(target)}: {_USAGE}")
