"""Skill entries as a host receives them: parsed and checked before anything trusts them.

Skill Entries / Resources: an entry has a `uri` ending in `/SKILL.md` whose last
skill-path segment equals `frontmatter.name`; `resources` is an array of
{uri, digest, size} (complete: SKILL.md included, each uri once, all within the
skill's directory) or the string "dynamic". "An entry with no resources at all,
or with any value other than an array or 'dynamic', is invalid, and hosts MUST
NOT load it." Skill Format: "A skill is a directory" of files, so no path can be
both a file and a directory: an entry listing `sub` and `sub/file.md` describes
no directory at all and is invalid too.

    entry = parse_entry(raw)            # raises InvalidEntry naming the problem
    entry.content_set                   # frozenset of (uri, digest): what approvals bind to
"""

from __future__ import annotations

import re
import sys
from array import array
from collections.abc import Mapping
from dataclasses import FrozenInstanceError, dataclass
from typing import Any, Literal
from urllib.parse import unquote

from skillwire.core.digest import is_digest
from skillwire.core.errors import InvalidEntry
from skillwire.core.manifest import MAX_RESOURCES, MAX_TOTAL_BYTES
from skillwire.core.names import name_problem
from skillwire.core.uri import SKILL_FILE, normal_uri, same_uri

Dynamic = Literal["dynamic"]

_SHARED_TEXT = 64  # frontmatter keys, and values up to this long, are interned: one `MIT` for every skill


@dataclass(frozen=True, slots=True)
class EntryResource:
    """One {uri, digest, size} of an entry's manifest."""

    uri: str
    digest: str
    size: int


