"""Exceptions raised by skillwire.

Every exception derives from `SkillwireError`. Two branches keep apart "a skill
on our side breaks a rule" from "a peer sent us something wrong":

    SkillwireError
    ├── SkillError                  a skill (on disk or in an entry) breaks a rule
    │   ├── FrontmatterError        SKILL.md frontmatter missing, malformed, or not JSON-representable
    │   ├── NameRuleError           a name or path segment breaks the Agent Skills / URI rules
    │   └── LimitExceeded           a skill is over 512 files or 16 MiB
    ├── InvalidSkillUri             a URI is not a well-formed skill:// file or directory URI
    ├── AuthenticationRequired      an HTTP server refused us (401/403) and said where a token comes from
    ├── InvalidScopePolicy          a scopes policy (serve --scopes) cannot be read or breaks its format
    ├── GenerationError             a generated skill's file could not be produced (failed, too slow, too large)
    ├── SourceError                 a source cannot serve at all (no such repository, a ref naming no commit)
    ├── WiringError                 the Skills extension is mounted on an MCP server without its read path
    └── VerificationError           content does not match the entry it was checked against
        ├── DigestMismatch
        ├── SizeMismatch
        ├── FrontmatterMismatch
        ├── UnlistedResource
        ├── ResponseTooLarge        an answer passed its byte bound on the wire; reading it stopped there
        └── SkillChanged            (`skillwire.core.hosting.results`) a failure whose refresh found the skill changed

The host's refusals (`skillwire.core.hosting.results`) derive from `HostError`: `SkillDeclined`, `ApprovalDenied`,
`NotLoaded`, `ReadFailed` and `SkillChanged` (a `VerificationError` too).
"""

from __future__ import annotations


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


class VerificationError(SkillwireError):
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


def _shorten(text: str, limit: int = 200) -> str:
    """Keep error messages one readable line even for hostile, huge inputs."""
    clean = text.encode("unicode_escape").decode("ascii")
    return clean if len(clean) <= limit else clean[:limit] + "..."
