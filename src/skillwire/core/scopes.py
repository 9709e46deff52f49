"""Caller-scoped catalogs: a policy that says which skills each caller may see.

A policy is a TOML document a person writes and reviews. Each `[[grant]]` names
who it is for (any of `subject`, `client_id`, `scope`, `claim`: all that are given
must hold) and the skill paths they may see, as glob patterns over skill paths:
`*` is any run of characters inside one segment, `?` one character, `**` any
number of whole segments, zero included (`acme/billing/**` is `acme/billing`
and every skill below it; `**` is every skill). A caller sees the union of every
grant it matches; an authenticated caller matching none sees `unmatched`, and a
caller with no token at all sees `anonymous` (both empty unless given). This
module is pure: it parses text and answers questions, the file lives in an adapter.

    policy = parse_policy(text, origin="scopes.toml")
    visible = policy.visibility(Caller(subject="ci", scopes=frozenset({"skills:billing"})))
    visible.allows_uri("skill://acme/billing/refunds/SKILL.md")
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar
from urllib.parse import unquote

from skillwire.core.errors import InvalidScopePolicy
from skillwire.core.uri import PREFIX, SKILL_FILE

__all__ = [
    "ANONYMOUS",
    "MAX_POLICY_BYTES",
    "Caller",
    "CallerResolver",
    "Grant",
    "InvalidScopePolicy",
    "ScopePolicy",
    "Visibility",
    "parse_policy",
    "pattern_problem",
]

MAX_POLICY_BYTES = 1024 * 1024
MAX_GRANTS = 10_000
MAX_PATTERN_LENGTH = 1024
_SUFFIX = "/" + SKILL_FILE
_GRANT_KEYS = ("subject", "client_id", "scope", "claim", "skills")
_TOP_KEYS = ("grant", "unmatched", "anonymous")
T = TypeVar("T")
U = TypeVar("U")
_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f\\\[\]{}]")


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking, as their access token says; `authenticated` is False for a request without one."""

    subject: str | None = None
    client_id: str | None = None
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=dict)
    authenticated: bool = True


ANONYMOUS = Caller(authenticated=False)


@dataclass(frozen=True, slots=True)
class Grant:
    """Skills (`patterns`) for callers that meet every condition given (`subject`, `client_id`, `scope`, `claims`)."""

    patterns: tuple[str, ...]
    subject: str | None = None
    client_id: str | None = None
    scope: str | None = None
    claims: tuple[tuple[str, str], ...] = ()

    def matches(self, caller: Caller) -> bool:
        if not caller.authenticated:
            return False
        if self.subject is not None and caller.subject != self.subject:
            return False
        if self.client_id is not None and caller.client_id != self.client_id:
            return False
        if self.scope is not None and self.scope not in caller.scopes:
            return False
        return all(_claim_holds(caller.claims.get(name), value) for name, value in self.claims)


def _claim_holds(actual: object, wanted: str) -> bool:
    """A claim holds if it is the wanted string, or a list that contains it (a `groups` or `roles` claim)."""
    if isinstance(actual, str):
        return actual == wanted
    if isinstance(actual, list | tuple):
        return any(isinstance(item, str) and item == wanted for item in actual)
    return False


class Visibility:
    """Which skills one caller may see: a predicate on skill paths, with a key shared by equal pattern sets."""

    __slots__ = ("_exact", "_globs", "_prefixes", "everything", "key")

    def __init__(self, patterns: Sequence[str]) -> None:
        self.key: tuple[str, ...] = tuple(sorted(set(patterns)))
        self.everything = "**" in self.key
        exact: set[str] = set()
        prefixes: list[str] = []
        globs: list[tuple[str, ...]] = []
        for pattern in self.key:
            if not _has_wildcard(pattern):
                exact.add(pattern)
            elif pattern.endswith("/**") and not _has_wildcard(pattern[:-3]):
                prefixes.append(pattern[:-3])
            else:
                globs.append(_segments(pattern))
        self._exact = frozenset(exact)
        self._prefixes = tuple(prefixes)
        self._globs = tuple(globs)

    def allows(self, skill_path: str) -> bool:
        """True if the skill at `skill_path` (its `/`-joined segments, not percent-encoded) is visible."""
        if self.everything or skill_path in self._exact:
            return True
        for prefix in self._prefixes:
            if skill_path == prefix or skill_path.startswith(prefix + "/"):
                return True
        if not self._globs:
            return False
        segments = skill_path.split("/")
        return any(_match(glob, segments, _match_segment) for glob in self._globs)

    def allows_uri(self, skill_uri: str) -> bool:
        """True if the skill whose SKILL.md is at `skill_uri` (canonical) is visible."""
        if not (skill_uri.startswith(PREFIX) and skill_uri.endswith(_SUFFIX)):
            return False
        path = skill_uri[len(PREFIX) : -len(_SUFFIX)]
        return self.allows(unquote(path) if "%" in path else path)

    def __repr__(self) -> str:
        return f"Visibility({list(self.key)!r})"


