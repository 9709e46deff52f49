"""The manifest builder over random folder trees equals a naive reference walk.

`FolderSource.scan()` walks with scandir, skips stat calls, hashes in bulk and keeps state for
incremental rebuilds. The reference here does the documented rules the slow, obvious way
(os.listdir, os.stat, os.path.realpath, hashlib), on generated trees full of what goes wrong on
real disks: nested skills, hidden and ignored folders, `.skillwireignore` files, odd names,
symbolic links inside the root, out of it, dangling and looping, and FIFOs. Both must agree on
which skills are served with which manifest, which skills are refused by which rule, and what
is reported outside any skill; every URI served must be one a read can ask for.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import pathspec
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from skillwire.core.catalog import Catalog
from skillwire.core.display import terminal_safe
from skillwire.core.errors import FrontmatterError, InvalidSkillUri
from skillwire.core.frontmatter import parse_skill_md
from skillwire.core.names import description_problem, name_problem
from skillwire.core.uri import MAX_URI_LENGTH, canonical_uri
from skillwire.sources.folder.source import FolderSource

# ------------------------------------------------------------------------------------------- the documented rules

# sources/ignore.py: what is never served, whatever the ignore files say.
IGNORED_DIRS = {".git", ".hg", ".svn", ".bzr", "_darcs", "CVS", "__pycache__", ".mypy_cache", ".pytest_cache"}
IGNORED_DIRS |= {".ruff_cache"}
IGNORED_FILES = {".DS_Store", "Thumbs.db", "desktop.ini", ".skillwireignore", ".gitkeep"}
# RFC 3986 reg-name characters that need no encoding: the first skill-path segment is the URI authority.
REG_NAME = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=")


def _builtin_ignored(name: str, is_dir: bool) -> bool:
    if is_dir:
        return name in IGNORED_DIRS
    return name in IGNORED_FILES or name.startswith("._") or name.endswith((".pyc", ".pyo"))


@dataclass
class Reference:
    """What the naive walk found: files (root-relative path -> path to read) and bad paths (path, rule)."""

    root: str
    files: dict[str, str] = field(default_factory=dict)
    bad: list[tuple[str, str]] = field(default_factory=list)


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _under(rel: str, folder: str) -> bool:
    """`rel` is in `folder`, or is the folder itself (a bad path there, such as the link that makes it, counts)."""
    return folder in ("", rel) or rel.startswith(folder + "/")


def _ignored(rel: str, is_dir: bool, specs: list[tuple[str, pathspec.GitIgnoreSpec]]) -> bool:
    """gitignore semantics per ignore file (patterns relative to its folder); the last matching pattern wins."""
    verdict = False
    for folder, spec in specs:
        if folder and not rel.startswith(folder + "/"):
            continue
        local = rel[len(folder) + 1 if folder else 0 :] + ("/" if is_dir else "")
        result = spec.check_file(local)
        if result.include is not None:
            verdict = bool(result.include)
    return verdict


def reference_walk(
    ref: Reference,
    folder: str,
    rel_dir: str,
    ancestors: frozenset[str],
    specs: list[tuple[str, pathspec.GitIgnoreSpec]],
) -> None:
    """Record every file a served root holds, following links whose real target is inside the root."""
    names = sorted(os.listdir(folder))
    if ".skillwireignore" in names:  # read only if it is a regular file (a link to one is not), in UTF-8
        ignore_file = os.path.join(folder, ".skillwireignore")
        mode = os.lstat(ignore_file).st_mode
        if stat.S_ISLNK(mode):
            ref.bad.append((_join(rel_dir, ".skillwireignore"), "unreadable"))
        elif not stat.S_ISREG(mode):
            ref.bad.append((_join(rel_dir, ".skillwireignore"), "not-a-file"))
        else:
            try:
                text = Path(ignore_file).read_bytes().decode("utf-8")
                specs = [*specs, (rel_dir, pathspec.GitIgnoreSpec.from_lines(text.splitlines()))]
            except UnicodeDecodeError:
                ref.bad.append((_join(rel_dir, ".skillwireignore"), "unreadable"))
    for name in names:
        rel, path = _join(rel_dir, name), os.path.join(folder, name)
        is_link = os.path.islink(path)
        if not _utf8(name) and (is_link or not os.path.isdir(path)):  # no URI can name it: never opened
            if not (_builtin_ignored(name, False) or _ignored(rel, False, specs)):
                ref.bad.append((rel, "file-name-encoding"))
            continue
        try:
            st_ = os.stat(path)
        except OSError as exc:  # a broken link is no folder: ignored like a file of its name, else refused
            if not (_builtin_ignored(name, False) or _ignored(rel, False, specs)):
                ref.bad.append((rel, "link-dangles" if isinstance(exc, FileNotFoundError) else "unreadable"))
            continue
        is_dir = stat.S_ISDIR(st_.st_mode)
        if _builtin_ignored(name, is_dir) or _ignored(rel, is_dir, specs):
            continue
        real = os.path.realpath(path)
        if is_link and not (real == ref.root or real.startswith(ref.root + "/")):
            ref.bad.append((rel, "link-escapes"))
        elif is_dir and real in ancestors:
            ref.bad.append((rel, "link-loop"))
        elif is_dir:
            reference_walk(ref, real, rel, ancestors | {real}, specs)
        elif stat.S_ISREG(st_.st_mode):
            ref.files[rel] = path
        else:
            ref.bad.append((rel, "not-a-file"))


@dataclass
class Expected:
    served: dict[str, list[tuple[str, str, int]]]  # skill URI -> manifest (uri, digest, size), SKILL.md first
    refused: dict[str, set[tuple[str, str]]]  # skill folder -> the (refusal path, rule) pairs it may be refused with
    outside: set[tuple[str, str]]  # bad paths in no skill: (path, rule)


def _shown(path: str) -> str:
    """A path as refusals show it: bytes that are not UTF-8 (lone surrogates from os.listdir) written as \\xNN."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _utf8(name: str) -> bool:
    return os.fsencode(name).decode("utf-8", "replace") == name


