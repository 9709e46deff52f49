"""Skill entries and their manifests: the unit a host verifies and an approval binds to.

Skill Entries / Resources / Limits: an entry is {uri, frontmatter, resources};
`resources` lists every file of the skill exactly once (SKILL.md included, nested
skills' files included) with the digest and size of its raw bytes, or is the
string "dynamic". A skill over 512 entries or 16 MiB SHOULD NOT be served.

    files = (SkillFile("SKILL.md", "skill://a/SKILL.md", digest, 151, "text/markdown"),)
    skill = Skill(("a",), frontmatter, files)
    skill.to_entry()   # {"uri": ..., "frontmatter": ..., "resources": [...]}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

from skillwire.core.digest import Digest, digest_text
from skillwire.core.errors import LimitExceeded
from skillwire.core.uri import SKILL_FILE, directory_uri, skill_uri

MAX_RESOURCES = 512
_SCANNED_UP_TO = 8
MAX_TOTAL_BYTES = 16 * 1024 * 1024


class SkillFile:
    """One file of a skill: where it is in the skill, its URI, and what its raw bytes hash to.

    A value (frozen, compared and hashed by its five fields). Its URI is kept as two strings, a head and the
    rest (`uri == head + tail`): a skill's files share one head (`Skill` makes them), and a plain file's tail is
    its `rel_path`, so a file costs no URI string of its own (100,000 skills of five files hold 500,000).
    """

    __slots__ = ("_digest", "_head", "_tail", "mime_type", "rel_path", "size")
    __match_args__ = ("rel_path", "uri", "digest", "size", "mime_type")

    rel_path: str
    _head: str
    _tail: str
    _digest: Digest
    size: int
    mime_type: str

    def __init__(self, rel_path: str, uri: str, digest: Digest, size: int, mime_type: str) -> None:
        """`digest`: its `sha256:{hex}` text, or the 32 bytes `digest.compact_digest` keeps of it (no text kept)."""
        cut = len(uri) - len(rel_path)
        plain = cut > 0 and uri[cut - 1] == "/" and uri.endswith(rel_path)
        head, tail = (uri[:cut], rel_path) if plain else ("", uri)
        setattr_ = object.__setattr__
        setattr_(self, "rel_path", rel_path)
        setattr_(self, "_head", head)
        setattr_(self, "_tail", tail)
        setattr_(self, "_digest", digest)
        setattr_(self, "size", size)
        setattr_(self, "mime_type", mime_type)

    @property
    def uri(self) -> str:
        return self._head + self._tail

    @property
    def digest(self) -> str:
        """`sha256:{hex}` (made from the raw bytes when those are what is kept)."""
        return digest_text(self._digest)

    def _rehome(self, head: str) -> bool:
        """Share `head` if this file's URI is `head` + its tail: True. Only equal strings are swapped (nothing
        visible changes); a file split at another head keeps it (False), so a skill holding it compares URIs."""
        if self._head is head:
            return True
        if self._head == head:
            object.__setattr__(self, "_head", head)
            return True
        if self._head or not self._tail.startswith(head) or len(self._tail) == len(head):
            return False
        tail = self._tail[len(head) :]  # a URI kept whole (percent-encoded): split once, at its skill's root
        object.__setattr__(self, "_tail", self.rel_path if tail == self.rel_path else tail)
        object.__setattr__(self, "_head", head)
        return True

    def _fields(self) -> tuple[str, str, str, int, str]:
        return (self.rel_path, self._head + self._tail, digest_text(self._digest), self.size, self.mime_type)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SkillFile):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        rel_path, uri, digest, size, mime_type = self._fields()
        return (
            f"SkillFile(rel_path={rel_path!r}, uri={uri!r}, digest={digest!r}, size={size!r}, mime_type={mime_type!r})"
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type[SkillFile], tuple[str, str, str, int, str]]:
        return (SkillFile, self._fields())

    def to_wire(self) -> dict[str, Any]:
        """The SkillResource JSON object."""
        return {"uri": self._head + self._tail, "digest": digest_text(self._digest), "size": self.size}


@dataclass(frozen=True, slots=True)
class Skill:
    """A served skill: its path in the namespace, verbatim frontmatter, and complete manifest.

    `files` holds SKILL.md first, then every other file in path order. `folders`: the empty branches of its
    tree, sorted (paths in the skill of the deepest folders holding no served file, each implying the
    folders above it): directories too (an empty one reads as `resources: []`), though no manifest lists them.
    `dynamic`: the files are produced when they are read (Resources: "the server MUST set resources to the
    string 'dynamic'"); their records then carry no digest ("") and size 0, and the entry lists none of them.
    `meta`: the entry's `_meta` (None: none), annotations under a reverse-domain prefix of their own (Security
    Considerations: "Intermediaries MAY attach provenance or verification annotations via _meta"); a gateway's
    skills carry their upstream there. It is never part of the manifest.
    """

    skill_path: tuple[str, ...]
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]
    folders: tuple[str, ...] = ()
    dynamic: bool = False
    meta: Mapping[str, Any] | None = None
    uri: str = field(init=False)
    # The skill's root URI + "/", shared by its files (`SkillFile.uri` is this + their tail), and whether every
    # file's URI starts with it (a manifest a source built by hand may hold others: they are compared whole).
    _head: str = field(init=False, repr=False, compare=False)
    _under_root: bool = field(init=False, repr=False, compare=False)
    # Files by the rest of their URI, for a skill with more than _SCANNED_UP_TO files (None otherwise: a scan of
    # a few is as fast, and 100,000 small skills would hold a dict each).
    _by_tail: dict[str, SkillFile] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        head = directory_uri(self.skill_path) + "/"
        object.__setattr__(self, "uri", skill_uri(self.skill_path))
        object.__setattr__(self, "_head", head)
        if not self.files or self.files[0].rel_path != SKILL_FILE:
            raise ValueError(f"{self.uri}: the manifest must start with {SKILL_FILE}")
        under_root = True
        for f in self.files:  # every file shares the head, not only those up to the first that cannot
            under_root = f._rehome(head) and under_root
        object.__setattr__(self, "_under_root", under_root)
        many = under_root and len(self.files) > _SCANNED_UP_TO
        object.__setattr__(self, "_by_tail", {f._tail: f for f in self.files} if many else None)

    @property
    def root_uri(self) -> str:
        """The skill's directory URI (no trailing slash)."""
        return self._head[:-1]

    def file(self, uri: str) -> SkillFile | None:
        """This skill's file at `uri`, or None."""
        if not self._under_root:
            return next((f for f in self.files if f.uri == uri), None)
        head = self._head
        if not uri.startswith(head):
            return None
        tail = uri[len(head) :]
        if self._by_tail is not None:
            return self._by_tail.get(tail)
        for f in self.files:
            if f._tail == tail:
                return f
        return None

    @property
    def name(self) -> str:
        """The skill's name: the last segment of its path (equal to frontmatter.name)."""
        return self.skill_path[-1]

    @property
    def total_size(self) -> int:
        return sum(f.size for f in self.files)

    def to_entry(self) -> dict[str, Any]:
        """The Skill entry JSON object, identical for skills/list and skills/get."""
        entry: dict[str, Any] = {
            "uri": self.uri,
            "frontmatter": self.frontmatter,
            "resources": "dynamic" if self.dynamic else [f.to_wire() for f in self.files],
        }
        if self.meta is not None:
            entry["_meta"] = dict(self.meta)
        return entry


def check_limits(sizes: Iterable[int], *, path: str) -> None:
    """Raise LimitExceeded if a skill with these file sizes is over 512 files or 16 MiB."""
    count = 0
    total = 0
    for size in sizes:
        count += 1
        total += size
    if count > MAX_RESOURCES:
        raise LimitExceeded(
            f"skill has {count} files; the limit is {MAX_RESOURCES} (split it or ignore files with .skillwireignore)",
            rule="limit-files",
            path=path,
        )
    if total > MAX_TOTAL_BYTES:
        raise LimitExceeded(
            f"skill files total {total:,} bytes; the limit is {MAX_TOTAL_BYTES:,} (16 MiB)",
            rule="limit-size",
            path=path,
        )
