"""File and folder names that are not UTF-8 (os.listdir hands them over with lone surrogates, PEP 383).

skillwire choice (issue 9, hole 1): such a name costs only the skill holding it, refused with the rule
`file-name-encoding` and the name shown escaped; outside every skill it is a skipped path; nothing published
(refusals, the digest cache) carries a lone surrogate. A digest cache from before names with control characters
were refused cannot publish one again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skillwire.core.catalog import Catalog
from skillwire.core.uri import canonical_uri
from skillwire.sources.folder import source as filesystem
from skillwire.sources.folder.source import FolderSource
from tests.support.digest_cache_file import read_cache, write_cache


@pytest.fixture(autouse=True)
def trust_fresh_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filesystem, "RACY_NS", 0)


def raw(path: Path, name: bytes) -> bytes:
    return os.fsencode(path) + b"/" + name


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    for name in ("alpha", "beta"):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {name}\n---\n")
    return root


def published_text(catalog: Catalog) -> str:
    """Everything a catalog publishes, as strict UTF-8 (raises on a lone surrogate)."""
    text = json.dumps(
        [[s.to_entry() for s in catalog.skills], [(r.path, r.rule, r.message) for r in catalog.refusals]],
        ensure_ascii=False,
    )
    text.encode("utf-8")
    return text


def test_a_name_that_is_not_utf8_in_a_skill_refuses_only_that_skill(tmp_path: Path) -> None:
    """`bad\\xff.md` in alpha raised UnicodeEncodeError while building URIs: no catalog at all."""
    root = make_root(tmp_path)
    open(raw(root / "alpha", b"bad\xff.md"), "wb").close()
    open(raw(root / "beta", b"cache\xff.pyc"), "wb").close()  # ignored (built-in rules) like any other name
    catalog = FolderSource([root]).scan()
    assert [s.uri for s in catalog.skills] == ["skill://beta/SKILL.md"]
    [refusal] = catalog.refusals
    assert (refusal.rule, refusal.skill) == ("file-name-encoding", True)
    assert refusal.path.endswith("alpha/bad\\xff.md")
    assert "'bad\\xff.md'" in refusal.message
    assert "rename it to valid UTF-8" in refusal.message
    published_text(catalog)


def test_a_folder_whose_name_is_not_utf8_refuses_its_skill_and_nothing_below_is_read(
    tmp_path: Path, opened: list[str]
) -> None:
    """Inside a skill it refuses that skill; as a skill folder it refuses that skill. No file below it is opened
    (the file watcher stops on any event naming such a path)."""
    root = make_root(tmp_path)
    os.mkdir(raw(root / "beta", b"sub\xfe"))
    open(raw(root / "beta", b"sub\xfe/notes.md"), "wb").close()
    folder = raw(root, b"gamma\xfe")
    os.mkdir(folder)
    with open(folder + b"/SKILL.md", "wb") as fh:
        fh.write(b"---\nname: gamma\ndescription: Skill gamma\n---\n")
    catalog = FolderSource([root]).scan()
    assert [s.uri for s in catalog.skills] == ["skill://alpha/SKILL.md"]
    found = sorted((r.rule, r.skill, r.path.removeprefix(str(root) + "/")) for r in catalog.refusals)
    assert found == [
        ("file-name-encoding", True, "beta/sub\\xfe/notes.md"),
        ("file-name-encoding", True, "gamma\\xfe/SKILL.md"),
    ]
    assert not [p for p in opened if not p.isascii()]
    published_text(catalog)


def test_a_name_that_is_not_utf8_outside_every_skill_is_ignored(tmp_path: Path) -> None:
    """Outside every skill nothing is indexed: such names are reported, escaped, as skipped paths (no skill lost)."""
    root = make_root(tmp_path)
    open(raw(root, b"notes\xff.txt"), "wb").close()
    os.symlink("/nowhere", raw(root, b"dangling\xff"))
    catalog = FolderSource([root]).scan()
    assert len(catalog) == 2
    found = sorted((r.path.rsplit("/", 1)[-1], r.rule, r.skill) for r in catalog.refusals)
    assert found == [("dangling\\xff", "file-name-encoding", False), ("notes\\xff.txt", "file-name-encoding", False)]
    published_text(catalog)


def test_a_name_that_is_not_utf8_survives_the_digest_cache(tmp_path: Path) -> None:
    """The cache is written, restored and rescanned with such a name present; it never carries a surrogate."""
    root = make_root(tmp_path)
    open(raw(root / "alpha", b"bad\xff.md"), "wb").close()
    cache = tmp_path / "digests.json"
    cold = FolderSource([root], digest_cache=cache).scan()
    header, snapshot = read_cache(cache)  # decoding checks every name is UTF-8
    assert "\\udc" not in json.dumps([header, [(r.path, r.message) for r in snapshot.refusals]])
    source = FolderSource([root], digest_cache=cache)
    restored = source.restore()
    assert restored is not None
    assert [s.uri for s in restored.skills] == ["skill://beta/SKILL.md"]
    assert [r.rule for r in restored.refusals] == ["file-name-encoding"]
    warm = source.scan(1)
    assert published_text(warm) == published_text(cold)
    os.unlink(raw(root / "alpha", b"bad\xff.md"))  # renamed away: the skill comes back
    assert [s.uri for s in source.update([str(root / "alpha")], generation=2).skills] == [
        "skill://alpha/SKILL.md",
        "skill://beta/SKILL.md",
    ]


def test_a_digest_cache_from_before_cannot_publish_a_name_no_read_can_name(tmp_path: Path) -> None:
    """A cache written before names with control characters were refused listed alpha/tab\\tname.md; restoring it
    must not publish that unreadable URI again until the scan catches up."""
    root = make_root(tmp_path)
    (root / "alpha" / "tabname.md").write_bytes(b"t")
    cache = tmp_path / "digests.json"
    FolderSource([root], digest_cache=cache).scan()
    (root / "alpha" / "tabname.md").rename(root / "alpha" / "tab\tname.md")
    header, snapshot = read_cache(cache)
    for part in snapshot.per_root:
        for row in part.rows if part is not None else []:
            row.rels[:] = [r.replace("tabname.md", "tab\tname.md") for r in row.rels]
    write_cache(cache, header, snapshot)
    source = FolderSource([root], digest_cache=cache)
    restored = source.restore()
    for skill in restored.skills if restored is not None else []:
        for f in skill.files:
            assert canonical_uri(f.uri) == f.uri
    scanned = source.scan(1)
    assert [s.uri for s in scanned.skills] == ["skill://beta/SKILL.md"]
    assert [r.rule for r in scanned.refusals] == ["file-name-control"]