def _name_rule(name: str) -> str | None:
    """The rule a name breaks that no URI a read accepts can carry (control characters, a backslash), or None."""
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in name):
        return "file-name-control"
    return "file-name-backslash" if "\\" in name else None


def _uri(segments: list[str]) -> str:
    return "skill://" + "/".join(quote(s, safe="-._~!$&'()*+,;=:@") for s in segments)


def _frontmatter_rule(data: bytes, skill_path: list[str]) -> str | None:
    """The rule a SKILL.md breaks (Skill Format, name and description rules), or None."""
    try:
        fm = parse_skill_md(data).frontmatter
    except FrontmatterError as err:
        return err.rule
    if "name" not in fm:
        return "name-missing"
    if name_problem(fm["name"]) is not None:
        return "name-format"
    if fm["name"] != skill_path[-1]:
        return "name-mismatch"
    if "description" not in fm:
        return "description-missing"
    if description_problem(fm["description"]) is not None:
        return "description-format"
    return None


def expected_catalog(root: Path) -> Expected:
    """What serving `root` should publish, by the documented rules, from the naive walk."""
    real_root = os.path.realpath(root)
    ref = Reference(real_root)
    reference_walk(ref, real_root, "", frozenset({real_root}), [])
    skill_dirs = sorted({rel.rpartition("/")[0] for rel in ref.files if rel.rpartition("/")[2] == "SKILL.md"})
    base = [os.path.basename(real_root)] if "" in skill_dirs else []
    result = Expected({}, {}, set())
    for path, rule in ref.bad:
        if not any(_under(path, d) for d in skill_dirs):
            result.outside.add((_shown(path), rule))
    for d in skill_dirs:
        cut = len(d) + 1 if d else 0
        display = os.path.join(str(root), d) if d else str(root)
        skill_path = base + (d.split("/") if d else [])
        member_rels = [rel[cut:] for rel in ref.files if _under(rel, d)]
        if not all(map(_utf8, skill_path)):  # no URI can name the skill (issue 9: file-name-encoding)
            result.refused[d] = {(_shown(os.path.join(display, "SKILL.md")), "file-name-encoding")}
            continue
        bad_names = {(_shown(os.path.join(display, r)), "file-name-encoding") for r in member_rels if not _utf8(r)}
        if bad_names:
            result.refused[d] = bad_names
            continue
        folder_rule = next(filter(None, map(_name_rule, skill_path)), None)
        if folder_rule is not None:  # the skill's own folder, or one above it inside the root
            result.refused[d] = {(os.path.join(display, "SKILL.md"), folder_rule)}
            continue
        bad_names = {(os.path.join(display, terminal_safe(r)), _name_rule(r) or "") for r in member_rels}
        bad_names = {(path, rule) for path, rule in bad_names if rule}
        if bad_names:
            result.refused[d] = bad_names
            continue
        long_uris = {
            (os.path.join(display, r), "uri-too-long")
            for r in member_rels
            if len(_uri(skill_path + r.split("/"))) > MAX_URI_LENGTH
        }
        if long_uris:
            result.refused[d] = long_uris
            continue
        # A bad path is reported inside the skill; one at the skill's folder itself, at its SKILL.md.
        bad = {(_shown(os.path.join(display, p[cut:] or "SKILL.md")), r) for p, r in ref.bad if _under(p, d)}
        if bad:
            result.refused[d] = bad
            continue
        if not set(skill_path[0]) <= REG_NAME:
            result.refused[d] = {(os.path.join(display, "SKILL.md"), "path-authority")}
            continue
        members = sorted((rel[cut:], where) for rel, where in ref.files.items() if _under(rel, d))
        contents = {rel: Path(where).read_bytes() for rel, where in members}
        broken = _frontmatter_rule(contents["SKILL.md"], skill_path)
        if broken is not None:
            result.refused[d] = {(os.path.join(display, "SKILL.md"), broken)}
            continue
        order = sorted(contents, key=lambda rel: (rel != "SKILL.md", rel))
        manifest = [
            (
                _uri(skill_path + rel.split("/")),
                "sha256:" + hashlib.sha256(contents[rel]).hexdigest(),
                len(contents[rel]),
            )
            for rel in order
        ]
        result.served[_uri([*skill_path, "SKILL.md"])] = manifest
    return result


