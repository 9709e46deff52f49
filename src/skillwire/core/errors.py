"""Every exception skillwire raises to a caller: one tree, rooted in `SkillwireError`, all exported from `skillwire`.

Three families under the root: something on our side breaks a rule (a skill, a source spec, a config file); a server
did not give a usable answer (`ServerError`: an error instead of a result, an answer the spec does not allow, content
that does not match its entry); the host refused (`HostError`). A class with two parents is drawn under each.
`tests/core/test_errors.py` checks this drawing against the classes, so the two cannot drift apart.

    SkillwireError
    ├── SkillError                      a skill (on disk or in an entry) breaks a rule
    │   ├── FrontmatterError            SKILL.md frontmatter missing, malformed, or not JSON-representable
    │   ├── NameRuleError               a name or path segment breaks the Agent Skills / URI rules
    │   └── LimitExceeded               a skill is over 512 files or 16 MiB
    ├── InvalidSkillUri                 a URI is not a well-formed skill:// file or directory URI
    ├── InvalidCursor                   a pagination cursor this server did not hand out (or for another listing)
    ├── SpecError                       a source spec (`git:PATH@REF`, ...) that cannot be opened; a ValueError too
    ├── SourceError                     a source cannot serve at all (no such repository, a ref naming no commit)
    ├── WiringError                     the Skills extension is mounted on an MCP server without its read path
    ├── GenerationError                 a generated skill's file could not be produced (failed, too slow, too large)
    ├── InvalidScopePolicy              a scopes policy (serve --scopes) cannot be read or breaks its format
    ├── TokenFileError                  a token file (serve --token-file) cannot be used
    ├── AuthenticationRequired          an HTTP server refused us (401/403) and said where a token comes from
    ├── NotDeclared                     the server did not declare a feature, so the client sent nothing
    │   ├── ExtensionNotDeclared        ... the Skills extension (no skills/list, no skills/get)
    │   └── DirectoryReadNotDeclared    ... `directoryRead: true` (no resources/directory/read)
    ├── ServerError                     a server did not give a usable answer: the fault is on its side
    │   ├── RequestFailed               an error instead of a result (`code`, `message`; the cause: the SDK MCPError)
    │   │   └── ReadFailed              ... for a read of a loaded skill's file or directory (a HostError too)
    │   ├── UnexpectedResponse          an answer the spec does not allow (malformed, paging that does not end)
    │   ├── InvalidEntry                a skills/list or skills/get entry that breaks the entry rules
    │   └── VerificationError           content does not match the entry it was checked against
    │       ├── DigestMismatch
    │       ├── SizeMismatch
    │       ├── FrontmatterMismatch
    │       ├── UnlistedResource        a read of a file the held entry does not list
    │       │   └── OutsideSkill        ... a path outside the skill's root
    │       ├── ResponseTooLarge        an answer passed its byte bound on the wire; reading it stopped there
    │       └── SkillChanged            a failure whose refresh found the skill changed (a HostError too)
    ├── HostError                       the host refused, with a message meant for the user (and the model)
    │   ├── SkillDeclined               the host will not load this skill (limits, dynamic content, a local skill)
    │   ├── ApprovalDenied              the user (or the non-interactive default) said no
    │   ├── NotLoaded                   a file read for a skill that is not loaded
    │   ├── ReadFailed
    │   └── SkillChanged
    ├── UnknownSkill                    no registered skill answers to a handle or name
    ├── AmbiguousSkillName              a bare name matches several skills; the caller must pick a handle
    ├── ToolArgumentError               the model called a skill tool with missing or mistyped arguments
    ├── ApprovalFileError               the approvals file exists but cannot be read as approvals
    └── CacheError                      the skill cache cannot be used as asked
        └── CacheLocationRefused        a cache root that an agent's skill discovery could see

An exception class defined anywhere else in the package is internal: caught where it is raised (a source's walk, the
CLI's `main`), never met by a caller of the API. `tests/test_exception_tree.py` names each one, and fails on a new one.
This module imports nothing above the core (nor the SDK): `import skillwire.core.errors` stays light.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pathlib import Path


class SkillwireError(Exception):
    """Root of every skillwire exception."""


class SkillError(SkillwireError):
    """A skill breaks a rule of the Agent Skills spec or the Skills extension.

    `path` is the file (relative to its root, `/`-separated) and `line` the
    1-based line where known; `rule` is a short stable identifier for the rule.
    """

    def __init__(self, message: str, *, rule: str, path: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = self.path or ""
        if where and self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}" if where else self.message


class FrontmatterError(SkillError):
    """SKILL.md frontmatter is missing, is not valid YAML, or cannot be rendered as JSON."""


class NameRuleError(SkillError):
    """A skill name or a skill-path segment breaks the naming rules."""


class LimitExceeded(SkillError):
    """A skill is over the per-skill limits (512 resources, 16 MiB)."""


class InvalidSkillUri(SkillwireError):
    """A URI is not a well-formed skill URI (bad scheme, `..`, encoded separators, ...)."""

    def __init__(self, uri: str, reason: str) -> None:
        super().__init__(f"{_shorten(uri)} is not a valid skill URI: {reason}")
        self.uri = uri
        self.reason = reason


class AuthenticationRequired(SkillwireError):
    """An HTTP server answered 401 (no or a refused token) or 403 (a token without a needed scope).

    `authorization_servers` are those its Protected Resource Metadata (RFC 9728) names (empty if it
    publishes none); `error` is the `WWW-Authenticate` error code (`invalid_token`, `insufficient_scope`).
    """

    def __init__(
        self,
        url: str,
        *,
        status: int,
        error: str | None,
        authorization_servers: tuple[str, ...],
        scope: str | None,
        token_sent: bool = False,
    ) -> None:
        if status == 403:
            needed = f" (it needs the scope {_shorten(scope, 100)})" if scope else ""
            message = f"{_shorten(url)} refused the token: {_shorten(error or 'forbidden', 100)}{needed}"
        else:
            what = (
                "refused the bearer token sent (expired, revoked, or not for this server); it takes one"
                if token_sent
                else "needs a bearer token"
            )
            if authorization_servers:
                names = ", ".join(_shorten(a, 100) for a in authorization_servers[:3])
                more = " (and others)" if len(authorization_servers) > 3 else ""
                message = f"{_shorten(url)} {what} from the authorization server {names}{more}"
            else:
                message = f"{_shorten(url)} {what} (it names no authorization server: ask whoever runs it)"
        super().__init__(message)
        self.url = url
        self.status = status
        self.error = error
        self.authorization_servers = authorization_servers
        self.scope = scope
        self.token_sent = token_sent


class SourceError(SkillwireError):
    """A source that cannot serve at all (a repository that is not there, a ref that names no commit); one line."""


class WiringError(SkillwireError):
    """The Skills extension is mounted on an MCP server only in part; the message says what to add.

    `MCPServer(extensions=[skills])` alone declares the extension and answers skills/list, but no resources/read
    of a skill file: `skills.install(server)` wires all of it in one call.
    """


class InvalidScopePolicy(SkillwireError):
    """A scopes policy that cannot be used: where it came from (`origin`, the file) and what is wrong with it."""

    def __init__(self, origin: str, problem: str) -> None:
        super().__init__(f"{origin}: {problem}")
        self.origin = origin
        self.problem = problem


class GenerationError(SkillwireError):
    """A generated skill's file could not be produced when read: `uri`, and `reason` fit to send to a client (the
    generator's own exception is logged on the server, never sent)."""

    def __init__(self, uri: str, reason: str) -> None:
        super().__init__(f"{_shorten(uri)}: {reason}")
        self.uri = uri
        self.reason = reason


