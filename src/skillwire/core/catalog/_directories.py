"""Directory resources derived from skills: each skill's folders, and the prefix levels above the skills.

Inside a skill every folder is built once from its file list; above the skills a prefix level is found by
bisecting the sorted skill URIs, so it costs no memory and a page costs O(page size x log skills).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from skillwire.core.catalog._paging import Page, decode_cursor, encode_cursor
from skillwire.core.manifest import Skill
from skillwire.core.mime import DIRECTORY_MIME_TYPE
from skillwire.core.uri import directory_uri


@dataclass(frozen=True, slots=True)
class DirectoryChild:
    """A direct child of a directory resource: a file or a subdirectory."""

    uri: str
    name: str
    mime_type: str
    is_directory: bool


def directory_tree(skills: Iterable[Skill]) -> dict[str, list[DirectoryChild]]:
    """Each directory of `skills` (their roots and every folder in them) and its direct children, sorted."""
    children: dict[str, dict[str, DirectoryChild]] = {}
    for skill in skills:
        root = skill.root_uri
        children.setdefault(root, {})
        known = {root}  # folders of this skill already recorded, with every folder above them
        for folder in skill.folders:
            _add_folders(children, root, directory_uri(skill.skill_path, folder), known)
        for f in skill.files:
            uri = f.uri
            parent, _, leaf = uri.rpartition("/")
            if parent not in known:
                _add_folders(children, root, parent, known)
            kids = children[parent]
            if uri not in kids:
                name = unquote(leaf) if "%" in leaf else leaf
                kids[uri] = DirectoryChild(uri, name, f.mime_type, False)
    return {d: sorted(kids.values(), key=lambda c: c.uri) for d, kids in children.items()}


def _add_folders(children: dict[str, dict[str, DirectoryChild]], root_uri: str, folder: str, known: set[str]) -> None:
    """Record `folder` (a URI under `root_uri`) and every folder between it and the root as directory children."""
    parent = root_uri
    for part in folder[len(root_uri) + 1 :].split("/"):
        uri = f"{parent}/{part}"
        if uri not in known:
            kids = children.setdefault(parent, {})
            if uri not in kids:
                name = unquote(part) if "%" in part else part
                kids[uri] = DirectoryChild(uri, name, DIRECTORY_MIME_TYPE, True)
            children.setdefault(uri, {})
            known.add(uri)
        parent = uri


def is_prefix_level(skill_uris: Sequence[str], uri: str) -> bool:
    """True if `uri` (canonical, not inside a served skill) is a proper prefix of a served skill's path."""
    head = uri + "/"
    at = bisect_left(skill_uris, head)
    return "://" in uri and at < len(skill_uris) and skill_uris[at].startswith(head)


def prefix_children(skill_uris: Sequence[str], uri: str, cursor: str | None, limit: int) -> Page[DirectoryChild]:
    """A page of the next levels below the prefix level `uri`: each a directory (a skill root or a deeper prefix).

    They come in the order of the sorted skill URIs (by child URI + "/"), found by skipping from one child to
    the next with a bisect: nothing is built or kept, however many skills lie below. The cursor names the last
    child handed out (keyset), so it stays meaningful across rebuilds, like every other cursor here.
    """
    head = uri + "/"
    start = head if cursor is None else max(head, decode_cursor(cursor, "dir:" + uri) + "0")
    at = bisect_left(skill_uris, start)  # every URI under "<child>/" sorts below "<child>0": "0" follows "/"
    found: list[DirectoryChild] = []
    while at < len(skill_uris) and len(found) <= limit:
        below = skill_uris[at]
        if not below.startswith(head):
            break
        segment = below[len(head) :].partition("/")[0]
        child = head + segment
        found.append(DirectoryChild(child, unquote(segment) if "%" in segment else segment, DIRECTORY_MIME_TYPE, True))
        at = bisect_left(skill_uris, child + "0", at)
    if len(found) > limit:
        return Page(tuple(found[:limit]), encode_cursor("dir:" + uri, found[limit - 1].uri) if limit else None)
    return Page(tuple(found), None)