class SkillEntry:
    """A validated skill entry. `resources` is a tuple, or "dynamic" for generated skills.

    Immutable. A host holds one per listed skill (100,000 and more), so the manifest is kept packed: each file as
    its path inside the skill (interned: `SKILL.md` is one string for every skill), its digest as 32 raw bytes, its
    size in an array. `resources` rebuilds the records, exactly as listed, on each access. A uri not under the
    skill's root as written, a digest not in canonical form or a size past 64 bits is kept as given.
    """

    __slots__ = ("_digests", "_frontmatter", "_paths", "_sizes", "_uri", "_whole")

    _uri: str
    _frontmatter: Mapping[str, Any]
    _paths: tuple[str, ...] | None  # None: dynamic
    _whole: int  # bit i set: _paths[i] is a whole uri, not a path under the root
    _digests: bytes | tuple[str, ...]
    _sizes: array[int] | tuple[int, ...]

    def __init__(
        self, uri: str, frontmatter: Mapping[str, Any], resources: tuple[EntryResource, ...] | Dynamic
    ) -> None:
        init = object.__setattr__
        init(self, "_uri", uri)
        init(self, "_frontmatter", frontmatter)
        if isinstance(resources, str):
            init(self, "_paths", None)
            init(self, "_whole", 0)
            init(self, "_digests", ())
            init(self, "_sizes", ())
            return
        prefix = self._prefix
        paths: list[str] = []
        whole = 0
        for i, r in enumerate(resources):
            if r.uri.startswith(prefix) and len(r.uri) > len(prefix):
                paths.append(sys.intern(r.uri[len(prefix) :]))
            else:
                paths.append(r.uri)
                whole |= 1 << i
        init(self, "_paths", tuple(paths))
        init(self, "_whole", whole)
        digests = [r.digest for r in resources]
        canonical = all(is_digest(d) for d in digests)
        init(self, "_digests", b"".join(bytes.fromhex(d[7:]) for d in digests) if canonical else tuple(digests))
        sizes = [r.size for r in resources]
        fits = all(0 <= n < 2**63 for n in sizes)
        init(self, "_sizes", array("q", sizes) if fits else tuple(sizes))

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SkillEntry):
            return NotImplemented
        return (self.uri, self.frontmatter, self.resources) == (other.uri, other.frontmatter, other.resources)

    __hash__ = None  # type: ignore[assignment]  # the frontmatter is a dict

    def __repr__(self) -> str:
        return f"SkillEntry(uri={self.uri!r}, frontmatter={self.frontmatter!r}, resources={self.resources!r})"

    @property
    def uri(self) -> str:
        return self._uri

    @property
    def frontmatter(self) -> Mapping[str, Any]:
        return self._frontmatter

    @property
    def _prefix(self) -> str:
        """The skill's root as written, with its trailing `/`: what packed paths are relative to."""
        return self.uri[: -len(SKILL_FILE)]

    @property
    def resources(self) -> tuple[EntryResource, ...] | Dynamic:
        if self._paths is None:
            return "dynamic"
        prefix, whole, digests, sizes = self._prefix, self._whole, self._digests, self._sizes
        return tuple(
            EntryResource(
                path if whole >> i & 1 else prefix + path,
                digests[i] if isinstance(digests, tuple) else "sha256:" + digests[32 * i : 32 * i + 32].hex(),
                sizes[i],
            )
            for i, path in enumerate(self._paths)
        )

    @property
    def root_uri(self) -> str:
        return self.uri[: -len(SKILL_FILE) - 1]

    @property
    def name(self) -> str:
        name: str = self.frontmatter["name"]
        return name

    @property
    def description(self) -> str:
        description: str = self.frontmatter["description"]
        return description

    @property
    def is_dynamic(self) -> bool:
        return self._paths is None

    @property
    def content_set(self) -> frozenset[tuple[str, str]]:
        """Every (uri, digest) pair: the content a user's approval is bound to (empty for dynamic)."""
        resources = self.resources
        if isinstance(resources, str):
            return frozenset()
        return frozenset((r.uri, r.digest) for r in resources)

    def resource(self, uri: str) -> EntryResource | None:
        """The manifest record for `uri` in any equivalent spelling (`same_uri`), or None if the entry does not
        list it. The record keeps the URI exactly as listed (`parse_entry` refuses two spellings of one file)."""
        resources = self.resources
        if isinstance(resources, str):
            return None
        for r in resources:
            if r.uri == uri:
                return r
        return next((r for r in resources if same_uri(r.uri, uri)), None)

    @property
    def skill_md(self) -> EntryResource | None:
        return self.resource(self.uri)

    @property
    def path_segments(self) -> tuple[str, ...]:
        """The skill path as segments, scheme and authority included as the first ("skill://acme/...")."""
        scheme, _, rest = self.root_uri.partition("://")
        return (scheme, *rest.split("/"))

    def over_limits(self) -> str | None:
        """Why this entry exceeds the per-skill limits (checkable before any fetch), or None."""
        if self._paths is None:
            return None
        count = len(self._paths)
        total = sum(self._sizes)
        if count > MAX_RESOURCES:
            return f"it lists {count} files; hosts accept at most {MAX_RESOURCES}"
        if total > MAX_TOTAL_BYTES:
            return f"its files total {total:,} bytes; hosts accept at most {MAX_TOTAL_BYTES:,} (16 MiB)"
        return None

    def to_wire(self) -> dict[str, Any]:
        resources = self.resources
        wire: Any = (
            resources
            if isinstance(resources, str)
            else [{"uri": r.uri, "digest": r.digest, "size": r.size} for r in resources]
        )
        return {"uri": self.uri, "frontmatter": dict(self.frontmatter), "resources": wire}


def _dot_or_empty(segment: str) -> bool:
    """An empty, '.' or '..' segment, also percent-encoded: RFC 3986 reads `%2E` as '.', so `%2e%2e` climbs too."""
    return (unquote(segment) if "%" in segment else segment) in ("", ".", "..")


# What `str.isspace` calls whitespace (`\s` on a str pattern is the same set), C0 and C1 controls and DEL.
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")