# ------------------------------------------------------------------------------------------- generated trees

SKILL_NAMES = ["alpha", "beta-2", "gamma", "x1"]
FOLDER_NAMES = [
    *SKILL_NAMES, "Bad", "a b", "é", "e\u0301", ".curated", "#dir", "%2e%2e", "?q", "d" * 200, "-x", "docs",
    "build", "node_modules", ".git", "__pycache__", "CVS", "日本", os.fsdecode(b"dir\xff"),
    "esc\x1bdir",
]  # fmt: skip
FILE_NAMES = [
    "a.md", "b.txt", "a b.md", "é.md", "日本.txt", ".hidden", "#x", "%41.md", "%2e%2e", "?q", "f" * 200, "a:b",
    "-x", "UPPER.MD", "x.tmp", "keep.tmp", "secret.md", ".DS_Store", "x.pyc", "._x", ".gitkeep", "Thumbs.db",
    "skill.md", "[x]", "a&b=c", "~", "'", "x.", "..x", "...", "\u202eevil.md", "zero\u200bwidth", ".skillwireignore",
    "tab\tname.md", "c1\x85.md", "back\\slash",
    os.fsdecode(b"bad\xff.md"), os.fsdecode(b"\xe9t\xe9.txt"), os.fsdecode(b"cut\xe2\x82.md"),  # not UTF-8
]  # fmt: skip
IGNORE_LINES = [
    "*.tmp", "!keep.tmp", "build/", "docs", "secret.md", "/a.md", "docs/*.md", "*.txt", "# comment", "", "alpha/",
    "gamma", "**/x1", "a b/", ".curated/", "[ab].md", "!b.txt", "*.md", "!SKILL.md", "node_modules/",
]  # fmt: skip


def _skill_md(variant: str, name: str) -> bytes:
    return {
        "valid": f"---\nname: {name}\ndescription: Does a thing\n---\n# {name}\n",
        "wrong-name": "---\nname: other-name\ndescription: Does a thing\n---\n",
        "no-description": f"---\nname: {name}\n---\n",
        "bad-yaml": f"---\nname: {name}\ndescription: a: b: c\n---\n",
        "no-frontmatter": "# just markdown\n",
        "too-deep": f"---\nname: {name}\ndescription: d\nx: {'[' * 80}{']' * 80}\n---\n",
        "bom-crlf": f"\ufeff---\r\nname: {name}\r\ndescription: Does a thing\r\n---\r\nbody\r\n",
        "not-utf8": f"---\nname: {name}\ndescription: caf\xe9\n---\n",
    }[variant].encode("latin-1" if variant == "not-utf8" else "utf-8", "surrogateescape")