class CallerResolver(Protocol):
    """Who is asking in the current request and what they may see; None everywhere means no policy (all visible).

    The server's seam for scopes: the extension and the catalog page await `scope()` per request; the change
    notifier keeps each client's `caller()` and asks `visibility()` when it has something to say.
    """

    def caller(self) -> Caller:
        """The caller of the request running in this context (ANONYMOUS without a token)."""
        ...

    async def scope(self) -> Visibility | None:
        """What the caller of the current request may see, by the current policy (re-read if it changed)."""
        ...

    def visibility(self, caller: Caller) -> Visibility | None:
        """What `caller` may see by the policy in force now."""
        ...

    def on_change(self, listener: Callable[[ScopePolicy], None]) -> None:
        """Call `listener` after the policy changed (what callers may see may have changed with it)."""
        ...


def _has_wildcard(pattern: str) -> bool:
    return "*" in pattern or "?" in pattern


def _segments(pattern: str) -> tuple[str, ...]:
    """The pattern's segments, with runs of `**` collapsed (`**/**` means what `**` means)."""
    out: list[str] = []
    for segment in pattern.split("/"):
        if not (segment == "**" and out and out[-1] == "**"):
            out.append(segment)
    return tuple(out)


def _match(pattern: Sequence[T], items: Sequence[U], same: Callable[[T, U], bool], star: object = "**") -> bool:
    """Glob matching without backtracking blow-up: `star` in `pattern` matches any run of `items`, others one each.

    The classic two-pointer algorithm: on a mismatch, only the last star is retried one item further,
    so a pattern of p elements against n items costs at most p * n comparisons (a regex could take
    exponential time on a policy such as `**/**/.../x` or `*a*a*a*a*b`).
    """
    p = i = 0
    last_star = -1
    resume = 0
    while i < len(items):
        if p < len(pattern) and pattern[p] != star and same(pattern[p], items[i]):
            p += 1
            i += 1
        elif p < len(pattern) and pattern[p] == star:
            last_star, resume = p, i
            p += 1
        elif last_star >= 0:
            p = last_star + 1
            resume += 1
            i = resume
        else:
            return False
    while p < len(pattern) and pattern[p] == star:
        p += 1
    return p == len(pattern)


def _match_segment(pattern: str, segment: str) -> bool:
    """One segment against one pattern segment: `*` any run of characters, `?` one character."""
    if not _has_wildcard(pattern):
        return pattern == segment
    return _match(pattern, segment, _same_char, "*")


def _same_char(wanted: str, actual: str) -> bool:
    return wanted in ("?", actual)


class ScopePolicy:
    """A parsed policy: grants plus what unmatched and anonymous callers see. Immutable once built."""

    __slots__ = ("_cache", "anonymous", "grants", "unmatched")

    def __init__(self, grants: Sequence[Grant], unmatched: Sequence[str] = (), anonymous: Sequence[str] = ()) -> None:
        self.grants = tuple(grants)
        self.unmatched = tuple(unmatched)
        self.anonymous = tuple(anonymous)
        self._cache: dict[tuple[str, ...], Visibility] = {}  # one compiled matcher per distinct pattern set

    def patterns_for(self, caller: Caller) -> tuple[str, ...]:
        """The patterns `caller` may see: the union of its grants, else `unmatched` (or `anonymous`)."""
        if not caller.authenticated:
            return self.anonymous
        found: list[str] = []
        for grant in self.grants:
            if grant.matches(caller):
                found.extend(grant.patterns)
        return tuple(found) if found else self.unmatched

    def visibility(self, caller: Caller) -> Visibility:
        """What `caller` may see (equal pattern sets share one compiled `Visibility`)."""
        key = tuple(sorted(set(self.patterns_for(caller))))
        found = self._cache.get(key)
        if found is None:
            if len(self._cache) >= 256:
                self._cache.clear()
            found = self._cache[key] = Visibility(key)
        return found


