"""Static bearer tokens from a file, for small teams and CI (`skillwire serve --http ... --token-file FILE`).

One token per line; blank lines and lines starting with `#` are ignored. A line may attach a subject
and scopes to its token (what a caller-scoped catalog policy matches on), as `key=value` words after it:

    # FILE: chmod 600
    3f9c0d1e6b2a4c8f9e7d5a3b1c0f2e4d                         # subject "static", no scopes
    8b7e6d5c4b3a29180f1e2d3c4b5a6978 subject=ci scopes=skills:read,acme

A token is 16 to 4096 characters of the RFC 6750 `b64token` alphabet. The file is re-read when it
changes (size, mtime or inode); if it becomes unreadable or invalid, no token from it is accepted
until it is fixed (fail closed). A presented token is compared with every token, in constant time (as
SHA-256 digests, so not even a token's length shows in the timing).
Tokens never appear in a log line or an error, nor does any other word of the file: a line is named by its
number and a word by its place (a second token pasted on a line is as secret as the first).

An `AccessToken` from the file carries a `jti` naming its line (a keyed hash of the token, with a key made
per process, so it tells nothing of the token): `granted` says whether that line is still in the file with
the same subject and scopes, so whatever outlives a request (a listen stream) ends when its line goes.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp.server.auth.provider import AccessToken

from skillwire.core.errors import TokenFileError

logger = logging.getLogger(__name__)

MAX_TOKEN_FILE_BYTES = 1024 * 1024
RECENT_WRITE_S = 2.0
DEFAULT_SUBJECT = "static"
TOKEN_FILE_ISSUER = "urn:skillwire:token-file"
# RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]{16,4096}=*")
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")  # RFC 6749 §3.3 scope-token
_SUBJECT = re.compile(r"[A-Za-z0-9\-._~:@]{1,200}")
_SUBJECT_RULE = "subject= takes 1 to 200 of A-Z a-z 0-9 - . _ ~ : @"
_SCOPES_RULE = "scopes= takes scope names separated by commas (printable ASCII but space, quote and backslash)"
_WORD_RULE = (
    "is not subject=NAME or scopes=a,b (write `TOKEN subject=NAME scopes=a,b`, one token a line; "
    "the word is not shown: it may be a secret)"
)


@dataclass(frozen=True, slots=True, repr=False)
class StaticToken:
    """One line of the token file: the token's digest, and who it stands for."""

    digest: bytes  # SHA-256 of the token: compared at a fixed length, so timing tells nothing of its length
    subject: str
    scopes: tuple[str, ...]

    def __repr__(self) -> str:  # not even the digest
        return f"StaticToken(subject={self.subject!r}, scopes={self.scopes!r})"


def parse_token_file(text: str, *, path: str) -> tuple[StaticToken, ...]:
    """The tokens `text` holds; TokenFileError names the first bad line."""
    tokens: list[StaticToken] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        token, *words = line.split()
        if not _B64TOKEN.fullmatch(token):
            raise TokenFileError(
                "not a token: 16 to 4096 of A-Z a-z 0-9 - . _ ~ + / (then '=' padding)", path=path, line=number
            )
        subject = DEFAULT_SUBJECT
        scopes: tuple[str, ...] = ()
        for position, word in enumerate(words, start=2):
            if word.startswith("#"):
                break  # a trailing comment
            # A word is named by its place, never quoted: a second token pasted on the line is a secret too.
            key, sep, value = word.partition("=")
            if key == "subject" and sep:
                if not _SUBJECT.fullmatch(value):
                    raise TokenFileError(f"word {position}: {_SUBJECT_RULE}", path=path, line=number)
                subject = value
            elif key == "scopes" and sep:
                if not all(_SCOPE.fullmatch(s) for s in value.split(",")):
                    raise TokenFileError(f"word {position}: {_SCOPES_RULE}", path=path, line=number)
                scopes = tuple(value.split(","))
            else:
                raise TokenFileError(f"word {position} {_WORD_RULE}", path=path, line=number)
        tokens.append(StaticToken(hashlib.sha256(token.encode("ascii")).digest(), subject, scopes))
    if not tokens:
        raise TokenFileError("holds no token", path=path)
    return tuple(tokens)


