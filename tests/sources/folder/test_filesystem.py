"""Building a catalog from folders: discovery, manifests, refusals (Skill Format, Resources, Limits)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from skillwire.core.catalog import Catalog, ServedFile
from skillwire.core.manifest import MAX_RESOURCES
from skillwire.sources.folder.source import FolderSource


def write_skill(folder: Path, name: str | None = None, description: str = "Does a thing", extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    skill_name = name if name is not None else folder.name
    (folder / "SKILL.md").write_bytes(
        f"---\nname: {skill_name}\ndescription: {description}\n{extra}---\n\n# {skill_name}\n".encode()
    )
    return folder


def scan(*roots: Path) -> Catalog:
    return FolderSource(roots).scan()


def refusal_rules(catalog: Catalog) -> dict[str, str]:
    return {r.path: r.rule for r in catalog.refusals}


def test_finds_skills_at_any_depth_and_in_hidden_folders(tmp_path: Path) -> None:
    """skillwire choice: hidden folders are walked (collections keep skills under .curated/)."""
    write_skill(tmp_path / "alpha")
    write_skill(tmp_path / "acme" / "billing" / "refunds")
    write_skill(tmp_path / ".curated" / "beta")
    write_skill(tmp_path / ".gemini" / "skills" / "gamma")
    catalog = scan(tmp_path)
    assert [s.uri for s in catalog.skills] == [
        "skill://.curated/beta/SKILL.md",
        "skill://.gemini/skills/gamma/SKILL.md",
        "skill://acme/billing/refunds/SKILL.md",
        "skill://alpha/SKILL.md",
    ]
    assert catalog.refusals == ()


def test_manifest_hashes_raw_bytes_crlf_and_bom_kept(tmp_path: Path) -> None:
    """Spec MUST: digest and size cover the file's raw bytes (CRLF and BOM are not normalised)."""
    skill = write_skill(tmp_path / "alpha")
    raw = b"\xef\xbb\xbfline one\r\nline two\r\n"
    (skill / "notes.md").write_bytes(raw)
    (skill / "blob.bin").write_bytes(bytes(range(256)))
    entry = scan(tmp_path).skills[0].to_entry()
    by_uri = {r["uri"]: r for r in entry["resources"]}
    assert by_uri["skill://alpha/notes.md"] == {
        "uri": "skill://alpha/notes.md",
        "digest": "sha256:" + hashlib.sha256(raw).hexdigest(),
        "size": len(raw),
    }
    assert by_uri["skill://alpha/blob.bin"]["size"] == 256
    assert entry["resources"][0]["uri"] == "skill://alpha/SKILL.md"  # SKILL.md first, then path order
    assert [r["uri"] for r in entry["resources"][1:]] == ["skill://alpha/blob.bin", "skill://alpha/notes.md"]


def test_nested_skill_files_are_in_both_manifests(tmp_path: Path) -> None:
    """Spec MUST: completeness extends to nested skills; the nested skill is also listed on its own."""
    outer = write_skill(tmp_path / "outer")
    inner = write_skill(outer / "parts" / "inner")
    (inner / "ref.md").write_text("x")
    catalog = scan(tmp_path)
    uris = {s.uri: [f.uri for f in s.files] for s in catalog.skills}
    assert uris["skill://outer/parts/inner/SKILL.md"] == [
        "skill://outer/parts/inner/SKILL.md",
        "skill://outer/parts/inner/ref.md",
    ]
    assert "skill://outer/parts/inner/ref.md" in uris["skill://outer/SKILL.md"]
    assert "skill://outer/parts/inner/SKILL.md" in uris["skill://outer/SKILL.md"]


def test_root_that_is_itself_a_skill_uses_its_folder_name(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "solo")
    (skill / "a.txt").write_text("a")
    catalog = scan(skill)
    assert [s.uri for s in catalog.skills] == ["skill://solo/SKILL.md"]


