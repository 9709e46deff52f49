"""The rules that turn a skill folder's files into a `Skill` or a `Refusal`, whatever the bytes come from.

Pure: no I/O. A source (a folder, a git tree, a package, memory) lists each skill's files (name relative to the
skill folder, size, digest, MIME type), reads its SKILL.md bytes, and calls `skill_or_refusal`; every source then
refuses exactly the same things for the same reasons. The rules, in the order they are checked:

- names (`file-name-encoding`, `file-name-control`, `file-name-backslash`): every file a manifest lists must be
  nameable by a URI that a read may carry (RFC 3986 percent-encodes UTF-8; `canonical_uri` refuses a control
  character or a backslash), and no URI longer than a read may be (`uri-too-long`);
- what the source itself found wrong in the folder (a link leaving the root, an unreadable file), as SkillErrors;
- limits (Limits: "Servers SHOULD NOT serve skills exceeding 512 resources or 16 MiB total");
- the URI-authority rule (Skill URIs: the first path segment is the URI's authority, an RFC 3986 reg-name);
- frontmatter (Agent Skills: `name` and `description` required; `name` "Must match the parent directory name"),
  then the optional fields of `fields.py`.

The manifest lists SKILL.md first, then every other file in path order (`manifest_order`). Which files belong to
which skill (nested skills: the enclosing skill lists the nested one's files too) is `skill_folders` + `span`.
A source that keeps folders may also pass a skill's empty branches (folders holding no served file, each implying
the folders above it): they become `Skill.folders`, directories with no children, if a read can name them
(`nameable_folder`, and a URI no longer than a read may be); any other is dropped, refusing nothing.

    facts = [FileFacts("SKILL.md", 151, digest, "text/markdown")]
    result = skill_or_refusal(("pdf",), facts, skill_md_bytes, where="skills/pdf", folders=["drafts"])
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from skillwire.core.catalog import Refusal
from skillwire.core.digest import Digest
from skillwire.core.display import terminal_safe
from skillwire.core.errors import FrontmatterError, SkillError
from skillwire.core.fields import optional_field_problem
from skillwire.core.frontmatter import parse_skill_md
from skillwire.core.manifest import Skill, SkillFile, check_limits
from skillwire.core.mime import DEFAULT_MIME_TYPE, mime_type_for
from skillwire.core.names import description_problem, is_reg_name, name_problem
from skillwire.core.uri import (
    MAX_URI_LENGTH,
    PLAIN_PATH,
    SKILL_FILE,
    UNADDRESSABLE,
    directory_uri,
    join_segments,
    segment_problem,
)

__all__ = [
    "SNIFF_BYTES",
    "FileFacts",
    "Frontmatter",
    "build_skill",
    "check_frontmatter",
    "encodes",
    "file_uris",
    "manifest_order",
    "mime_type_of",
    "nameable_folder",
    "read_frontmatter",
    "refusal_of",
    "shown_name",
    "skill_folders",
    "skill_or_refusal",
    "skill_path_of",
    "span",
]

SNIFF_BYTES = 8192
"""How much of a file's start `mime_type_of` looks at to tell text from binary."""


class FileFacts(NamedTuple):
    """What a source knows of one file of a skill: its name in the skill ("/"-separated), size, digest, type."""

    rel_path: str
    size: int
    digest: Digest  # its text, or the raw bytes `digest.compact_digest` keeps
    mime_type: str


Frontmatter = tuple[dict[str, Any], int]
"""A SKILL.md's frontmatter as JSON and the 1-based line where it starts."""


