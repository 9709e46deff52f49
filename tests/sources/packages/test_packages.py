"""Skills in installed distributions (`PackageSource`): found through entry points without running any of their
code, read from real wheels (zip imports) and unpacked installs, and a hostile distribution refuses only its own
skills. The contract suite (tests/sources/contract) checks they serve what a folder serves; the HTTP test through a
real venv is tests/server/test_packages_served.py."""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from importlib.resources.abc import Traversable
from pathlib import Path

import pytest

from skillwire.core.errors import SpecError
from skillwire.sources.packages.roots import PackageRoot, package_roots
from skillwire.sources.packages.source import PROBLEM_RULE, PackageSource
from skillwire.sources.packages.tree import TreeProblem, list_tree
from skillwire.sources.port import SourceOptions
from skillwire.sources.spec import open_sources
from tests.support.wheels import build_wheel, package_files


def skill_md(name: str) -> bytes:
    return f"---\nname: {name}\ndescription: Does {name} things.\n---\n\n# {name}\n".encode()


def wheel_of(
    where: Path,
    name: str,
    skills: Mapping[str, bytes],
    *,
    files: Mapping[str, bytes] | None = None,
    entry_points: Mapping[str, str] | None = None,
    extra_entries: Mapping[str, bytes] | None = None,
) -> Path:
    """A wheel of distribution `name` (package `name` with dashes as underscores) shipping `skills` in `skills/`."""
    package = name.replace("-", "_")
    contents = {**package_files(package, skills), **(files or {})}
    declared = entry_points if entry_points is not None else {"main": f"{package}:skills"}
    return build_wheel(where, name, "1.0", contents, declared, extra_entries=extra_entries)