Op = tuple[str, str, object]  # (kind, root-relative path, payload)
# What a step of a generated tree makes, repeated for weight.
KINDS = [
    *["skill"] * 3, *["dir"] * 2, *["file"] * 3, "skill_md", *["ignore"] * 2,
    "link_file", "link_dir", "link_out", "link_dangling", "link_self", "fifo",
]  # fmt: skip
VARIANTS = [
    *["valid"] * 6,
    "wrong-name",
    "no-description",
    "bad-yaml",
    "no-frontmatter",
    "too-deep",
    "bom-crlf",
    "not-utf8",
]


@st.composite
def trees(draw: st.DrawFn) -> list[Op]:
    """A small folder tree as a list of creation steps, each inside a folder made by an earlier step."""
    dirs: list[str] = [""]
    files: list[str] = []
    ops: list[Op] = []
    used = {""}
    if draw(st.integers(0, 9)) == 0:  # the root is itself a skill
        ops.append(("file", "SKILL.md", _skill_md("valid", "root")))
        used.add("SKILL.md")
        files.append("SKILL.md")
    for _ in range(draw(st.integers(4, 24))):
        parent = draw(st.sampled_from(dirs))
        kind = draw(st.sampled_from(KINDS))
        if kind == "skill":
            name = draw(st.sampled_from(SKILL_NAMES))
        elif kind == "dir":
            name = draw(st.sampled_from(FOLDER_NAMES))
        elif kind == "skill_md":
            name = "SKILL.md"
        elif kind == "ignore":
            name = ".skillwireignore"
        else:
            name = draw(st.sampled_from(FILE_NAMES))
        rel = _join(parent, name)
        if rel in used or (kind == "link_file" and not files):
            continue
        used.add(rel)
        if kind in ("skill", "dir"):
            dirs.append(rel)
            ops.append(("dir", rel, None))
            if kind == "skill":
                variant = draw(st.sampled_from(VARIANTS))
                ops.append(("file", rel + "/SKILL.md", _skill_md(variant, name)))
                used.add(rel + "/SKILL.md")
                files.append(rel + "/SKILL.md")
        elif kind == "skill_md":
            ops.append(("file", rel, _skill_md("valid", parent.rpartition("/")[2] or "root")))
            files.append(rel)
        elif kind == "file":
            ops.append(("file", rel, draw(st.binary(max_size=64))))
            files.append(rel)
        elif kind == "ignore":
            lines = draw(st.lists(st.sampled_from(IGNORE_LINES), max_size=4))
            ops.append(("file", rel, b"\xff\xfe" if draw(st.integers(0, 7)) == 0 else "\n".join(lines).encode()))
        elif kind == "link_file":
            ops.append(("link", rel, os.path.relpath(draw(st.sampled_from(files)), parent or ".")))
        elif kind == "link_dir":
            ops.append(("link", rel, os.path.relpath(draw(st.sampled_from(dirs)) or ".", parent or ".")))
        elif kind == "link_out":
            ops.append(("link", rel, draw(st.sampled_from(["OUTSIDE/secret.md", "OUTSIDE", "OUTSIDE/../OUTSIDE"]))))
        elif kind == "link_dangling":
            ops.append(("link", rel, "no/such/target"))
        elif kind == "link_self":
            ops.append(("link", rel, name))
        else:
            ops.append(("fifo", rel, None))
    return ops


def build(ops: list[Op], root: Path, outside: Path) -> None:
    """Make the tree of `ops` under `root`; OUTSIDE in a link target means the folder `outside`."""
    outside.mkdir()
    (outside / "secret.md").write_bytes(b"not for serving\n")
    root.mkdir()
    for kind, rel, payload in ops:
        path = root / rel
        if kind == "dir":
            path.mkdir()
        elif kind == "file":
            assert isinstance(payload, bytes)
            path.write_bytes(payload)
        elif kind == "fifo":
            os.mkfifo(path)
        else:
            assert isinstance(payload, str)
            target = payload.replace("OUTSIDE", str(outside)) if payload.startswith("OUTSIDE") else payload
            path.symlink_to(target)