def read_token_file(path: str) -> tuple[StaticToken, ...]:
    """Read and parse the file: a regular file (symlinks to one are fine) of at most 1 MiB."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise TokenFileError(f"cannot open: {error.strerror or error}", path=path) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise TokenFileError("not a regular file", path=path)
        data = handle.read(MAX_TOKEN_FILE_BYTES + 1)
    if len(data) > MAX_TOKEN_FILE_BYTES:
        raise TokenFileError(f"larger than {MAX_TOKEN_FILE_BYTES:,} bytes", path=path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TokenFileError("not UTF-8 text", path=path) from None
    return parse_token_file(text, path=path)


def _signature(path: str) -> tuple[int, int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class TokenFile:
    """The tokens of one file, re-read when the file changes; a `TokenVerifier` for the SDK's bearer middleware."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        self._tokens = read_token_file(self.path)  # a bad file at start is an error, not a warning
        self._seen = _signature(self.path)
        self._key = os.urandom(32)  # for line handles: this process's own, so a handle reveals nothing
        self._handles: tuple[tuple[StaticToken, ...], dict[str, StaticToken]] = ((), {})
        self._check_permissions()

    def _check_permissions(self) -> None:
        try:
            mode = Path(self.path).stat().st_mode
        except OSError:
            return
        if mode & stat.S_IROTH:
            logger.warning("token file %s is readable by every user on this machine (chmod 600 it)", self.path)

    def current(self) -> tuple[StaticToken, ...]:
        """The tokens now in force: re-read if the file changed; none while it is broken."""
        seen = _signature(self.path)
        # A rewrite of the same size within one timestamp tick (coarse on some file systems) leaves the
        # signature unchanged: while the file's mtime is that recent, it is read again on every use.
        recent = seen is not None and time.time() - seen[2] / 1e9 < RECENT_WRITE_S
        if seen != self._seen or recent:
            changed = seen != self._seen
            self._seen = seen
            try:
                self._tokens = read_token_file(self.path)
            except TokenFileError as error:
                if changed:
                    logger.warning("%s; no token from it is accepted until it is fixed", error)
                self._tokens = ()
            else:
                if changed:
                    logger.info("re-read token file %s (%d tokens)", self.path, len(self._tokens))
                    self._check_permissions()
        return self._tokens

    def match(self, presented: str) -> StaticToken | None:
        """The token equal to `presented`, compared with every token in constant time (no early exit)."""
        candidate = hashlib.sha256(presented.encode("utf-8", "replace")).digest()
        found: StaticToken | None = None
        for token in self.current():
            if hmac.compare_digest(token.digest, candidate):
                found = token
        return found

    def handle(self, token: StaticToken) -> str:
        """The name of `token`'s line in an `AccessToken` (its `jti`): a keyed hash, never the token or its digest."""
        return hmac.new(self._key, token.digest, hashlib.sha256).hexdigest()[:32]

    def granted(self, tokens: Sequence[AccessToken]) -> list[bool]:
        """For each of `tokens` (issued by `verify_token`): is its line still in the file, with the same subject and
        scopes? The file is re-read first if it changed; while it is broken, none is."""
        current = self.current()
        if self._handles[0] is not current:
            self._handles = (current, {self.handle(t): t for t in current})
        by_handle = self._handles[1]
        answers = []
        for access in tokens:
            line = by_handle.get(str((access.claims or {}).get("jti")))
            answers.append(line is not None and line.subject == access.subject and list(line.scopes) == access.scopes)
        return answers

    async def verify_token(self, token: str) -> AccessToken | None:
        """`TokenVerifier`: an `AccessToken` for a listed token (client_id and subject are the line's subject)."""
        found = self.match(token)
        if found is None:
            return None
        return AccessToken(
            token="static",  # the secret stays out of request state and logs
            client_id=found.subject,
            subject=found.subject,
            scopes=list(found.scopes),
            # An issuer of its own: principals from the file never equal a JWT issuer's (session ownership and
            # request-state binding compare client, issuer and subject). `jti` names the line (`granted`).
            claims={"iss": TOKEN_FILE_ISSUER, "sub": found.subject, "iat": int(time.time()), "jti": self.handle(found)},
        )