class InvalidCursor(SkillwireError):
    """A pagination cursor that this server did not hand out (or for another listing)."""


class SpecError(SkillwireError, ValueError):
    """A source spec that cannot be opened as written: says which and why."""


class TokenFileError(SkillwireError):
    """The token file cannot be used; `line` is the 1-based line at fault, if any (the token is never quoted)."""

    def __init__(self, message: str, *, path: str, line: int | None = None) -> None:
        super().__init__(f"{path}:{line}: {message}" if line is not None else f"{path}: {message}")
        self.path = path
        self.line = line


# -- a server's side ---------------------------------------------------------------------------------------------------


class NotDeclared(SkillwireError):
    """The server did not declare a feature, so the client refused to call it (nothing was sent)."""

    def __init__(self, message: str, *, feature: str, server_name: str | None) -> None:
        super().__init__(message)
        self.feature = feature
        self.server_name = server_name


class ExtensionNotDeclared(NotDeclared):
    """The server's capabilities do not declare `io.modelcontextprotocol/skills`: no skills/* call is made."""

    def __init__(self, server_name: str | None) -> None:
        from skillwire.core.wire import EXTENSION_ID  # here, not above: `core.wire` loads pydantic

        shown = f"server {server_name!r}" if server_name else "the server"
        super().__init__(
            f"{shown} does not declare the {EXTENSION_ID} extension; skills/list and skills/get were not called",
            feature=EXTENSION_ID,
            server_name=server_name,
        )