@pytest.mark.parametrize(
    ("name", "description", "rule"),
    [
        ("Bad_Name", "ok", "name-format"),
        ("other", "ok", "name-mismatch"),
        ("alpha", "''", "description-format"),
        ("alpha", "'" + "x" * 1025 + "'", "description-format"),
    ],
)
def test_rule_breaking_skill_is_refused_and_others_served(
    tmp_path: Path, name: str, description: str, rule: str
) -> None:
    """skillwire choice: one bad skill never stops the others; the refusal names file, line and rule."""
    write_skill(tmp_path / "alpha", name=name, description=description)
    write_skill(tmp_path / "good")
    catalog = scan(tmp_path)
    assert [s.name for s in catalog.skills] == ["good"]
    [refusal] = catalog.refusals
    assert refusal.rule == rule
    assert refusal.path.endswith(os.path.join("alpha", "SKILL.md"))
    assert refusal.skill


def test_missing_frontmatter_and_bad_yaml_are_refused(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "SKILL.md").write_text("# No frontmatter here\n")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "SKILL.md").write_text("---\nname: broken\ndescription: a: b: c\n---\n")
    (tmp_path / "dupe").mkdir()
    (tmp_path / "dupe" / "SKILL.md").write_text("---\nname: dupe\nname: dupe\ndescription: x\n---\n")
    write_skill(tmp_path / "good")
    catalog = scan(tmp_path)
    assert [s.name for s in catalog.skills] == ["good"]
    rules = {Path(r.path).parent.name: r for r in catalog.refusals}
    assert rules["plain"].rule == "frontmatter-missing"
    assert rules["broken"].rule == "yaml-syntax"
    assert rules["broken"].line == 3
    assert rules["dupe"].rule == "yaml-duplicate-key"


def test_first_segment_must_be_a_reg_name(tmp_path: Path) -> None:
    """Spec SHOULD (enforced): the first skill-path segment is the URI authority."""
    write_skill(tmp_path / "My Skills" / "alpha")
    catalog = scan(tmp_path)
    assert catalog.skills == ()
    assert [r.rule for r in catalog.refusals] == ["path-authority"]


def test_skill_over_file_limit_is_refused(tmp_path: Path) -> None:
    """Spec SHOULD NOT serve over 512 resources (enforced)."""
    skill = write_skill(tmp_path / "big")
    for i in range(MAX_RESOURCES):  # plus SKILL.md = 513
        (skill / f"f{i:03}.txt").write_text("x")
    small = write_skill(tmp_path / "small")
    for i in range(MAX_RESOURCES - 1):  # plus SKILL.md = 512: at the limit, served
        (small / f"f{i:03}.txt").write_text("x")
    catalog = scan(tmp_path)
    assert [s.name for s in catalog.skills] == ["small"]
    assert [r.rule for r in catalog.refusals] == ["limit-files"]


def test_skill_over_size_limit_is_refused(tmp_path: Path) -> None:
    """Spec SHOULD NOT serve over 16 MiB (enforced); exactly 16 MiB is served."""
    big = write_skill(tmp_path / "big")
    size_md = (big / "SKILL.md").stat().st_size
    with open(big / "data.bin", "wb") as fh:
        fh.truncate(16 * 1024 * 1024 - size_md + 1)
    edge = write_skill(tmp_path / "edge")
    with open(edge / "data.bin", "wb") as fh:
        fh.truncate(16 * 1024 * 1024 - (edge / "SKILL.md").stat().st_size)
    catalog = scan(tmp_path)
    assert [s.name for s in catalog.skills] == ["edge"]
    assert [r.rule for r in catalog.refusals] == ["limit-size"]


def test_vcs_caches_and_os_junk_are_ignored(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "alpha")
    for junk in [".git/config", "__pycache__/m.cpython-311.pyc", "x.pyc", ".DS_Store", "._notes.md", "Thumbs.db"]:
        (skill / junk).parent.mkdir(parents=True, exist_ok=True)
        (skill / junk).write_text("junk")
    (skill / "kept.md").write_text("kept")
    [served] = scan(tmp_path).skills
    assert [f.rel_path for f in served.files] == ["SKILL.md", "kept.md"]