def parse_policy(text: str, *, origin: str) -> ScopePolicy:
    """The policy in TOML `text`, or InvalidScopePolicy saying where (`origin`: the file name) and what to fix."""
    if len(text) > MAX_POLICY_BYTES:
        raise InvalidScopePolicy(origin, f"larger than {MAX_POLICY_BYTES} bytes")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InvalidScopePolicy(origin, f"not valid TOML: {err}") from None
    _only_keys(data, _TOP_KEYS, origin, "the top level")
    raw_grants = data.get("grant", [])
    if not isinstance(raw_grants, list) or not all(isinstance(g, dict) for g in raw_grants):
        raise InvalidScopePolicy(origin, "`grant` must be tables written as [[grant]]")
    if len(raw_grants) > MAX_GRANTS:
        raise InvalidScopePolicy(origin, f"more than {MAX_GRANTS} grants")
    grants = [_grant(g, origin, f"grant {i} (the {_ordinal(i)} [[grant]])") for i, g in enumerate(raw_grants, 1)]
    unmatched = _patterns(data.get("unmatched", []), origin, "`unmatched`", allow_empty=True)
    anonymous = _patterns(data.get("anonymous", []), origin, "`anonymous`", allow_empty=True)
    return ScopePolicy(grants, unmatched, anonymous)


def _grant(raw: dict[str, Any], origin: str, where: str) -> Grant:
    _only_keys(raw, _GRANT_KEYS, origin, where)
    if "skills" not in raw:
        raise InvalidScopePolicy(origin, f"{where} has no `skills`: list the skill paths it grants")
    patterns = _patterns(raw["skills"], origin, f"{where} `skills`", allow_empty=False)
    subject = _identity(raw, "subject", origin, where)
    client_id = _identity(raw, "client_id", origin, where)
    scope = _identity(raw, "scope", origin, where)
    if scope is not None and any(c.isspace() for c in scope):
        raise InvalidScopePolicy(origin, f"{where} `scope` holds a space: write one grant per scope")
    claims: list[tuple[str, str]] = []
    raw_claims = raw.get("claim", {})
    if not isinstance(raw_claims, dict):
        raise InvalidScopePolicy(origin, f'{where} `claim` must be a table, e.g. claim = {{ groups = "finance" }}')
    for name, value in raw_claims.items():
        if not isinstance(value, str) or not value:
            raise InvalidScopePolicy(
                origin, f"{where} claim {name!r} must be a non-empty string (write one grant per value)"
            )
        claims.append((name, value))
    if subject is None and client_id is None and scope is None and not claims:
        raise InvalidScopePolicy(
            origin,
            f"{where} names no `subject`, `client_id`, `scope` or `claim`: it would match every caller "
            "(put those skills in `unmatched` and in each grant instead)",
        )
    return Grant(tuple(patterns), subject, client_id, scope, tuple(claims))


def _identity(raw: Mapping[str, Any], key: str, origin: str, where: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidScopePolicy(origin, f"{where} `{key}` must be a non-empty string (write one grant per value)")
    return value


def _patterns(raw: object, origin: str, where: str, *, allow_empty: bool) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
        raise InvalidScopePolicy(origin, f'{where} must be a list of skill path patterns, e.g. ["acme/billing/**"]')
    if not raw and not allow_empty:
        raise InvalidScopePolicy(origin, f"{where} is empty: list at least one skill path pattern")
    for pattern in raw:
        problem = pattern_problem(pattern)
        if problem is not None:
            raise InvalidScopePolicy(origin, f"{where}: {pattern.encode('unicode_escape').decode()!r} {problem}")
    return list(raw)


def pattern_problem(pattern: str) -> str | None:
    """Why `pattern` is not a skill path pattern, or None if it is one."""
    if not pattern:
        return "is empty"
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f"is longer than {MAX_PATTERN_LENGTH} characters"
    if _FORBIDDEN.search(pattern):
        return "holds a control character, a backslash, or [ ] { } (only *, ? and ** are wildcards)"
    if pattern.startswith(PREFIX):
        return "is a URI: write the skill path (acme/billing/**), not skill://..."
    for segment in pattern.split("/"):
        if segment == "":
            return "has an empty segment (a leading, trailing or doubled /)"
        if segment in (".", ".."):
            return "has a . or .. segment"
        if "**" in segment and segment != "**":
            return "uses ** inside a segment (** stands alone between slashes: acme/**/refunds)"
    return None


def _only_keys(table: Mapping[str, Any], allowed: Sequence[str], origin: str, where: str) -> None:
    for key in table:
        if key not in allowed:
            shown = key.encode("unicode_escape").decode()
            raise InvalidScopePolicy(origin, f"{where} has an unknown key {shown!r} (known: {', '.join(allowed)})")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
