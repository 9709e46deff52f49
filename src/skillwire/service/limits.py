"""The resource bounds of an HTTP skills server, with defaults that hold on a small machine.

Every bound an unauthenticated client can push against has a number here: open connections, how
long a connection may sit silent or dribble a request, how long it may leave an answer untaken,
handshake-era sessions and how long they live, `subscriptions/listen` streams (in all, and per caller), and the
bytes of files being read or sent at once (and how long a read waits for room among them).
`connections.py`, `sessions.py`, `listen_limits.py` and `budget.py` enforce them; `skillwire serve --help` names
each flag.

    limits = ServeLimits(max_connections=2_000)
    limits = limits.fitted_to_fd_limit()   # leave room for files, watchers and the listening socket
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None  # type: ignore[assignment]

DEFAULT_MAX_CONNECTIONS = 8_192
DEFAULT_IDLE_TIMEOUT_S = 5.0
DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_MAX_SESSIONS = 1_000
DEFAULT_SESSION_IDLE_TIMEOUT_S = 600.0
DEFAULT_MAX_LISTEN_STREAMS = 256
DEFAULT_MAX_LISTEN_STREAMS_PER_CALLER = 16
"""One caller's share of the listen streams (a client needs one or two), so one token cannot take them all."""
DEFAULT_READ_BUDGET_BYTES = 16 * 1024 * 1024
DEFAULT_READ_WAIT_S = 30.0
DEFAULT_WRITE_TIMEOUT_S = 30.0
FD_RESERVE = 256
"""File descriptors kept free of connections: served files, the watcher, logs, the listening socket."""


@dataclass(frozen=True, slots=True)
class ServeLimits:
    """Bounds for one HTTP server (see the module docstring); every field must be positive."""

    max_connections: int = DEFAULT_MAX_CONNECTIONS
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT_S
    header_timeout: float = DEFAULT_HEADER_TIMEOUT_S
    max_sessions: int = DEFAULT_MAX_SESSIONS
    session_idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT_S
    max_listen_streams: int = DEFAULT_MAX_LISTEN_STREAMS
    max_listen_streams_per_caller: int = DEFAULT_MAX_LISTEN_STREAMS_PER_CALLER
    read_budget: int = DEFAULT_READ_BUDGET_BYTES
    read_wait: float = DEFAULT_READ_WAIT_S  # seconds a read waits for room in the budget before a 503
    write_timeout: float = DEFAULT_WRITE_TIMEOUT_S  # seconds a client may leave the next part of an answer untaken

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not 0 < value < float("inf"):  # NaN fails both comparisons
                raise ValueError(f"{field.name.replace('_', '-')} must be a positive number, not {value!r}")

    def fitted_to_fd_limit(self) -> ServeLimits:
        """These limits with `max_connections` lowered to what the process's file descriptor limit allows.

        The soft RLIMIT_NOFILE is first raised towards the hard one (as far as needed): a connection
        refused at our cap costs one line, a connection refused by the kernel's EMFILE costs a traceback.
        """
        room = fd_room(self.max_connections + FD_RESERVE)
        if room is None:
            return self
        return dataclasses.replace(self, max_connections=max(1, min(self.max_connections, room - FD_RESERVE)))


def fd_room(wanted: int) -> int | None:
    """The soft file descriptor limit after raising it to `wanted` if the hard limit allows (None: unknown)."""
    if resource is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return None if soft == resource.RLIM_INFINITY else int(soft)
