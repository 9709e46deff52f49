"""The shared catalog builder (skillwire choice, issue 20): what `build_catalog` and `CatalogBuilder` do with what a
source gives them, beyond the rules every source is held to by the contract suite."""

from __future__ import annotations

import pytest

from skillwire.core.digest import sha256_digest
from skillwire.sources import CatalogBuilder, GeneratedSkill, Refusal, SourceFile, build_catalog
from tests.sources.contract.cases import skill_md


def test_a_source_file_of_bytes_knows_its_size_digest_type_and_bytes() -> None:
    """`SourceFile.of_bytes` works out what a manifest lists from the bytes, and reads them back."""
    f = SourceFile.of_bytes("pdf/forms/a.bin", b"\x00\x01\x02")
    assert (f.size, f.digest, f.mime_type) == (3, sha256_digest(b"\x00\x01\x02"), "application/octet-stream")
    assert f.content.read(1) == b"\x00\x01"
    assert SourceFile.of_bytes("pdf/notes", b"plain text\n").mime_type == "text/plain"


def test_a_path_no_uri_can_name_is_refused_and_refuses_the_skill_holding_it() -> None:
    """An archive's crafted member ("pdf/../x", "/etc/x") is never served: inside a skill folder it refuses the
    skill, as a folder's bad path does; elsewhere it is only reported."""
    files = [
        SourceFile.of_bytes("pdf/SKILL.md", skill_md("pdf")),
        SourceFile.of_bytes("pdf/../../x", b"x"),
        SourceFile.of_bytes("ok/SKILL.md", skill_md("ok")),
        SourceFile.of_bytes("/etc/passwd", b"root"),
        SourceFile.of_bytes("ok//twice", b"t"),
    ]
    catalog = build_catalog(files, label="arc", root_name="skills")
    assert [s.name for s in catalog.skills] == []
    assert sorted((r.path, r.rule, r.skill) for r in catalog.refusals) == [
        ("arc//etc/passwd", "path-invalid", False),
        ("arc/ok//twice", "path-invalid", True),
        ("arc/pdf/../../x", "path-invalid", True),
    ]


def test_a_file_that_is_also_a_folder_is_refused() -> None:
    """A tar or zip can hold `notes` and `notes/a.md` both: no URI names the file alone, so it refuses its skill
    (and the same files elsewhere serve on)."""
    files = {
        "pdf/SKILL.md": skill_md("pdf"),
        "pdf/notes": b"a file",
        "pdf/notes-2": b"beside it",
        "pdf/notes/a.md": b"inside",
        "ok/SKILL.md": skill_md("ok"),
    }
    catalog = build_catalog([SourceFile.of_bytes(p, d) for p, d in files.items()], label="arc", root_name="skills")
    assert [s.name for s in catalog.skills] == ["ok"]
    assert [(r.path, r.rule, r.skill) for r in catalog.refusals] == [("arc/pdf/notes", "path-invalid", True)]


def test_a_path_given_twice_is_the_sources_mistake() -> None:
    """Two files at one path cannot both be served: a source decides which (a tar's later copy), not the builder."""
    files = [SourceFile.of_bytes("pdf/SKILL.md", skill_md("pdf")), SourceFile.of_bytes("pdf/SKILL.md", b"")]
    with pytest.raises(ValueError, match="given twice"):
        build_catalog(files, label="arc", root_name="skills")


def test_refusals_name_paths_the_way_the_source_does() -> None:
    """`at` says how the source names a path (git: `repo@main:path`); problems outside every skill are reported
    with it too, and refuse nothing."""
    files = [
        SourceFile.of_bytes("bad/SKILL.md", skill_md("other")),
        SourceFile.of_bytes("pdf/SKILL.md", skill_md("pdf")),
    ]
    catalog = build_catalog(
        files,
        label="repo",
        root_name="repo",
        problems=[Refusal("pdf/link", "link-dangles", "points to nothing"), Refusal("x/y", "unreadable", "no")],
        at=lambda path: f"repo@main:{path}",
    )
    assert catalog.skills == ()
    assert [(r.path, r.rule, r.skill) for r in catalog.refusals] == [
        ("repo@main:bad/SKILL.md", "name-mismatch", True),
        ("repo@main:pdf/link", "link-dangles", True),
        ("repo@main:x/y", "unreadable", False),
    ]


def test_a_catalog_builder_keeps_the_first_skill_at_a_path_and_refuses_the_next() -> None:
    """Which of two skills at one path is served depends only on the order the source gives them in."""
    first, second = GeneratedSkill("pdf", "One.", "# one\n"), GeneratedSkill("pdf", "Two.", "# two\n")
    builder = CatalogBuilder()
    assert builder.add(first.skill, {}, where="gen/pdf")
    assert not builder.add(second.skill, {}, where="gen/pdf (second)")
    catalog = builder.build(generation=7)
    assert [s.frontmatter["description"] for s in catalog.skills] == ["One."]
    assert [(r.path, r.rule) for r in catalog.refusals] == [("gen/pdf (second)", "duplicate-path")]
    assert catalog.generation == 7