def unpacked(wheel: Path, site: Path) -> Path:
    """`wheel` installed the way pip installs a pure wheel: unpacked into a site folder."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site


@pytest.mark.parametrize("installed", [False, True], ids=["zip-import", "unpacked"])
def test_finding_and_reading_skills_runs_no_code_of_the_distribution(tmp_path: Path, installed: bool) -> None:
    """skillwire choice: serving a distribution's skills never imports it: its `__init__` (here one that would
    write a file and exit) is located by the finders and read through importlib.resources, never executed."""
    marker = tmp_path / "imported"
    init = f"open({str(marker)!r}, 'w').close()\nraise SystemExit('imported')\n".encode()
    wheel = wheel_of(tmp_path, "acme-tools", {"pdf/SKILL.md": skill_md("pdf")}, files={"acme_tools/__init__.py": init})
    where = str(unpacked(wheel, tmp_path / "site")) if installed else str(wheel)
    catalog = PackageSource(path=[where]).scan()
    assert [s.uri for s in catalog.skills] == ["skill://pdf/SKILL.md"]
    assert not marker.exists()


def test_an_entry_point_names_a_package_or_a_folder_in_one(tmp_path: Path) -> None:
    """skillwire choice: `package` serves the package's folder, `package:a.b` its folder a/b; the label names the
    distribution, its version and the entry point."""
    wheel = build_wheel(
        tmp_path,
        "Acme_Tools",
        "2.1",
        {
            "acme_tools/__init__.py": b"",
            "acme_tools/data/skills/pdf/SKILL.md": skill_md("pdf"),
            "solo/__init__.py": b"",
            "solo/SKILL.md": skill_md("solo"),
        },
        {"deep": "acme_tools:data.skills", "whole": "solo"},
    )
    found = [r for r in package_roots(path=[str(wheel)]) if isinstance(r, PackageRoot)]
    assert [(r.distribution, r.version, r.entry, r.value) for r in found] == [
        ("Acme_Tools", "2.1", "deep", "acme_tools:data.skills"),
        ("Acme_Tools", "2.1", "whole", "solo"),
    ]
    assert found[0].label == "package Acme_Tools 2.1 (deep = acme_tools:data.skills)"
    source = PackageSource(["acme-tools"], path=[str(wheel)])  # PEP 503: acme-tools is Acme_Tools
    catalog = source.scan()
    # a package folder holding a SKILL.md is one skill named after the folder, as a root folder would be
    assert [s.uri for s in catalog.skills] == ["skill://pdf/SKILL.md", "skill://solo/SKILL.md"]
    assert source.revision == "Acme_Tools 2.1"


def test_a_broken_distribution_refuses_only_its_own_skills_naming_it(tmp_path: Path) -> None:
    """skillwire choice: an entry point naming nothing, a module, a missing folder or an unparsable value, and a
    distribution asked for that is not installed, are each one refusal naming the distribution; the rest serve."""
    good = wheel_of(tmp_path, "good", {"pdf/SKILL.md": skill_md("pdf")})
    broken = wheel_of(
        tmp_path,
        "broken",
        {"x/SKILL.md": skill_md("x")},
        files={"broken_mod.py": b""},
        entry_points={
            "gone": "no_such_package",
            "module": "broken_mod",
            "folder": "broken:missing",
            "odd": "broken:../../etc",
        },
    )
    catalog = PackageSource(["good", "broken", "absent"], path=[str(good), str(broken)]).scan()
    assert [s.uri for s in catalog.skills] == ["skill://pdf/SKILL.md"]
    problems = sorted((r.path, r.message) for r in catalog.refusals)
    assert all(r.rule == PROBLEM_RULE and r.skill for r in catalog.refusals)
    assert problems == [
        ("package absent", "no distribution of that name is installed"),
        ("package broken 1.0 (entry point folder)", "broken:missing is not a folder in the installed package"),
        ("package broken 1.0 (entry point gone)", "the package no_such_package is not installed"),
        (
            "package broken 1.0 (entry point module)",
            "broken_mod is a module, not a package: skills live in a package's folder",
        ),
        (
            "package broken 1.0 (entry point odd)",
            "'broken:../../etc' names no package or folder in one: write 'package' or 'package:folder'",
        ),
    ]


@pytest.mark.parametrize(
    ("member", "says"),
    [
        ("hostile/skills/pdf/../../../escape.md", "'pdf/../../../escape.md'"),
        ("hostile/skills/pdf//twice.md", "'pdf//twice.md'"),
        ("hostile/skills/./pdf/dot.md", "'./pdf/dot.md'"),
    ],
)
def test_an_archive_with_a_path_leaving_its_folder_is_refused_whole(tmp_path: Path, member: str, says: str) -> None:
    """Hostile input: a zip member whose name has a `..`, `.` or empty segment refuses that distribution's folder
    (nothing of it is served, nothing outside it is read); another distribution is still served."""
    hostile = wheel_of(tmp_path, "hostile", {"pdf/SKILL.md": skill_md("pdf")}, extra_entries={member: b"x"})
    good = wheel_of(tmp_path, "good", {"ok/SKILL.md": skill_md("ok")})
    catalog = PackageSource(path=[str(hostile), str(good)]).scan()
    assert [s.uri for s in catalog.skills] == ["skill://ok/SKILL.md"]
    [refusal] = catalog.refusals
    assert refusal.path == "package hostile 1.0 (main = hostile:skills)"
    assert says in refusal.message


def test_hostile_names_in_an_archive_get_the_folder_rules(tmp_path: Path) -> None:
    """Hostile input: a control character or backslash in a member name refuses that skill with the same rules as
    a folder (`file-name-control`, `file-name-backslash`), shown escaped; the archive's other skills serve."""
    wheel = wheel_of(
        tmp_path,
        "names",
        {
            "ctl/SKILL.md": skill_md("ctl"),
            "ctl/\x1b[31mred.md": b"x",
            "slash/SKILL.md": skill_md("slash"),
            "slash/a\\b.md": b"x",
            "fine/SKILL.md": skill_md("fine"),
        },
    )
    catalog = PackageSource(path=[str(wheel)]).scan()
    assert [s.name for s in catalog.skills] == ["fine"]
    rules = sorted(r.rule for r in catalog.refusals)
    assert rules == ["file-name-backslash", "file-name-control"]
    assert all("\x1b" not in r.path + r.message for r in catalog.refusals)
    assert all(r.path.startswith("package names 1.0 (main = names:skills)/") for r in catalog.refusals)


