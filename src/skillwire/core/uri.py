"""Skill URIs: `skill://<skill-path>/<file-path>`, built from folders and parsed from requests.

Resource Mapping: "<skill-path> is a /-separated path of one or more segments
locating the skill directory ... <file-path> is the file's path relative to the
skill directory root, using / as the separator." Directory URIs carry no
trailing slash. Request URIs are parsed strictly and canonicalised, so a lookup
is an exact match against the published catalog: a request can never name a
path that the catalog did not publish. A host compares URIs of any scheme by
`same_uri` (RFC 3986 6.2.2: percent-encoding case and needless encoding do not
make another resource), the one notion of URI equality on the host side.

    skill_uri(("acme", "billing", "refunds"))              # 'skill://acme/billing/refunds/SKILL.md'
    file_uri(("pdf-processing",), "templates/a b.md")      # 'skill://pdf-processing/templates/a%20b.md'
    canonical_uri("skill://pdf-processing/templates/%61.md")  # 'skill://pdf-processing/templates/a.md'
    same_uri("skill://caf%c3%a9/SKILL.md", "skill://café/SKILL.md")  # True
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from urllib.parse import quote, unquote_to_bytes

from skillwire.core.errors import InvalidSkillUri

SCHEME = "skill"
PREFIX = "skill://"
SKILL_FILE = "SKILL.md"
MAX_URI_LENGTH = 4096

# RFC 3986 pchar minus "/": unreserved / sub-delims / ":" / "@" stay literal.
_SAFE = "-._~!$&'()*+,;=:@"


_PLAIN = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@]*")

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
UNADDRESSABLE = re.compile("[\x00-\x1f\x7f-\x9f\\\\]")
"""A character no segment of a canonical URI holds once decoded: a control character (C0, DEL, C1) or a backslash.
A name holding one can be percent-encoded into a URI, but `canonical_uri` refuses every read of that URI."""


def segment_problem(segment: str) -> str | None:
    """Why `canonical_uri` refuses any URI with the (decoded) path segment `segment`, or None if it accepts one."""
    if _CONTROL.search(segment):
        return "control characters"
    return "a backslash" if "\\" in segment else None


def encode_segment(segment: str) -> str:
    """Percent-encode one path segment (RFC 3986 pchar)."""
    if _PLAIN.fullmatch(segment):
        return segment  # the common case, and the hot path when indexing
    return quote(segment, safe=_SAFE)


PLAIN_PATH = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/]*")


def join_segments(segments: Sequence[str]) -> str:
    """`/`-join encoded segments."""
    joined = "/".join(segments)
    if PLAIN_PATH.fullmatch(joined) and joined.count("/") == len(segments) - 1:
        return joined  # no segment needs encoding, and none held a "/" of its own
    return "/".join(encode_segment(s) for s in segments)


def directory_uri(skill_path: Sequence[str], rel_dir: str = "") -> str:
    """URI of a skill's root (rel_dir "") or of a directory inside it, with no trailing slash."""
    parts = list(skill_path) + ([p for p in rel_dir.split("/") if p] if rel_dir else [])
    return PREFIX + join_segments(parts)


def file_uri(skill_path: Sequence[str], rel_path: str) -> str:
    """URI of the file at `rel_path` (`/`-separated) inside the skill at `skill_path`."""
    return PREFIX + join_segments([*skill_path, *rel_path.split("/")])


def skill_uri(skill_path: Sequence[str]) -> str:
    """URI of a skill's SKILL.md, the skill's identity within a server."""
    return file_uri(skill_path, SKILL_FILE)


_SEGMENTS = r"[A-Za-z0-9\-._~!$&'()*+,;=:@]+(?:/[A-Za-z0-9\-._~!$&'()*+,;=:@]+)*"
_PLAIN_FOLDERS = re.compile(rf"(?:{_SEGMENTS})?(?:\n(?:{_SEGMENTS})?)*")  # "\n"-joined folders of plain segments


def skill_uris_of(base: Sequence[str], folders: Sequence[str]) -> list[str]:
    """`skill_uri` of the skill at `base` + each `/`-separated folder (empty segments dropped), for many at once.

    A warm restart names 100,000 skills so: when every folder is plain segments (the usual case, checked in one
    pass over all of them), each URI holds the folder as it is; otherwise each goes through `skill_uri`."""
    joined = "\n".join(folders)
    if (base or "" not in folders) and joined.count("\n") == len(folders) - 1 and _PLAIN_FOLDERS.fullmatch(joined):
        head = PREFIX + join_segments(base) if base else PREFIX[:-1]
        return [f"{head}/{folder}/{SKILL_FILE}" if folder else f"{head}/{SKILL_FILE}" for folder in folders]
    return [skill_uri((*base, *filter(None, folder.split("/")))) for folder in folders]


def enclosing_skill_uris(uri: str) -> Iterator[str]:
    """The SKILL.md URIs of every folder that could be a skill holding `uri` (a file or folder URI), innermost
    first: `skill://a/b/c.md` gives `skill://a/b/c.md/SKILL.md`, `skill://a/b/SKILL.md`, `skill://a/SKILL.md`."""
    scheme, sep, path = uri.partition("://")
    while sep and path:
        yield f"{scheme}{sep}{path}/{SKILL_FILE}"
        path = path.rpartition("/")[0]


