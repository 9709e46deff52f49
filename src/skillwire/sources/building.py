"""The one catalog builder every kind of source uses: a source's files in, one `Catalog` of skills and refusals out.

A source lists the files under its root as `SourceFile`s (plain values: the path, its size, digest and MIME type,
and how to read the bytes back) and hands them to `build_catalog`. The builder finds the skill folders among them
(a folder holding a SKILL.md is a skill; skills nest, the enclosing one listing the nested one's files too), builds
each by the core rules (`core.skill_rules`: names, limits, frontmatter), refuses the skills that break one, and
returns the snapshot. A source never re-implements a rule, so the same files give the same skills and refusals
from every source.

Sources with more to do use the steps underneath: `skill_trees` (which files, empty folders and problems belong
to which skill folder), `build_skill_tree` (one folder's skill or refusal) and `CatalogBuilder` (skills and
refusals gathered one at a time; a skill path given twice is refused). The git source keeps each skill built from
unchanged blobs; the generated source adds skills it made itself.

    files = [SourceFile.of_bytes("pdf/SKILL.md", skill_md), SourceFile.of_bytes("pdf/forms.md", b"# Forms\\n")]
    catalog = build_catalog(files, label="tar skills.tar", root_name="skills")
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from skillwire.core.catalog import Catalog, FileContent, Refusal
from skillwire.core.digest import sha256_digest
from skillwire.core.errors import SkillError
from skillwire.core.manifest import MAX_TOTAL_BYTES, Skill
from skillwire.core.skill_rules import (
    SNIFF_BYTES,
    FileFacts,
    build_skill,
    mime_type_of,
    skill_folders,
    skill_path_of,
    span,
)
from skillwire.core.uri import SKILL_FILE

__all__ = [
    "DUPLICATE_RULE",
    "PATH_RULE",
    "CatalogBuilder",
    "MemoryFile",
    "SkillTree",
    "SourceFile",
    "build_catalog",
    "build_skill_tree",
    "skill_trees",
]

DUPLICATE_RULE = "duplicate-path"
"""The rule a skill is refused by when its source already gave a skill at the same path."""
PATH_RULE = "path-invalid"
"""The rule a file is refused by when no URI can name it alone: its path is not a relative path of names (an
archive's "../x"), or it is also a folder holding other files."""


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """A `FileContent` holding its bytes: what was read is what is served."""

    data: bytes

    def read(self, limit: int) -> bytes | None:
        return self.data[: limit + 1]


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file under a source's root, as the builder takes it.

    `path`: relative to the root, "/"-separated ("pdf/forms/w9.md"); `size`, `digest` (`sha256:` and hex) and
    `mime_type`: of the stored bytes; `content`: how a read gets those bytes back.
    """

    path: str
    size: int
    digest: str
    mime_type: str
    content: FileContent

    @classmethod
    def of_bytes(cls, path: str, data: bytes, content: FileContent | None = None) -> SourceFile:
        """The file at `path` holding `data`: its size, digest and type worked out from the bytes (the type by
        extension, else by sniffing), read back through `content` (default: the bytes, kept in memory)."""
        return cls(
            path,
            len(data),
            sha256_digest(data),
            mime_type_of(path, data[:SNIFF_BYTES]),
            MemoryFile(data) if content is None else content,
        )


@dataclass(frozen=True, slots=True)
class SkillTree:
    """One skill folder among a source's files (see `skill_trees`).

    `folder`: its path under the root ("" when the root is the skill); `skill_path`: the skill path it is served
    at; `lo`, `hi`: its files are `paths[lo:hi]` of the sorted paths it was found in; `folders` and `problems`:
    its empty branches and the problems found in it, root-relative as given. Equal trees hold the same things.
    """

    folder: str
    skill_path: tuple[str, ...]
    lo: int
    hi: int
    folders: tuple[str, ...]
    problems: tuple[Refusal, ...]


def skill_trees(
    paths: Sequence[str],
    *,
    root_name: str,
    folders: Sequence[str] = (),
    problems: Iterable[Refusal] = (),
) -> tuple[list[SkillTree], list[Refusal]]:
    """The skill folders among sorted root-relative file `paths`, and the `problems` that lie in none of them.

    `root_name`: the skill path of the root when it holds a SKILL.md (its nested skills are served under it, as a
    folder's are); `folders`: empty branches (sorted, root-relative), each going to the skills holding it;
    `problems`: what the source found wrong (root-relative paths): one inside a skill folder refuses that skill.
    """
    dirs = skill_folders(paths)
    root = root_name if dirs and dirs[0] == "" else None
    inside: dict[str, list[Refusal]] = {}
    outside: list[Refusal] = []
    in_skill = set(dirs)
    for problem in problems:
        holders = list(_skill_dirs_holding(problem.path, in_skill))
        for folder in holders:
            inside.setdefault(folder, []).append(problem)
        if not holders:
            outside.append(problem)
    trees = []
    for folder in dirs:
        lo, hi = span(paths, folder)
        first, last = span(folders, folder)
        trees.append(
            SkillTree(
                folder, skill_path_of(folder, root), lo, hi, tuple(folders[first:last]), tuple(inside.get(folder, ()))
            )
        )
    return trees, outside


def build_skill_tree(
    tree: SkillTree, files: Sequence[FileFacts], skill_md: bytes | None, *, at: Callable[[str], str]
) -> Skill | Refusal:
    """The skill `tree` makes, or the refusal saying which rule it breaks.

    `files`: its files (names relative to the skill folder, in path order); `skill_md`: its SKILL.md's bytes
    (None: they could not be read); `at`: how the source names a root-relative path in a refusal.
    """
    cut = len(tree.folder) + 1 if tree.folder else 0
    problems = [SkillError(p.message, rule=p.rule, path=p.path[cut:]) for p in tree.problems]
    try:
        return build_skill(
            tree.skill_path,
            files,
            SkillError("cannot be read", rule="unreadable", path=SKILL_FILE) if skill_md is None else skill_md,
            problems=problems,
            folders=[f[cut:] for f in tree.folders],
        )
    except SkillError as err:
        rel = err.path or SKILL_FILE
        return Refusal(at(f"{tree.folder}/{rel}" if tree.folder else rel), err.rule, err.message, err.line)


class CatalogBuilder:
    """Skills and refusals gathered one at a time, then one `Catalog`.

    A skill whose path was already given is refused (rule `duplicate-path`) and the first one kept, so which one
    is served never depends on anything but the order the source gives them in.
    """

    def __init__(self) -> None:
        self._skills: dict[str, Skill] = {}
        self._contents: dict[str, FileContent] = {}
        self._refusals: list[Refusal] = []

    def add(self, skill: Skill, contents: Mapping[str, FileContent], *, where: str) -> bool:
        """Serve `skill`, each file read through `contents` (by file URI); False, and the skill refused at `where`
        (how the source names it), when a skill at its path was added before."""
        if skill.uri in self._skills:
            self._refusals.append(
                Refusal(where, DUPLICATE_RULE, f"another skill at {skill.uri} came first; this one is not served")
            )
            return False
        self._skills[skill.uri] = skill
        self._contents.update(contents)
        return True

    def refuse(self, *refusals: Refusal) -> None:
        """Report `refusals` (a refused skill, or a problem that refuses nothing)."""
        self._refusals.extend(refusals)

    def build(self, generation: int = 0) -> Catalog:
        """The catalog of everything added so far, numbered `generation`."""
        return Catalog(self._skills.values(), self._contents, self._refusals, generation=generation)


def build_catalog(
    files: Iterable[SourceFile],
    *,
    label: str,
    root_name: str,
    folders: Iterable[str] = (),
    problems: Iterable[Refusal] = (),
    at: Callable[[str], str] | None = None,
    generation: int = 0,
) -> Catalog:
    """The catalog the files under a source's root make (see the module docstring).

    `label`: the source as people name it; `root_name`: the skill path of the root when it holds a SKILL.md;
    `folders`: empty folders a directory read may name (root-relative); `problems`: what the source found wrong
    (root-relative paths; inside a skill folder each refuses the skill, elsewhere it is only reported); `at`: how
    a refusal names a root-relative path (default `LABEL/PATH`). Files are served as given (a source applies its
    own ignore rules first), except a path with an empty, "." or ".." name, or one that is a folder of other files
    too: it is a problem (rule `path-invalid`) like those in `problems`. ValueError for a path given twice.
    """
    ordered, found = _servable(files, label)
    paths = [f.path for f in ordered]
    named = at if at is not None else (lambda path: f"{label}/{path}")
    trees, outside = skill_trees(paths, root_name=root_name, folders=sorted(folders), problems=[*problems, *found])
    builder = CatalogBuilder()
    for tree in trees:
        members = ordered[tree.lo : tree.hi]
        cut = len(tree.folder) + 1 if tree.folder else 0
        facts = [FileFacts(f.path[cut:], f.size, f.digest, f.mime_type) for f in members]
        skill_md = next(f for f in members if f.path[cut:] == SKILL_FILE)
        data = skill_md.content.read(MAX_TOTAL_BYTES) if skill_md.size <= MAX_TOTAL_BYTES else b""
        result = build_skill_tree(tree, facts, data, at=named)
        if isinstance(result, Refusal):
            builder.refuse(result)
            continue
        by_name = {fact.rel_path: f.content for fact, f in zip(facts, members, strict=True)}
        builder.add(result, {f.uri: by_name[f.rel_path] for f in result.files}, where=named(tree.folder))
    builder.refuse(*(Refusal(named(p.path), p.rule, p.message, p.line, skill=False) for p in outside))
    return builder.build(generation)


def _servable(files: Iterable[SourceFile], label: str) -> tuple[list[SourceFile], list[Refusal]]:
    """The files a URI can name, in path order, and a problem (`path-invalid`) for each of the others: a path with
    an empty, "." or ".." name (an archive member "../x" or "/etc/x"), or a file that is also a folder of files
    (an archive can say both). ValueError for a path given twice."""
    ordered: list[SourceFile] = []
    found: list[Refusal] = []
    for f in files:
        if _clean(f.path):
            ordered.append(f)
        else:
            found.append(Refusal(f.path, PATH_RULE, "not a relative path of '/'-separated names; it is not served"))
    ordered.sort(key=_path_of)
    paths = [f.path for f in ordered]
    for before, after in pairwise(paths):
        if before == after:
            raise ValueError(f"{label}: the file {after!r} is given twice")
    folders_too = {i for i, path in enumerate(paths) if _holds_files(paths, path)}
    if not folders_too:
        return ordered, found
    found.extend(Refusal(paths[i], PATH_RULE, "both a file and a folder; the file is not served") for i in folders_too)
    return [f for i, f in enumerate(ordered) if i not in folders_too], found


def _clean(path: str) -> bool:
    """True for a relative path of "/"-separated names, none of them empty, "." or ".."."""
    return not any(part in ("", ".", "..") for part in path.split("/"))


def _holds_files(paths: Sequence[str], path: str) -> bool:
    """True when sorted `paths` holds a file inside `path` (so `path` is a folder, too)."""
    i = bisect_left(paths, path + "/")
    return i < len(paths) and paths[i].startswith(path + "/")


def _path_of(f: SourceFile) -> str:
    return f.path


def _skill_dirs_holding(path: str, skill_dirs: set[str]) -> Iterator[str]:
    """The skill folders holding the root-relative `path` (the root "" among them when it is a skill)."""
    if "" in skill_dirs:
        yield ""
    folder = path.rpartition("/")[0]
    while folder:
        if folder in skill_dirs:
            yield folder
        folder = folder.rpartition("/")[0]