class DirectoryReadNotDeclared(NotDeclared):
    """The server did not declare `directoryRead: true`, so resources/directory/read MUST NOT be called."""

    def __init__(self, server_name: str | None) -> None:
        from skillwire.core.wire import EXTENSION_ID  # here, not above: `core.wire` loads pydantic

        shown = f"server {server_name!r}" if server_name else "the server"
        super().__init__(
            f"{shown} does not declare directoryRead: true; resources/directory/read was not called",
            feature=f"{EXTENSION_ID}#directoryRead",
            server_name=server_name,
        )


class ServerError(SkillwireError):
    """A server did not give a usable answer: an error instead of a result, an answer the spec does not allow, or
    content that does not match its entry. `except ServerError` catches every way a server (or the line to it) failed
    a request; the subclasses say which."""


class RequestFailed(ServerError):
    """A request got a JSON-RPC error instead of a result: the server's own (`-32602` for an unknown skill, say), or
    the SDK's for a request that could not finish (the connection closed, the request timed out).

    `method` is the request (`connect` for the handshake) and `uri` what it named, if anything; `code`, `message` and
    `data` are the error's. The message is the server's text, untrusted: shown escaped and cut short. The SDK's
    `MCPError` is the `__cause__`.
    """

    def __init__(self, method: str, code: int, message: str, *, uri: str | None = None, data: object = None) -> None:
        where = f" for {_shorten(uri)}" if uri else ""
        super().__init__(f"{method}{where}: error {code}: {_shorten(message, 500)}")
        self.method = method
        self.code = code
        self.message = message
        self.uri = uri
        self.data = data


class UnexpectedResponse(ServerError):
    """The server answered with something the spec does not allow (the peer is wrong, not us)."""

    def __init__(self, method: str, reason: str, *, uri: str | None = None) -> None:
        where = f" for {uri[:200]}" if uri else ""
        super().__init__(f"{method}{where}: {reason}")
        self.method = method
        self.reason = reason
        self.uri = uri


class InvalidEntry(ServerError):
    """A skills/list or skills/get entry that breaks the entry rules; hosts MUST NOT load it."""

    def __init__(self, uri: str | None, reason: str) -> None:
        super().__init__(f"{uri or '(entry without a uri)'}: {reason}")
        self.uri = uri
        self.reason = reason


class VerificationError(ServerError):
    """Content fetched from a server does not match the entry it was checked against."""

    def __init__(self, message: str, *, uri: str) -> None:
        super().__init__(message)
        self.uri = uri


class DigestMismatch(VerificationError):
    """The SHA-256 digest of the bytes read differs from the entry's digest."""

    def __init__(self, uri: str, *, expected: str, actual: str) -> None:
        super().__init__(f"{uri}: digest {actual} does not match the entry's {expected}", uri=uri)
        self.expected = expected
        self.actual = actual


class SizeMismatch(VerificationError):
    """The byte length read differs from the entry's size."""

    def __init__(self, uri: str, *, expected: int, actual: int) -> None:
        super().__init__(f"{uri}: read {actual} bytes but the entry says {expected}", uri=uri)
        self.expected = expected
        self.actual = actual


class FrontmatterMismatch(VerificationError):
    """The frontmatter parsed from SKILL.md differs from the entry's frontmatter."""

    def __init__(self, uri: str, *, fields: tuple[str, ...]) -> None:
        listed = ", ".join(fields) if fields else "(structure)"
        super().__init__(f"{uri}: frontmatter differs from the entry in: {listed}", uri=uri)
        self.fields = fields


class UnlistedResource(VerificationError):
    """A read of a file that the held entry does not list."""

    def __init__(self, uri: str, *, skill_uri: str) -> None:
        super().__init__(f"{uri} is not listed in the held entry for {skill_uri}", uri=uri)
        self.skill_uri = skill_uri


class OutsideSkill(UnlistedResource):
    """A path that resolves outside the skill's root (`..` past the root, another scheme or skill)."""