def skill_or_refusal(
    skill_path: tuple[str, ...],
    files: Sequence[FileFacts],
    skill_md: bytes | Frontmatter | SkillError,
    *,
    where: str,
    problems: Sequence[SkillError] = (),
    folders: Iterable[str] = (),
) -> Skill | Refusal:
    """The skill these files make, or the refusal saying which rule it breaks.

    `skill_md`: the SKILL.md bytes (or what `read_frontmatter` made of them); `where`: the skill folder as the
    person running the server names it (refusal paths are `where/file`); `problems`: what the source found
    wrong in the folder, refused after the name rules; `folders`: its empty branches (paths in the skill).
    """
    try:
        return build_skill(skill_path, files, skill_md, problems=problems, folders=folders)
    except SkillError as err:
        return refusal_of(err, where)


def refusal_of(err: SkillError, where: str) -> Refusal:
    """The refusal of the skill at `where` for `err` (its path is inside the skill folder)."""
    rel = err.path or SKILL_FILE
    path = where + rel if not where or where.endswith("/") else f"{where}/{rel}"
    return Refusal(path, err.rule, err.message, err.line)


def build_skill(
    skill_path: tuple[str, ...],
    files: Sequence[FileFacts],
    skill_md: bytes | Frontmatter | SkillError,
    *,
    problems: Sequence[SkillError] = (),
    folders: Iterable[str] = (),
) -> Skill:
    """The skill these files make; SkillError naming the first rule broken (see the module docstring).
    `folders`: its empty branches (paths in the skill); those no read can name are left out."""
    rels = [f.rel_path for f in files]
    check_names(skill_path, rels)
    uris = file_uris(directory_uri(skill_path) + "/", rels)
    check_uri_lengths(uris, rels)
    for problem in problems:
        raise problem
    check_limits((f.size for f in files), path=SKILL_FILE)
    first = skill_path[0]
    if not is_reg_name(first):
        raise SkillError(
            f"first path segment {first!r} cannot be a URI authority (RFC 3986 reg-name); rename the folder",
            rule="path-authority",
            path=SKILL_FILE,
        )
    if SKILL_FILE not in rels:
        raise SkillError("the skill has no SKILL.md", rule="frontmatter-missing", path=SKILL_FILE)
    if isinstance(skill_md, bytes):
        try:
            skill_md = read_frontmatter(skill_md)
        except SkillError as err:
            skill_md = err
    if isinstance(skill_md, SkillError):
        raise type(skill_md)(skill_md.message, rule=skill_md.rule, path=SKILL_FILE, line=skill_md.line)
    fm, line = skill_md
    check_frontmatter(fm, line, skill_path)
    if fm["name"] is not skill_path[-1] and type(fm["name"]) is str:
        fm["name"] = skill_path[-1]  # an equal string (just checked): one copy of a skill's name, not two
    manifest = [SkillFile(f.rel_path, uri, f.digest, f.size, f.mime_type) for f, uri in zip(files, uris, strict=True)]
    manifest.sort(key=manifest_order)
    empty = sorted(f for f in folders if nameable_folder(f) and len(directory_uri(skill_path, f)) <= MAX_URI_LENGTH)
    return Skill(skill_path, fm, tuple(manifest), tuple(empty))


def read_frontmatter(raw: bytes) -> Frontmatter:
    """The frontmatter of SKILL.md bytes and its first line; FrontmatterError if it has none or it is malformed."""
    try:
        parsed = parse_skill_md(raw, path=SKILL_FILE)
    except FrontmatterError as err:
        if err.rule == "frontmatter-missing" and _looks_like_link_text(raw):
            target = raw.decode("utf-8", "replace").strip()
            raise FrontmatterError(
                f"file holds only the path {target!r}: a symbolic link checked out as a text file? "
                "Restore the link (git config core.symlinks true) or copy the real SKILL.md",
                rule=err.rule,
                path=err.path,
                line=err.line,
            ) from err
        raise
    return parsed.frontmatter, parsed.frontmatter_start_line