def _refusal_matching(catalog: Catalog, refused: dict[str, set[tuple[str, str]]]) -> dict[str, str]:
    """Pair each skill refusal with a skill folder the reference refuses with that (path, rule); folder -> rule."""
    refusals = [(r.path, r.rule) for r in catalog.refusals if r.skill]
    assert len(refusals) == len(refused), f"refusals {refusals} but the reference refuses {sorted(refused)}"
    owner: dict[int, str] = {}

    def assign(folder: str, seen: set[int]) -> bool:  # augmenting paths: refusals of nested skills can look alike
        for i, pair in enumerate(refusals):
            if pair in refused[folder] and i not in seen:
                seen.add(i)
                if i not in owner or assign(owner[i], seen):
                    owner[i] = folder
                    return True
        return False

    for folder, fits in refused.items():
        assert assign(folder, set()), f"no refusal fits {folder!r}: expected one of {fits}, got {refusals}"
    return {folder: refusals[i][1] for i, folder in owner.items()}


def _skill(folder: str, variant: str = "valid") -> list[Op]:
    return [("dir", folder, None), ("file", folder + "/SKILL.md", _skill_md(variant, folder.rpartition("/")[2]))]


# Every rule at least once, whatever the generator draws: odd authorities, nesting, ignores, links, FIFOs.
EVERY_RULE: list[Op] = [
    ("dir", "a b", None), *_skill("a b/alpha"), *_skill("gamma"), *_skill("gamma/x1"),
    ("file", "gamma/x1/%41.md", b"x"), ("file", "gamma/.skillwireignore", b"*.tmp\n!keep.tmp\nbuild/\n"),
    ("file", "gamma/x.tmp", b"t"), ("file", "gamma/keep.tmp", b"k"), ("dir", "gamma/build", None),
    ("file", "gamma/build/a.md", b"b"), ("link", "gamma/link.md", "x1/%41.md"), ("link", "gamma/sub", "x1"),
    *_skill("alpha"), ("fifo", "alpha/pipe", None), *_skill("beta-2"), ("link", "beta-2/out", "OUTSIDE/secret.md"),
    *_skill("x1"), ("link", "x1/loop", "."), *_skill("docs", "wrong-name"), ("link", "docs/self", "self"),
    ("link", "dangling", "no/such/target"), ("fifo", "pipe", None), ("dir", "é", None), ("file", "é/a.md", b""),
    *_skill(".curated", "too-deep"), ("dir", ".git", None), *_skill(".git/beta-2"),
    *_skill("delta"), ("file", os.fsdecode(b"delta/bad\xff.md"), b"x"), ("dir", os.fsdecode(b"dir\xff"), None),
    *_skill(os.fsdecode(b"dir\xff/alpha")), ("file", os.fsdecode(b"\xe9t\xe9.txt"), b"outside every skill"),
    *_skill("epsilon"), ("fifo", "epsilon/.skillwireignore", None), *_skill("zeta"),
    ("link", "zeta/.skillwireignore", "../gamma/.skillwireignore"), ("link", os.fsdecode(b"lost\xff"), "nowhere"),
    *_skill("theta"), ("file", "theta/tab\tname.md", b"t"), *_skill("iota"), ("file", "iota/back\\slash", b"b"),
    ("dir", "esc\x1bdir", None), *_skill("esc\x1bdir/kappa"), ("link", "gamma/y.tmp", "no/such/target"),
    ("link", "alpha/.DS_Store", ".DS_Store"), *_skill("lam"), *(("dir", "lam/" + "/".join(["é" * 120] * i), None)
    for i in range(1, 7)), ("file", "lam/" + "/".join(["é" * 120] * 6) + "/deep.md", b"d"),
]  # fmt: skip
ROOT_IS_A_SKILL: list[Op] = [("file", "SKILL.md", _skill_md("valid", "root")), *_skill("alpha"), ("file", "a.md", b"a")]


@given(trees())
@example(EVERY_RULE)
@example(ROOT_IS_A_SKILL)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_scan_of_a_random_tree_equals_the_naive_reference_walk(tmp_path: Path, ops: list[Op]) -> None:
    """Skill Format, Resources, skillwire's link and ignore rules: served manifests, refusals and skipped paths
    of any tree (odd names, nested skills, links in, out, dangling and looping, FIFOs) match the reference."""
    where = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        root = where / "root"
        build(ops, root, where / "outside")
        expected = expected_catalog(root)
        catalog = FolderSource([root]).scan()  # within the deadline: a FIFO or a loop must not stall it
        served = {s.uri: [(f.uri, f.digest, f.size) for f in s.files] for s in catalog.skills}
        assert served == expected.served
        _refusal_matching(catalog, expected.refused)
        assert {(r.path, r.rule) for r in catalog.refusals if not r.skill} == expected.outside
        for skill in catalog.skills:
            for f in skill.files:
                try:
                    assert canonical_uri(f.uri) == f.uri
                except InvalidSkillUri as err:
                    raise AssertionError(f"{f.uri} is published but a read of it is refused: {err.reason}") from None
    finally:
        shutil.rmtree(where)