def test_skillwireignore_uses_gitignore_rules(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "alpha")
    (tmp_path / ".skillwireignore").write_text("*.log\nbuild/\n")
    (skill / ".skillwireignore").write_text("drafts/*\n!drafts/keep.md\n")
    for rel in ["a.log", "build/out.txt", "drafts/x.md", "drafts/keep.md", "docs/a.md"]:
        (skill / rel).parent.mkdir(parents=True, exist_ok=True)
        (skill / rel).write_text(rel)
    [served] = scan(tmp_path).skills
    assert [f.rel_path for f in served.files] == ["SKILL.md", "docs/a.md", "drafts/keep.md"]


def test_ignored_skill_md_means_no_skill(tmp_path: Path) -> None:
    write_skill(tmp_path / "alpha")
    write_skill(tmp_path / "wip" / "beta")
    (tmp_path / ".skillwireignore").write_text("wip/\n")
    assert [s.name for s in scan(tmp_path).skills] == ["alpha"]


def test_symlink_inside_root_is_followed(tmp_path: Path) -> None:
    """skillwire choice: links whose resolved target stays inside the root are served as files."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "common.md").write_text("common")
    skill = write_skill(tmp_path / "alpha")
    (skill / "common.md").symlink_to(shared / "common.md")
    (tmp_path / "alias").symlink_to(skill, target_is_directory=True)
    catalog = scan(tmp_path)
    by_name = {s.uri: s for s in catalog.skills}
    assert [f.rel_path for f in by_name["skill://alpha/SKILL.md"].files] == ["SKILL.md", "common.md"]
    # A folder link to a skill publishes it under the link's path too; it fails the name rule there.
    assert any(r.rule == "name-mismatch" for r in catalog.refusals)


def test_symlink_leaving_root_refuses_the_skill(tmp_path: Path) -> None:
    """skillwire choice: a skill with a link leaving the root is refused whole (its manifest could not be complete)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    root = tmp_path / "root"
    skill = write_skill(root / "alpha")
    (skill / "leak.txt").symlink_to(outside / "secret.txt")
    write_skill(root / "good")
    catalog = scan(root)
    assert [s.name for s in catalog.skills] == ["good"]
    [refusal] = catalog.refusals
    assert refusal.rule == "link-escapes"
    assert all(b"secret" not in (f.content.read(100) or b"") for s in catalog.skills for f in _served(catalog, s.uri))


def test_dangling_links_are_refused(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "alpha")
    (skill / "gone.md").symlink_to(tmp_path / "missing.md")
    (tmp_path / "beta").mkdir()
    (tmp_path / "beta" / "SKILL.md").symlink_to(tmp_path / "nowhere.md")
    (tmp_path / "stray-link").symlink_to(tmp_path / "nothing")
    write_skill(tmp_path / "good")
    catalog = scan(tmp_path)
    assert [s.name for s in catalog.skills] == ["good"]
    rules = sorted((r.rule, r.skill) for r in catalog.refusals)
    assert rules == [("link-dangles", False), ("link-dangles", False), ("link-dangles", True)]


def test_symlink_loop_does_not_hang(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "alpha")
    (skill / "loop").symlink_to(skill, target_is_directory=True)
    catalog = scan(tmp_path)
    assert [r.rule for r in catalog.refusals] == ["link-loop"]


def test_same_skill_path_from_two_roots_is_refused_once(tmp_path: Path) -> None:
    write_skill(tmp_path / "one" / "alpha")
    write_skill(tmp_path / "two" / "alpha")
    catalog = scan(tmp_path / "one", tmp_path / "two")
    assert [s.uri for s in catalog.skills] == ["skill://alpha/SKILL.md"]
    assert [r.rule for r in catalog.refusals] == ["duplicate-uri"]