def check_frontmatter(fm: dict[str, Any], line: int, skill_path: tuple[str, ...]) -> None:
    """SkillError if the frontmatter breaks a field rule: name (present, well formed, equal to its folder),
    description, and the optional fields of `fields.py`."""
    if "name" not in fm:
        raise SkillError("frontmatter has no 'name' field", rule="name-missing", path=SKILL_FILE, line=line)
    problem = name_problem(fm["name"])
    if problem is not None:
        raise SkillError(problem, rule="name-format", path=SKILL_FILE, line=line)
    if fm["name"] != skill_path[-1]:
        raise SkillError(
            f"name {fm['name']!r} differs from its folder {skill_path[-1]!r}; they must be equal",
            rule="name-mismatch",
            path=SKILL_FILE,
            line=line,
        )
    if "description" not in fm:
        raise SkillError("frontmatter has no 'description' field", rule="description-missing", path=SKILL_FILE)
    problem = description_problem(fm["description"])
    if problem is not None:
        raise SkillError(problem, rule="description-format", path=SKILL_FILE, line=line)
    field_problem = optional_field_problem(fm)  # license, compatibility, metadata, allowed-tools
    if field_problem is not None:
        raise SkillError(field_problem.message, rule=field_problem.rule.id, path=SKILL_FILE, line=line)


def check_names(skill_path: tuple[str, ...], rels: Sequence[str]) -> None:
    """SkillError if the skill's folder or a file in it has a name no readable URI can carry, so the skill
    cannot be published whole: rule `file-name-encoding` for a name that is not valid UTF-8 (RFC 3986
    percent-encodes UTF-8), `file-name-control` for one holding a control character (C0, DEL, C1) and
    `file-name-backslash` for one holding a backslash (`canonical_uri` refuses a read of either).

    Names that are not UTF-8 arrive with the bad bytes as lone surrogates (PEP 383, as the OS hands them
    over); the message shows them as `\\xNN`, and other names through `display.terminal_safe`.
    """
    joined = "/".join([*skill_path, *rels])
    if joined.isprintable() and "\\" not in joined:
        return  # the common case, fast: a printable name holds no control character and no lone surrogate
    if not all(map(encodes, skill_path)):
        raise SkillError(
            f"skill folder '{shown_name('/'.join(skill_path))}' has a name that is not valid UTF-8, so no URI "
            "can name it; rename it to valid UTF-8",
            rule="file-name-encoding",
            path=SKILL_FILE,
        )
    for rel in rels:
        if not encodes(rel):
            shown = shown_name(rel)
            raise SkillError(
                f"file name '{shown}' is not valid UTF-8, so no URI can name it; rename it to valid UTF-8",
                rule="file-name-encoding",
                path=shown,
            )
    for segment in skill_path:
        problem = segment_problem(segment)
        if problem is not None:
            raise SkillError(
                f"skill folder '{terminal_safe('/'.join(skill_path))}' has a name holding {problem}, "
                "so no URI can name it; rename it",
                rule=_name_rule(problem),
                path=SKILL_FILE,
            )
    for rel in rels:
        problem = segment_problem(rel)
        if problem is not None:
            shown = terminal_safe(rel)
            raise SkillError(
                f"file name '{shown}' holds {problem}, so no URI can name it; rename it",
                rule=_name_rule(problem),
                path=shown,
            )


def check_uri_lengths(uris: Sequence[str], rels: Sequence[str]) -> None:
    """SkillError (rule `uri-too-long`) if a file's URI is longer than `canonical_uri` reads."""
    length = max(map(len, uris), default=0)
    if length > MAX_URI_LENGTH:
        raise SkillError(
            f"its URI is {length} characters long, over the limit of {MAX_URI_LENGTH}, so no read can "
            "name it; shorten folder or file names",
            rule="uri-too-long",
            path=rels[[len(uri) for uri in uris].index(length)],
        )


def file_uris(base: str, rels: Sequence[str]) -> list[str]:
    """The URI of each file at `rels` in the skill whose root URI is `base` (ending in "/")."""
    if PLAIN_PATH.fullmatch("/".join(rels)):
        return [base + rel for rel in rels]  # the common case: no segment needs percent-encoding
    return [base + (rel if PLAIN_PATH.fullmatch(rel) else join_segments(rel.split("/"))) for rel in rels]