@pytest.mark.parametrize("kind", ["zip", "other"])
def test_a_listing_is_bounded(tmp_path: Path, kind: str) -> None:
    """Hostile input: a skill folder listing more entries than the bound is refused, not walked without end (an
    archive's name list, or any other Traversable walked folder by folder)."""
    names = [f"f{i}" for i in range(11)]
    if kind == "zip":
        with zipfile.ZipFile(tmp_path / "many.zip", "w") as z:
            for name in names:
                z.writestr(f"pkg/skills/{name}", b"")
        root: Traversable = zipfile.Path(tmp_path / "many.zip", "pkg/skills/")
    else:
        for name in names:
            (tmp_path / name).write_bytes(b"")
        root = tmp_path
    assert len(list_tree(root, max_entries=11).files) == 11
    with pytest.raises(TreeProblem, match="more than 10 files and folders"):
        list_tree(root, max_entries=10)


def test_a_skill_path_shipped_by_two_distributions_is_refused_naming_both(tmp_path: Path) -> None:
    """Spec MUST NOT (Names: no silent shadowing); skillwire choice: neither copy is served, and each refusal names
    both distributions."""
    one = wheel_of(tmp_path, "one", {"pdf/SKILL.md": skill_md("pdf")})
    two = wheel_of(tmp_path, "two", {"pdf/SKILL.md": skill_md("pdf"), "b/SKILL.md": skill_md("b")})
    catalog = PackageSource(path=[str(one), str(two)]).scan()
    assert [s.uri for s in catalog.skills] == ["skill://b/SKILL.md"]
    assert [r.rule for r in catalog.refusals] == ["duplicate-uri", "duplicate-uri"]
    for refusal in catalog.refusals:
        assert "package one 1.0" in refusal.message
        assert "package two 1.0" in refusal.message


def test_the_packages_spec_opens_named_or_all_distributions() -> None:
    """skillwire choice: `packages:NAME,NAME` and `packages:*` are source specs (`--packages` adds one)."""
    named = open_sources(["packages:acme-tools, other"], SourceOptions())
    assert isinstance(named, PackageSource)
    assert named.only == ("acme-tools", "other")
    every = open_sources(["packages:*"], SourceOptions())
    assert isinstance(every, PackageSource)
    assert every.only is None
    with pytest.raises(SpecError, match="distribution names"):
        open_sources(["packages:,"], SourceOptions())


def test_a_corrupt_archive_member_refuses_that_distribution_only(tmp_path: Path) -> None:
    """Hostile input: a member whose compressed bytes are garbage (the archive fails while it is read) refuses its
    distribution's folder with the reason; the other distribution is served."""
    broken = wheel_of(tmp_path, "broken", {"pdf/SKILL.md": skill_md("pdf"), "pdf/data.txt": b"a" * 4096})
    raw = bytearray(broken.read_bytes())
    info = zipfile.ZipFile(broken).getinfo("broken/skills/pdf/data.txt")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start : start + info.compress_size] = b"\xff" * info.compress_size
    broken.write_bytes(bytes(raw))
    good = wheel_of(tmp_path, "good", {"ok/SKILL.md": skill_md("ok")})
    catalog = PackageSource(path=[str(broken), str(good)]).scan()
    assert [s.uri for s in catalog.skills] == ["skill://ok/SKILL.md"]
    [refusal] = catalog.refusals
    assert (refusal.path, refusal.rule) == ("package broken 1.0 (main = broken:skills)", PROBLEM_RULE)
    assert refusal.message.startswith("cannot be read: ")  # zipfile's own error, shown in one safe line


def test_an_installed_folder_follows_the_folder_link_rules(tmp_path: Path) -> None:
    """Hostile input: a link in an installed package's skill folder to a file outside it refuses that skill as a
    folder would (`link-escapes`), the refusal under the distribution's label; nothing outside is served."""
    wheel = wheel_of(tmp_path, "linked", {"pdf/SKILL.md": skill_md("pdf"), "ok/SKILL.md": skill_md("ok")})
    site = unpacked(wheel, tmp_path / "site")
    (tmp_path / "secret.txt").write_text("secret")
    (site / "linked" / "skills" / "pdf" / "leak.txt").symlink_to(tmp_path / "secret.txt")
    catalog = PackageSource(path=[str(site)]).scan()
    assert [s.uri for s in catalog.skills] == ["skill://ok/SKILL.md"]
    [refusal] = catalog.refusals
    assert refusal.rule == "link-escapes"
    assert refusal.path.startswith("package linked 1.0 (main = linked:skills)/pdf/")