def parse_entry(raw: object) -> SkillEntry:
    """Check a wire entry against every entry rule and return it, or raise InvalidEntry saying which failed."""
    if not isinstance(raw, Mapping):
        raise InvalidEntry(None, "an entry must be a JSON object")
    uri = raw.get("uri")
    if not isinstance(uri, str) or not uri:
        raise InvalidEntry(None, "uri is missing or not a string")
    shown = uri[:300]
    if _SPACE_OR_CONTROL.search(uri):
        raise InvalidEntry(shown.encode("unicode_escape").decode("ascii"), "uri holds whitespace or control characters")
    scheme, sep, rest = uri.partition("://")
    if not sep or not scheme or not rest:
        raise InvalidEntry(shown, "uri has no scheme://")
    if not uri.endswith("/" + SKILL_FILE):
        raise InvalidEntry(shown, f"uri must end in /{SKILL_FILE}")
    segments = rest.split("/")[:-1]
    if not segments or any(_dot_or_empty(s) for s in segments):
        raise InvalidEntry(shown, "uri has an empty, '.' or '..' path segment")
    fm = raw.get("frontmatter")
    if not isinstance(fm, Mapping):
        raise InvalidEntry(shown, "frontmatter is missing or not an object")
    problem = name_problem(fm.get("name"))
    if problem is not None:
        raise InvalidEntry(shown, f"frontmatter.{problem}")
    if not isinstance(fm.get("description"), str):
        raise InvalidEntry(shown, "frontmatter.description is missing or not a string")
    if segments[-1] != fm["name"]:
        raise InvalidEntry(shown, f"last path segment {segments[-1]!r} differs from frontmatter.name {fm['name']!r}")
    if "resources" not in raw:
        raise InvalidEntry(shown, "resources is missing (it is required: an array or 'dynamic')")
    resources = raw["resources"]
    if resources == "dynamic":
        return SkillEntry(uri, _interned(fm), "dynamic")
    if not isinstance(resources, list):
        raise InvalidEntry(shown, "resources must be an array or the string 'dynamic'")
    # Compared in normal form (`same_uri`): another spelling of the root or of a listed file is that root or file.
    root = normal_uri(uri[: -len(SKILL_FILE)])
    parsed: list[EntryResource] = []
    seen: set[str] = set()
    files: dict[tuple[str, ...], str] = {}  # decoded path within the skill -> the uri as listed
    for i, item in enumerate(resources):
        if not isinstance(item, dict | Mapping):  # dict first: an exact type needs no ABC walk
            raise InvalidEntry(shown, f"resources[{i}] is not an object")
        r_uri, digest, size = item.get("uri"), item.get("digest"), item.get("size")
        normal = normal_uri(r_uri) if isinstance(r_uri, str) else ""
        if not isinstance(r_uri, str) or not normal.startswith(root) or len(normal) == len(root):
            raise InvalidEntry(shown, f"resources[{i}].uri is not a file within the skill's directory")
        tail = normal[len(root) :].split("/")
        plain = "%" not in normal  # then no segment changes when decoded
        if ("" in tail or "." in tail or ".." in tail) if plain else any(_dot_or_empty(s) for s in tail):
            raise InvalidEntry(shown, f"resources[{i}].uri has an empty, '.' or '..' segment")
        if normal in seen:
            raise InvalidEntry(shown, f"resources[{i}].uri {r_uri[:200]} is listed twice")
        if not is_digest(digest):
            raise InvalidEntry(shown, f"resources[{i}].digest is not 'sha256:' and 64 lowercase hex characters")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise InvalidEntry(shown, f"resources[{i}].size is not a non-negative integer")
        seen.add(normal)
        files.setdefault(tuple(tail) if plain else tuple(unquote(s) for s in tail), r_uri)
        assert isinstance(digest, str)
        parsed.append(EntryResource(r_uri, digest, size))
    if normal_uri(uri) not in seen:
        raise InvalidEntry(shown, "resources does not list SKILL.md itself, so it is not complete")
    clash = _file_and_folder(files)
    if clash is not None:
        raise InvalidEntry(shown, clash)
    return SkillEntry(uri, _interned(fm), tuple(parsed))


def _interned(frontmatter: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of wire frontmatter whose keys and short strings are interned (a listing repeats them per skill);
    name and description, one skill's own, are kept as they are."""
    return {_shared(k): v if k in ("name", "description") else _shared(v) for k, v in frontmatter.items()}


def _shared(value: Any) -> Any:
    """`value` with its strings (keys too) of at most `_SHARED_TEXT` characters interned; lists and objects copied."""
    if isinstance(value, str):
        return sys.intern(value) if len(value) <= _SHARED_TEXT else value
    if isinstance(value, dict | Mapping):
        return {_shared(k): _shared(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shared(v) for v in value]
    return value


def _file_and_folder(files: Mapping[tuple[str, ...], str]) -> str | None:
    """Why one listed path is both a file and the folder of another (`sub` and `sub/file.md`), or None.

    `files` maps each path within the skill, as decoded segments (RFC 3986 reads `su%62` as `sub`, and a host
    writes them to disk that way), to the uri that listed it.
    """
    for path, file_uri in files.items():
        for end in range(1, len(path)):
            folder = files.get(path[:end])
            if folder is not None:
                first, second = _short(folder), _short(file_uri)
                return f"resources lists {first} as a file and {second} inside it; a path cannot be both"
    return None


def _short(uri: str) -> str:
    return uri[:200].encode("unicode_escape").decode("ascii")