def test_missing_root_is_reported(tmp_path: Path) -> None:
    write_skill(tmp_path / "alpha")
    catalog = scan(tmp_path, tmp_path / "nope")
    assert [s.name for s in catalog.skills] == ["alpha"]
    assert [r.rule for r in catalog.refusals] == ["root-missing"]


def test_unknown_extension_text_is_text_plain(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "alpha")
    (skill / "NOTES").write_text("hello")
    (skill / "data.xyz").write_bytes(b"\x00\x01")
    [served] = scan(tmp_path).skills
    mimes = {f.rel_path: f.mime_type for f in served.files}
    assert mimes == {"SKILL.md": "text/markdown", "NOTES": "text/plain", "data.xyz": "application/octet-stream"}


def _served(catalog: Catalog, skill_uri: str) -> list[ServedFile]:
    skill = catalog.skill(skill_uri)
    assert skill is not None
    out: list[ServedFile] = []
    for f in skill.files:
        served = catalog.file(f.uri)
        assert served is not None
        out.append(served)
    return out


def test_empty_folders_and_folders_of_ignored_files_are_recorded_but_ignored_folders_are_not(tmp_path: Path) -> None:
    """skillwire choice (Directory Resources): a folder in a skill is a directory whatever it holds, unless ignored."""
    skill = write_skill(tmp_path / "acme" / "pdf")
    (skill / "drafts").mkdir()
    (skill / "cache" / "__pycache__").mkdir(parents=True)
    (skill / "cache" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (skill / "deep" / "er" / "est").mkdir(parents=True)
    (skill / "scripts").mkdir()
    (skill / "scripts" / "run.py").write_text("print(1)\n")
    (skill / "scripts" / "tmp").mkdir()
    (skill / "build").mkdir()
    (skill / ".skillwireignore").write_text("build/\n")
    (tmp_path / "acme" / "empty-beside").mkdir()  # outside every skill: nothing to serve
    catalog = scan(tmp_path)
    served = catalog.skill("skill://acme/pdf/SKILL.md")
    assert served is not None
    assert served.folders == ("cache", "deep/er/est", "drafts", "scripts/tmp")
    assert [f.rel_path for f in served.files] == ["SKILL.md", "scripts/run.py"]
    assert catalog.children_page("skill://acme/pdf/cache", None, 10).items == ()
    assert not catalog.is_directory("skill://acme/pdf/build")
    assert not catalog.is_directory("skill://acme/empty-beside")


def test_an_empty_folder_added_later_is_seen_by_changed_and_update(tmp_path: Path) -> None:
    """A directory read re-checks the skill's folder (`changed`): a new empty folder must count as a change."""
    skill = write_skill(tmp_path / "pdf")
    source = FolderSource([tmp_path])
    source.scan()
    assert not source.changed("skill://pdf/SKILL.md")
    (skill / "new").mkdir()
    assert source.changed("skill://pdf/SKILL.md")
    catalog = source.update([str(skill / "new")], generation=1)
    assert catalog.is_directory("skill://pdf/new")
    assert not source.changed("skill://pdf/SKILL.md")


def test_empty_folders_survive_a_restart_from_the_digest_cache(tmp_path: Path) -> None:
    """The warm start (`restore`) publishes the same directories a scan does."""
    root, cache = tmp_path / "skills", tmp_path / "digests.json"
    skill = write_skill(root / "pdf")
    (skill / "templates" / "empty").mkdir(parents=True)
    scanned = FolderSource([root], digest_cache=cache).scan()
    restored = FolderSource([root], digest_cache=cache).restore()
    assert restored is not None
    assert restored.skills == scanned.skills
    assert restored.children_page("skill://pdf/templates", None, 10).items == (
        scanned.children_page("skill://pdf/templates", None, 10).items
    )
    assert restored.is_directory("skill://pdf/templates/empty")