def skill_root_of(uri: str) -> str:
    """The root directory URI of the skill whose SKILL.md is `uri`."""
    if not uri.endswith("/" + SKILL_FILE):
        raise InvalidSkillUri(uri, f"a skill URI ends in /{SKILL_FILE}")
    return uri[: -len(SKILL_FILE) - 1]


def canonical_uri(uri: object) -> str:
    """Parse a request's `skill://` URI and return its canonical form, or raise InvalidSkillUri.

    Rejects what could smuggle a path: `.`/`..` segments (also percent-encoded),
    encoded `/` or `\\`, backslashes, NUL and control characters (C0, DEL, C1), lone surrogates, empty
    segments, queries and fragments, other schemes, and URIs (or canonical forms) over MAX_URI_LENGTH.
    """
    if not isinstance(uri, str):
        raise InvalidSkillUri(repr(uri), "a URI must be a string")
    if len(uri) > MAX_URI_LENGTH:
        raise InvalidSkillUri(uri, f"longer than {MAX_URI_LENGTH} characters")
    if not uri.startswith(PREFIX):
        scheme = uri.split(":", 1)[0] if ":" in uri else ""
        reason = f"scheme {scheme!r} is not served here" if scheme else "it has no skill:// scheme"
        raise InvalidSkillUri(uri, reason)
    rest = uri[len(PREFIX) :]
    if PLAIN_PATH.fullmatch(rest) and all(seg not in ("", ".", "..") for seg in rest.split("/")):
        return uri  # nothing encoded, no empty or dot segment: already canonical (the hot path for reads)
    if "?" in rest or "#" in rest:
        raise InvalidSkillUri(uri, "queries and fragments are not part of skill URIs")
    if "\\" in rest:
        raise InvalidSkillUri(uri, "backslashes are not path separators")
    if _CONTROL.search(rest):
        raise InvalidSkillUri(uri, "control characters are not allowed")
    if not rest or rest.startswith("/") or rest.endswith("/"):
        raise InvalidSkillUri(uri, "empty path segment (leading, trailing or doubled '/')")
    segments: list[str] = []
    for raw in rest.split("/"):
        if not raw:
            raise InvalidSkillUri(uri, "empty path segment (leading, trailing or doubled '/')")
        try:
            decoded = unquote_to_bytes(raw).decode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: Python strings can hold one, UTF-8 and URIs cannot
            raise InvalidSkillUri(uri, "a lone surrogate is not a character") from None
        except UnicodeDecodeError:
            raise InvalidSkillUri(uri, "percent-encoding that is not UTF-8") from None
        if decoded in (".", ".."):
            raise InvalidSkillUri(uri, "'.' and '..' segments are not allowed")
        if "/" in decoded or "\\" in decoded:
            raise InvalidSkillUri(uri, "encoded path separators are not allowed")
        if _CONTROL.search(decoded):  # C0, DEL and C1 (U+009B is a CSI on some terminals)
            raise InvalidSkillUri(uri, "control characters are not allowed")
        segments.append(decoded)
    canonical = PREFIX + join_segments(segments)
    # Encoding can lengthen a URI (one raw "é" becomes "%C3%A9"): a canonical form over the limit
    # would be refused when parsed again, so it is refused now and the canonical form stays a fixed point.
    if len(canonical) > MAX_URI_LENGTH:
        raise InvalidSkillUri(uri, f"its canonical form is longer than {MAX_URI_LENGTH} characters")
    return canonical


def normal_uri(uri: str) -> str:
    """The spelling every equivalent spelling of `uri` shares: each path segment decoded and re-encoded as
    `encode_segment` writes it (so `%c3%a9`, `%C3%A9` and a raw `é` agree; `%2F` stays encoded).

    For a valid skill:// URI this is `canonical_uri`'s result, so host and server agree on what one file is. The
    scheme is compared as written, as `canonical_uri` does (`SKILL://` is refused there); a query or fragment is
    kept as written. Segments whose bytes are not UTF-8 are re-encoded byte for byte, so two different byte strings
    never meet.
    """
    _, sep, rest = uri.partition("://")
    if not sep or PLAIN_PATH.fullmatch(rest):
        return uri  # nothing encoded, nothing to encode, no query: already normal (the hot path of a listing)
    return _normal_uri_general(uri)


def _normal_uri_general(uri: str) -> str:
    """`normal_uri` without its shortcut for plain URIs (tests/property proves the two agree)."""
    scheme, sep, rest = uri.partition("://")
    if not sep:
        return uri
    path, mark, tail = _split_query(rest)
    segments = []
    for raw in path.split("/"):
        data = raw.encode("utf-8", "surrogatepass")  # a lone surrogate is re-encoded byte for byte, not a crash
        if "%" in raw:
            data = unquote_to_bytes(data)
        try:
            segments.append(encode_segment(data.decode("utf-8")))
        except UnicodeDecodeError:
            segments.append(quote(data, safe=_SAFE))
    return f"{scheme}://{'/'.join(segments)}{mark}{tail}"


def same_uri(a: str, b: str) -> bool:
    """Whether two URIs name one resource on the host side (see `normal_uri`)."""
    return a == b or normal_uri(a) == normal_uri(b)


def _split_query(rest: str) -> tuple[str, str, str]:
    """`rest` split at its first `?` or `#`: (path, the mark, what follows it)."""
    cut = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=-1)
    return (rest, "", "") if cut < 0 else (rest[:cut], rest[cut], rest[cut + 1 :])