def _assert_every_published_uri_reads(where: Path) -> Catalog:
    """A file the server lists is one a client can read: its URI must pass canonical_uri unchanged."""
    catalog = FolderSource([where]).scan()
    for skill in catalog.skills:
        for f in skill.files:
            try:
                canonical = canonical_uri(f.uri)
            except InvalidSkillUri as err:
                raise AssertionError(f"{f.uri[:120]} is published but a read of it is refused: {err.reason}") from None
            assert canonical == f.uri
    return catalog


# Any name a Linux folder can hold (no "/", no NUL, at most 255 bytes), valid UTF-8.
ANY_NAME = st.text(st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=40).filter(
    lambda name: name not in (".", "..", "SKILL.md") and len(name.encode()) <= 255
)
ODD_NAMES = ["ok.md", "tab\tname.md", "esc\x1b[31m.md", "del\x7f", "nl\nname", "c1\x85.md", "back\\slash", "\\"]


# Names the built-in ignore rules drop (`.skillwireignore`, `.DS_Store`, `*.pyc`, ...) are another property's subject.
SERVED_NAME = ANY_NAME.filter(lambda name: not _builtin_ignored(name, False))


@given(st.lists(st.sampled_from(ODD_NAMES) | SERVED_NAME, unique=True, max_size=6))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_file_name_with_control_characters_is_never_published_unreadable(tmp_path: Path, names: list[str]) -> None:
    """Resource Mapping: every file a skill lists can be read, so a name the URI parser refuses (a control character,
    C0, DEL or C1, or a backslash) is not listed: its skill is refused for it, and any other name is served."""
    where = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        build([*_skill("alpha"), *(("file", f"alpha/{name}", b"x") for name in names)], where / "root", where / "out")
        catalog = _assert_every_published_uri_reads(where / "root")
        rules = {_name_rule(name) for name in names} - {None}
        if rules:
            assert not catalog.skills
            assert [r.rule for r in catalog.refusals] in [[rule] for rule in rules]
        else:
            assert [len(s.files) for s in catalog.skills] == [1 + len(names)], catalog.refusals
    finally:
        shutil.rmtree(where)


@given(st.integers(0, 7))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_file_whose_uri_is_too_long_to_read_is_never_published(tmp_path: Path, depth: int) -> None:
    """Resource Mapping: every file a skill lists can be read, so a path whose URI is over the limit is not listed."""
    where = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        folders = ["alpha/" + "/".join(["\u00e9" * 120] * (i + 1)) for i in range(depth)]
        ops: list[Op] = [*_skill("alpha"), *(("dir", d, None) for d in folders)]
        last = (folders[-1] if folders else "alpha") + "/last.md"
        build([*ops, ("file", last, b"x")], where / "root", where / "out")
        catalog = _assert_every_published_uri_reads(where / "root")
        if len(_uri(last.split("/"))) > MAX_URI_LENGTH:
            assert [(r.rule, r.path) for r in catalog.refusals] == [("uri-too-long", str(where / "root" / last))]
        else:
            assert len(catalog.skills) == 1, catalog.refusals
    finally:
        shutil.rmtree(where)


@given(st.sampled_from(["no/such/target", "SELF"]), st.sampled_from(["x.tmp", ".DS_Store", "y.pyc", "._z"]))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_an_ignored_broken_link_does_not_refuse_its_skill(tmp_path: Path, target: str, name: str) -> None:
    """skillwire rule (docs/sources/folder.md): what a .skillwireignore or the built-in list names is
    ignored, so a broken link so named costs nothing (it once refused its skill: link-dangles or unreadable)."""
    where = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        ops: list[Op] = [*_skill("alpha"), ("file", "alpha/.skillwireignore", b"*.tmp\n")]
        build([*ops, ("link", f"alpha/{name}", name if target == "SELF" else target)], where / "root", where / "out")
        catalog = FolderSource([where / "root"]).scan()
        assert [s.uri for s in catalog.skills] == ["skill://alpha/SKILL.md"], catalog.refusals
    finally:
        shutil.rmtree(where)