def manifest_order(f: SkillFile) -> tuple[bool, str]:
    """Sort key of a manifest: SKILL.md first, then every other file in path order."""
    return (f.rel_path != SKILL_FILE, f.rel_path)


def mime_type_of(rel: str, head: bytes) -> str:
    """The MIME type of the file at `rel` whose content starts with `head` (at least `SNIFF_BYTES` of it, or all):
    by extension, else `text/plain` for UTF-8 text without NUL bytes, else `application/octet-stream`."""
    return mime_type_given(rel, lambda: looks_like_text(head[:SNIFF_BYTES]))


def mime_type_given(rel: str, is_text: Callable[[], bool]) -> str:
    """`mime_type_of` for a source that knows whether the content is text (`is_text` is asked only when the
    extension says nothing): by extension, else `text/plain` for text, else `application/octet-stream`."""
    mime = mime_type_for(rel)
    if mime == DEFAULT_MIME_TYPE and is_text():
        return "text/plain"
    return mime


def looks_like_text(head: bytes) -> bool:
    """True for UTF-8 without NUL bytes (a multi-byte character cut at the end of `head` still counts)."""
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3 and exc.reason == "unexpected end of data"
    return True


def nameable_folder(rel: str) -> bool:
    """True if a URI can name the folder at `rel`: UTF-8, and no control character or backslash (a folder none
    can name is no directory; holding no file, it refuses no skill)."""
    return (rel.isascii() or encodes(rel)) and not UNADDRESSABLE.search(rel)


def skill_path_of(skill_dir: str, root_name: str | None) -> tuple[str, ...]:
    """The skill path of the skill folder `skill_dir` ("/"-separated, relative to its root): the folder's path, or,
    when the root is itself a skill (`root_name`, the root's own name; None when it is no skill), that name
    followed by it (the root skill lists every file under it, so its nested skills are served under its path)."""
    parts = tuple(skill_dir.split("/")) if skill_dir else ()
    return parts if root_name is None else (root_name, *parts)


def skill_folders(paths: Iterable[str]) -> list[str]:
    """The skill folders among root-relative file `paths`: each folder holding a SKILL.md ("" for the root), sorted.

    Skills may nest: a skill folder inside another is a skill too, and the enclosing one lists its files."""
    found = [p[: -len(SKILL_FILE) - 1] if p != SKILL_FILE else "" for p in paths if _is_skill_md(p)]
    return sorted(found)


def span(rels: Sequence[str], folder: str) -> tuple[int, int]:
    """The slice of sorted root-relative `rels` that lies under `folder` ("" is everything): a skill's files."""
    if not folder:
        return 0, len(rels)
    lo = bisect.bisect_left(rels, folder + "/")
    return lo, bisect.bisect_left(rels, folder + "0", lo)  # "0" sorts right after "/"


def shown_name(name: str) -> str:
    """`name` with the bytes that are not UTF-8 (lone surrogates from os.listdir) written as `\\xNN`; safe to
    encode, log, print or store as JSON. Names that are valid UTF-8 come back unchanged."""
    if name.isascii():
        return name
    try:
        raw = name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no OS call makes (from a file that is not a listing)
        return name.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def _is_skill_md(path: str) -> bool:
    return path == SKILL_FILE or path.endswith("/" + SKILL_FILE)


def _name_rule(problem: str) -> str:
    """The refusal rule for a `uri.segment_problem` answer."""
    return "file-name-backslash" if problem == "a backslash" else "file-name-control"


def encodes(text: str) -> bool:
    """True if `text` is valid UTF-8 once encoded (a name from the OS holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _looks_like_link_text(data: bytes) -> bool:
    """True for a short one-line file that reads like a relative path (how git stores a symlink without them)."""
    text = data.strip()
    return 0 < len(text) < 1024 and b"\n" not in text and text.endswith(b"SKILL.md") and b"/" in text
