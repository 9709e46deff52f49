"""The source contract (skillwire choice, issue 12): every source kind gives the same skills, refusals, bytes,
digests and directory reads for the same files. Each kind is made by `tests.support.source_makers.MAKERS`; the
folder source is the reference the rest of the suite pins, and a few expectations are spelled out here too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillwire.core.catalog import Catalog
from skillwire.core.digest import sha256_digest
from skillwire.core.mime import DIRECTORY_MIME_TYPE
from skillwire.sources.port import SkillSource
from tests.sources.contract.cases import CASES
from tests.support.source_makers import MAKERS, Made

KINDS = sorted(MAKERS)


def observe(made: Made) -> dict[str, Any]:
    """What a client and a reader can observe of a source: entries, refusals, bytes and directories."""
    catalog = made.source.scan()
    cut = len(made.where) + 1
    return {
        "entries": [s.to_entry() for s in catalog.skills],
        "mime": {f.uri: f.mime_type for s in catalog.skills for f in s.files},
        "refusals": sorted((r.path[cut:], r.rule, r.skill) for r in catalog.refusals),
        "bytes": {s.file.uri: s.content.read(s.file.size) for s in catalog.files_page(None, 10_000).items},
        "directories": directories(catalog),
    }


def directories(catalog: Catalog) -> dict[str, list[tuple[str, str, str, bool]]]:
    """Every directory read reachable from each skill's root, with its children."""
    out: dict[str, list[tuple[str, str, str, bool]]] = {}
    todo = [s.root_uri for s in catalog.skills]
    while todo:
        uri = todo.pop()
        if uri in out:
            continue
        kids = catalog.children_page(uri, None, 10_000).items
        out[uri] = [(k.uri, k.name, k.mime_type, k.is_directory) for k in kids]
        todo.extend(k.uri for k in kids if k.is_directory)
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The folder source's observation of every case."""
    return {
        case: observe(MAKERS["folder"](files, tmp_path_factory.mktemp(f"ref-{case}"))) for case, files in CASES.items()
    }


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_source_kind_serves_the_same_skills_refusals_bytes_and_directories(
    kind: str, case: str, reference: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    """The same files give the same observable catalog from every kind of source."""
    assert observe(MAKERS[kind](CASES[case], tmp_path)) == reference[case]


@pytest.mark.parametrize("kind", KINDS)
def test_served_bytes_are_the_stored_bytes_and_match_their_digests(kind: str, tmp_path: Path) -> None:
    """Bytes are served as stored (CRLF, BOM, binary) and hash to the digest the manifest lists."""
    files = CASES["served"]
    catalog = MAKERS[kind](files, tmp_path).source.scan()
    served = catalog.files_page(None, 10_000).items
    assert served
    for item in served:
        data = item.content.read(item.file.size)
        assert data is not None
        assert sha256_digest(data) == item.file.digest
        assert len(data) == item.file.size
    crlf = catalog.file("skill://pdf/templates/invoice.md")
    assert crlf is not None
    assert crlf.content.read(100) == files["pdf/templates/invoice.md"]


@pytest.mark.parametrize("kind", KINDS)
def test_expected_skills_and_refusal_rules(kind: str, tmp_path: Path) -> None:
    """The rules themselves, spelled out: which skills are served and why the others are refused."""
    served = MAKERS[kind](CASES["served"], tmp_path / "a").source.scan()
    assert [s.uri for s in served.skills] == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://pdf/SKILL.md",
        "skill://review/SKILL.md",
        "skill://review/security/SKILL.md",
        "skill://unicode/SKILL.md",
    ]
    review = served.skill("skill://review/SKILL.md")
    assert review is not None
    assert "skill://review/security/checklist.md" in {f.uri for f in review.files}
    refused = MAKERS[kind](CASES["refused"], tmp_path / "b").source.scan()
    assert [s.name for s in refused.skills] == ["ok"]
    assert sorted(r.rule for r in refused.refusals) == sorted(
        [
            "frontmatter-missing",
            "name-mismatch",
            "name-format",
            "path-authority",
            "description-missing",
            "yaml-syntax",
            "path-authority",
            "license-format",
            "file-name-control",
            "file-name-backslash",
        ]
    )
    ignored = MAKERS[kind](CASES["ignored"], tmp_path / "c").source.scan()
    assert [s.name for s in ignored.skills] == ["kept", "tidy"]
    tidy = ignored.skill("skill://tidy/SKILL.md")
    assert tidy is not None
    assert [f.rel_path for f in tidy.files] == ["SKILL.md", ".hidden/visible.md", "keep.tmp"]
    limits = MAKERS[kind](CASES["limits"], tmp_path / "d").source.scan()
    assert [s.name for s in limits.skills] == ["fits"]
    assert [r.rule for r in limits.refusals] == ["limit-files"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_skill_nested_in_a_root_skill_is_served_under_the_root_skills_path(kind: str, tmp_path: Path) -> None:
    """skillwire choice (issue 20): the root skill lists every file under it, so a skill nested in it is served at
    a path inside the root skill's (as a folder always served it), never at a second URI for the same file."""
    catalog = MAKERS[kind](CASES["root"], tmp_path).source.scan()
    assert [s.uri for s in catalog.skills] == ["skill://skills/SKILL.md", "skill://skills/sub/SKILL.md"]
    root = catalog.skill("skill://skills/SKILL.md")
    assert root is not None
    assert "skill://skills/sub/x.md" in {f.uri for f in root.files}


@pytest.mark.parametrize("kind", KINDS)
def test_a_directory_read_lists_subfolders_as_directories(kind: str, tmp_path: Path) -> None:
    """Directory reads list folders (inode/directory) and files, as the spec's directory resources."""
    catalog = MAKERS[kind](CASES["served"], tmp_path).source.scan()
    kids = catalog.children_page("skill://pdf", None, 100).items
    assert [(k.name, k.is_directory) for k in kids] == [
        ("SKILL.md", False),
        ("blob", False),
        ("bom.md", False),
        ("notes", False),
        ("scripts", True),
        ("templates", True),
    ]
    assert {k.mime_type for k in kids if k.is_directory} == {DIRECTORY_MIME_TYPE}


@pytest.mark.parametrize("kind", KINDS)
def test_empty_folders_and_folders_of_ignored_files_are_directories_with_no_children(kind: str, tmp_path: Path) -> None:
    """Spec MUST: "An empty directory yields an empty resources array"; skillwire choice: a folder in a skill is a
    directory whatever it holds, unless ignored (every source records its empty branches as `Skill.folders`)."""
    catalog = MAKERS[kind](CASES["folders"], tmp_path).source.scan()
    pdf, nested = catalog.skill("skill://pdf/SKILL.md"), catalog.skill("skill://pdf/nested/SKILL.md")
    assert pdf is not None
    assert nested is not None
    assert pdf.folders == ("deep/er/est", "empty", "ignored-only", "nested/drafts", "scripts/spare")
    assert nested.folders == ("drafts",)
    for empty in (
        "skill://pdf/empty",
        "skill://pdf/ignored-only",
        "skill://pdf/deep/er/est",
        "skill://pdf/nested/drafts",
    ):
        assert catalog.is_directory(empty), empty
        assert catalog.children_page(empty, None, 10).items == ()
    assert [k.name for k in catalog.children_page("skill://pdf/scripts", None, 10).items] == ["run.py", "spare"]
    assert not catalog.is_directory("skill://pdf/build")


@pytest.mark.parametrize("kind", KINDS)
def test_a_source_has_a_label_for_messages(kind: str, tmp_path: Path) -> None:
    """Every source names itself for messages (and may say what revision it serves)."""
    source: SkillSource = MAKERS[kind](CASES["served"], tmp_path).source
    assert source.label
    assert source.revision is None or isinstance(source.revision, str)
