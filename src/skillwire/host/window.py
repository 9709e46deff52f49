"""The acting window: while the model acts on a skill, reads resolve only within the held entry.

The Acting Window and the Held Entry: "While acting on a skill, a host MUST
resolve reads of the skill's files only to URIs listed in the held entry's
resources" and "MUST treat a read of an unlisted file within the skill as a
verification failure". Relative References: a relative path resolves against
the skill's root, like a filesystem path; `..` never leaves the root. Directory
questions are answered from the manifest (Directory Reads and the Held Entry).

    window = ActingWindow(key, entry)
    window.resolve("templates/invoice.md")    # -> EntryResource, or UnlistedResource
    window.list_directory("templates")        # children from the manifest
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, unquote

from skillwire.errors import UnlistedResource
from skillwire.host.entry import EntryResource, SkillEntry
from skillwire.host.registry import SkillKey


class OutsideSkill(UnlistedResource):
    """A path that resolves outside the skill's root (`..` past the root, another scheme or skill)."""


@dataclass(frozen=True, slots=True)
class DirectoryItem:
    name: str
    uri: str
    is_directory: bool
    size: int | None = None


@dataclass(frozen=True, slots=True)
class ActingWindow:
    """A loaded skill and the entry it was loaded from; every read in the window is checked against it."""

    key: SkillKey
    entry: SkillEntry
    grants: frozenset[str] = frozenset()

    def resolve_uri(self, ref: str) -> str:
        """The absolute URI for a relative path (against the skill root) or an absolute URI inside the skill."""
        root = self.entry.root_uri
        if "://" in ref:
            uri = ref
            if not uri.startswith(root + "/"):
                raise OutsideSkill(uri, skill_uri=self.entry.uri)
            ref = uri[len(root) + 1 :]
        parts: list[str] = []
        for raw in ref.replace("\\", "/").split("/"):
            seg = unquote(raw)
            if seg in ("", "."):
                continue
            if seg == "..":
                if not parts:
                    raise OutsideSkill(f"{root}/{ref}", skill_uri=self.entry.uri)
                parts.pop()
                continue
            if "/" in seg or "\x00" in seg:
                raise OutsideSkill(f"{root}/{ref}", skill_uri=self.entry.uri)
            parts.append(seg)
        if not parts:
            return root
        return root + "/" + "/".join(_encode(p) for p in parts)

    def resolve(self, ref: str) -> EntryResource:
        """The held entry's record for `ref`; an unlisted file is a verification failure (UnlistedResource)."""
        uri = self.resolve_uri(ref)
        record = self.entry.resource(uri)
        if record is None:
            # The server may spell a listed URI another way (raw UTF-8, lowercase %xx): equivalent spellings
            # of a listed file are that file, and the returned record keeps the URI exactly as listed.
            matches = [r for normal, r in self._listed() if normal == uri]
            if len(matches) != 1:
                raise UnlistedResource(uri, skill_uri=self.entry.uri)
            record = matches[0]
        return record

    def list_directory(self, ref: str = "") -> tuple[DirectoryItem, ...]:
        """The direct children of a directory of the skill, answered from the held manifest alone."""
        base = self.resolve_uri(ref) if ref else self.entry.root_uri
        if isinstance(self.entry.resources, str):
            raise UnlistedResource(base, skill_uri=self.entry.uri)
        prefix = base + "/"
        items: dict[str, DirectoryItem] = {}
        for normal, r in self._listed():
            if not normal.startswith(prefix):
                continue
            first, _, rest = normal[len(prefix) :].partition("/")
            if rest:
                items.setdefault(first, DirectoryItem(unquote(first), prefix + first, True))
            else:
                items[first] = DirectoryItem(unquote(first), r.uri, False, r.size)
        if not items and base != self.entry.root_uri:
            raise UnlistedResource(base, skill_uri=self.entry.uri)
        return tuple(sorted(items.values(), key=lambda i: i.name))

    def _listed(self) -> list[tuple[str, EntryResource]]:
        """Each listed file with its URI spelled as `resolve_uri` spells it (segments decoded, then re-encoded)."""
        if isinstance(self.entry.resources, str):
            return []
        root = self.entry.root_uri
        return [
            (root + "/" + "/".join(_encode(unquote(s)) for s in r.uri[len(root) + 1 :].split("/")), r)
            for r in self.entry.resources
        ]


def _encode(segment: str) -> str:
    """One path segment percent-encoded as RFC 3986 pchar (the spelling `skillwire.uri` also writes)."""
    return quote(segment, safe="-._~!$&'()*+,;=:@")