class ResponseTooLarge(VerificationError):
    """A server's answer passed the most bytes the host accepts for it; the rest was never read.

    `limit` is the bound on the wire (for a read: the listed size grown by the worst encoding plus
    an envelope allowance, see `skillwire.core.hosting.limits`); `expected` is the listed content size, or
    None where no size was listed. `method` is the request that was answered.
    """

    def __init__(self, uri: str, *, method: str, limit: int, expected: int | None = None) -> None:
        listed = "" if expected is None else f" (the entry lists {expected} bytes)"
        super().__init__(
            f"{_shorten(uri)}: the {method} answer passed {limit:,} bytes{listed}; stopped reading", uri=uri
        )
        self.method = method
        self.limit = limit
        self.expected = expected


# -- the host ----------------------------------------------------------------------------------------------------------


class HostError(SkillwireError):
    """A host-side refusal with a message meant for the user (and the model)."""


class SkillDeclined(HostError):
    """The host will not load this skill (limits, dynamic content, a local skill, ...)."""


class ApprovalDenied(HostError):
    """The user (or the non-interactive default) said no."""


class NotLoaded(HostError):
    """A file read for a skill that is not loaded: reads happen only inside an acting window."""


class ReadFailed(HostError, RequestFailed):
    """A server answered a read of a loaded skill's file or directory with an error; nothing reached the model.

    `origin` is the server's host-assigned label; `method`, `code`, `message` and `data` are those of the
    `RequestFailed` it comes from (its `__cause__`).
    """

    uri: str

    def __init__(self, origin: str, uri: str, failed: RequestFailed) -> None:
        from skillwire.core.wire import DIRECTORY_READ  # here, not above: `core.wire` loads pydantic

        super().__init__(failed.method, failed.code, failed.message, uri=uri, data=failed.data)
        self.origin = origin
        verb = "list" if failed.method == DIRECTORY_READ else "serve"
        self._text = f"server {origin!r} could not {verb} {uri[:200]}: {failed.message}"

    def __str__(self) -> str:
        return self._text


class _SkillKey(Protocol):
    """What `SkillChanged.key` is: a `skillwire.SkillKey` (not imported: `core.hosting` is above this module)."""

    @property
    def origin(self) -> str: ...
    @property
    def uri(self) -> str: ...


class _ContentChange(Protocol):
    """What `SkillChanged.change` is: a `skillwire.ContentChange` (not imported, as for `_SkillKey`)."""

    @property
    def added(self) -> tuple[str, ...]: ...
    @property
    def removed(self) -> tuple[str, ...]: ...
    @property
    def modified(self) -> tuple[str, ...]: ...


class SkillChanged(HostError, VerificationError):
    """The server now serves different content than the user approved; approval was revoked.

    A verification failure (the content read was not used) whose refresh found a changed entry, so a caller
    catching `VerificationError` catches it too. `uri` is the skill's SKILL.md; `change` says what changed.
    """

    def __init__(self, key: _SkillKey, change: _ContentChange) -> None:
        super().__init__(
            f"{key.origin}:{key.uri} changed since it was approved ({change}); approve it again to load", uri=key.uri
        )
        self.key = key
        self.change = change


class UnknownSkill(SkillwireError):
    """No registered skill answers to a handle or name."""


class AmbiguousSkillName(SkillwireError):
    """A bare name matches skills from several origins or paths; the caller must pick a handle."""

    def __init__(self, name: str, handles: Sequence[str]) -> None:
        super().__init__(f"{name!r} names {len(handles)} skills; use one of: {', '.join(handles)}")
        self.name = name
        self.handles = tuple(handles)


class ToolArgumentError(SkillwireError):
    """The model called a tool with missing or mistyped arguments."""


class ApprovalFileError(SkillwireError):
    """The approvals file exists but cannot be read as approvals; it is left untouched."""


class CacheError(SkillwireError):
    """The skill cache cannot be used as asked."""


class CacheLocationRefused(CacheError):
    """A cache root that a filesystem-skill discovery path could see (or that could hold one)."""

    def __init__(self, root: Path, reason: str) -> None:
        super().__init__(f"refusing {root} as the MCP skill cache: {reason}")
        self.root = root
        self.reason = reason


def _shorten(text: str, limit: int = 200) -> str:
    """Keep error messages one readable line even for hostile, huge inputs."""
    clean = text.encode("unicode_escape").decode("ascii")
    return clean if len(clean) <= limit else clean[:limit] + "..."
