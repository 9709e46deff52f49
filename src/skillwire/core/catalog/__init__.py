"""An immutable snapshot of everything a server publishes, with keyset pagination.

A catalog is built once (by a source such as `sources.filesystem`) and never
changed: a reload builds a new catalog and swaps the reference, so a request
sees one consistent snapshot. Lookups are exact matches on canonical URIs,
which is what keeps a request from naming anything the catalog did not publish.

What a directory is (Directory Resources: "every directory level is a directory
resource"): inside a skill, its root and every folder in it that is not ignored,
whether it holds files, only ignored files or nothing (`Skill.folders`; an empty
one reads as `resources: []`); above the skills, every prefix level of a skill
path (`skill://acme` when `skill://acme/billing/SKILL.md` is served), listing the
next level down. Prefix levels are found by bisecting the sorted skill URIs, so
they cost no memory and a page costs O(page size x log skills). The scheme root
(`skill://`) is no directory: `skills/list` enumerates the skills.

    catalog = Catalog(skills, refusals)
    page = catalog.skills_page(cursor=None, limit=50)
    catalog.children_page("skill://pdf-processing/templates", cursor=None, limit=50)

The package, one seam per module (everything callers need is importable from here):

    _snapshot     the Catalog: skills by URI, files through the skills enclosing them, deferred building
    _served       what it serves and refuses: ServedFile, the FileContent kinds, Refusal
    _directories  directory resources: each skill's folders, and the prefix levels above the skills
    _paging       keyset pages and the opaque cursors every listing hands out
"""

from skillwire.core.catalog._directories import DirectoryChild, directory_tree
from skillwire.core.catalog._paging import Page, decode_cursor, encode_cursor, paginate
from skillwire.core.catalog._served import FileContent, GeneratedContent, Refusal, ServedFile, StampedContent
from skillwire.core.catalog._snapshot import BrowsableCatalog, Catalog, Locator, duplicate_names

__all__ = [
    "BrowsableCatalog",
    "Catalog",
    "DirectoryChild",
    "FileContent",
    "GeneratedContent",
    "Locator",
    "Page",
    "Refusal",
    "ServedFile",
    "StampedContent",
    "decode_cursor",
    "directory_tree",
    "duplicate_names",
    "encode_cursor",
    "paginate",
]
