"""The acting window: while the model acts on a skill, reads resolve only within the held entry.

The Acting Window and the Held Entry: "While acting on a skill, a host MUST
resolve reads of the skill's files only to URIs listed in the held entry's
resources" and "MUST treat a read of an unlisted file within the skill as a
verification failure". Relative References: a relative path resolves against
the skill's root, like a filesystem path, and one written in a nested skill's
files against the nested skill's root; `..` never leaves the root. Directory
questions are answered from the manifest (Directory Reads and the Held Entry).

    window = ActingWindow(key, entry)
    window.resolve("templates/invoice.md")    # -> EntryResource, or UnlistedResource
    window.resolve("references/x.md", base="security-review/SKILL.md")   # against the nested skill's root
    window.list_directory("templates")        # children from the manifest
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from skillwire.core.errors import OutsideSkill, UnlistedResource
from skillwire.core.hosting.entry import EntryResource, SkillEntry
from skillwire.core.hosting.registry import SkillKey
from skillwire.core.uri import SKILL_FILE, encode_segment, normal_uri


@dataclass(frozen=True, slots=True)
class DirectoryItem:
    name: str
    uri: str
    is_directory: bool
    size: int | None = None


@dataclass(frozen=True, slots=True)
class ActingWindow:
    """A loaded skill and the entry it was loaded from; every read in the window is checked against it.

    URIs are compared in one normal form (`skillwire.core.uri.normal_uri`): a server or a model may spell a listed
    file another way (raw UTF-8, lowercase `%xx`), and an equivalent spelling is that file.
    """

    key: SkillKey
    entry: SkillEntry
    grants: frozenset[str] = frozenset()

    def resolve_uri(self, ref: str, base: str | None = None) -> str:
        """The absolute URI (in normal form) for `ref`: a relative path, or an absolute URI inside the skill.

        `base` is the file the reference was written in (a path in the skill or its URI). Relative
        References: "a relative reference in a nested skill's SKILL.md resolves against the nested skill's
        root regardless of how the file was reached", so `ref` resolves against the root of the innermost
        skill (listed in the held entry) that holds `base`; without `base`, against this skill's root.
        `..` never leaves the root it resolves against.
        """
        root = self._base_root(base) if base else normal_uri(self.entry.root_uri)
        if "://" in ref:
            uri = normal_uri(ref)
            if not uri.startswith(root + "/"):
                raise OutsideSkill(ref, skill_uri=self.entry.uri)
            ref = uri[len(root) + 1 :]
        parts = _segments(ref)
        if parts is None:
            raise OutsideSkill(f"{root}/{ref}", skill_uri=self.entry.uri)
        return root + "".join("/" + encode_segment(p) for p in parts)

    def resolve(self, ref: str, base: str | None = None) -> EntryResource:
        """The held entry's record for `ref`; an unlisted file is a verification failure (UnlistedResource).

        The returned record keeps the URI exactly as the server listed it.
        """
        uri = self.resolve_uri(ref, base)
        record = self.entry.resource(uri)
        if record is None:
            raise UnlistedResource(uri, skill_uri=self.entry.uri)
        return record

    def list_directory(self, ref: str = "", base: str | None = None) -> tuple[DirectoryItem, ...]:
        """The direct children of a directory of the skill, answered from the held manifest alone."""
        root = normal_uri(self.entry.root_uri)
        directory = self.resolve_uri(ref, base) if ref else root
        if isinstance(self.entry.resources, str):
            raise UnlistedResource(directory, skill_uri=self.entry.uri)
        prefix = directory + "/"
        items: dict[str, DirectoryItem] = {}
        for r in self.entry.resources:
            normal = normal_uri(r.uri)
            if not normal.startswith(prefix):
                continue
            first, _, rest = normal[len(prefix) :].partition("/")
            if rest:
                items.setdefault(first, DirectoryItem(unquote(first), prefix + first, True))
            else:
                items[first] = DirectoryItem(unquote(first), r.uri, False, r.size)
        if not items and directory != root:
            raise UnlistedResource(directory, skill_uri=self.entry.uri)
        return tuple(sorted(items.values(), key=lambda i: i.name))

    def _base_root(self, base: str) -> str:
        """The root of the innermost skill holding the file `base`: the directory of the nearest SKILL.md the
        held entry lists at or above it (this skill's own root when none is nested in between)."""
        root = normal_uri(self.entry.root_uri)
        file = self.resolve_uri(base)  # `base` itself must be inside this skill
        folders = file[len(root) + 1 :].split("/")[:-1]
        for depth in range(len(folders), 0, -1):
            nested = root + "".join("/" + f for f in folders[:depth])
            if self.entry.resource(f"{nested}/{SKILL_FILE}") is not None:
                return nested
        return root


def _segments(ref: str) -> list[str] | None:
    """The decoded segments of a relative path after `.` and `..`, or None if it climbs above its root or holds
    a segment no path can (an encoded `/`, a NUL)."""
    parts: list[str] = []
    for raw in ref.replace("\\", "/").split("/"):
        seg = unquote(raw)
        if seg in ("", "."):
            continue
        if seg == "..":
            if not parts:
                return None
            parts.pop()
            continue
        if "/" in seg or "\x00" in seg:
            return None
        parts.append(seg)
    return parts
