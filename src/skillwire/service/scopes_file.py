"""The scopes policy file (`skillwire serve --scopes FILE`) and the request's caller, from the SDK's auth context.

`PolicyFile` is the `CallerResolver` a server uses with a policy: the caller is the
request's verified access token (`get_access_token()`: subject, client id, scopes,
claims), what it may see comes from the policy (`skillwire.core.scopes`). The file is
checked on use (one `stat`); when it changed it is re-read in a worker thread, so the
next request after an edit sees the new policy. A file that no longer parses keeps
the previous policy in force, with one warning per bad version of the file.

    callers = PolicyFile.load("scopes.toml")      # InvalidScopePolicy: one line to show
    SkillsExtension(service, callers=callers)
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import NamedTuple

import anyio
import anyio.to_thread
from mcp.server.auth.middleware.auth_context import get_access_token

from skillwire.core.scopes import ANONYMOUS, MAX_POLICY_BYTES, Caller, InvalidScopePolicy, ScopePolicy, Visibility
from skillwire.core.scopes import parse_policy as _parse
from skillwire.sources.safe_open import read_regular

logger = logging.getLogger(__name__)


class _Version(NamedTuple):
    """What identifies one version of the file without reading it (an edit in place or a rename changes it)."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int


def _version_of(path: str) -> _Version | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _Version(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def read_policy(path: str) -> ScopePolicy:
    """The policy in the file at `path`; InvalidScopePolicy (naming the file) if it cannot be read or used."""
    try:
        data = read_regular(path, limit=MAX_POLICY_BYTES, follow_links=True)  # never blocks on a FIFO
    except OSError as err:
        raise InvalidScopePolicy(path, f"cannot read it: {err.strerror or err}") from None
    if len(data) > MAX_POLICY_BYTES:
        raise InvalidScopePolicy(path, f"larger than {MAX_POLICY_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InvalidScopePolicy(path, f"not UTF-8 (byte {err.start})") from None
    return _parse(text, origin=path)


class PolicyFile:
    """A `CallerResolver` over a policy file, re-read when it changes (a bad new version keeps the previous policy)."""

    def __init__(self, path: str, policy: ScopePolicy, version: _Version | None) -> None:
        self.path = path
        self.policy = policy
        self._version = version  # of the file that gave `policy`, or of the bad file last reported
        self._lock = anyio.Lock()
        self._listeners: list[Callable[[ScopePolicy], None]] = []

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> PolicyFile:
        """Read the policy at `path` now (at start: a bad file is an error to report, not a warning)."""
        where = os.fspath(path)
        version = _version_of(where)
        return cls(where, read_policy(where), version)

    def on_change(self, listener: Callable[[ScopePolicy], None]) -> None:
        """Call `listener` with each new policy after a reload."""
        self._listeners.append(listener)

    def caller(self) -> Caller:
        token = get_access_token()
        if token is None:
            return ANONYMOUS
        return Caller(
            subject=token.subject,
            client_id=token.client_id,
            scopes=frozenset(token.scopes),
            claims=token.claims or {},
        )

    async def scope(self) -> Visibility:
        await self.refresh()
        return self.policy.visibility(self.caller())

    def visibility(self, caller: Caller) -> Visibility:
        return self.policy.visibility(caller)

    async def refresh(self) -> None:
        """Re-read the file if it changed since it was last read (one `stat` when it did not)."""
        if _version_of(self.path) == self._version:
            return
        async with self._lock:
            version = _version_of(self.path)
            if version == self._version:
                return  # another request reloaded it while this one waited
            self._version = version  # a bad version is reported once, not on every request
            try:
                policy = await anyio.to_thread.run_sync(read_policy, self.path)
            except InvalidScopePolicy as err:
                logger.warning("scopes policy not reloaded, the previous one stays in force: %s", err)
                return
            self.policy = policy
            logger.info("scopes policy reloaded from %s: %d grants", self.path, len(policy.grants))
            for listener in self._listeners:
                listener(policy)
