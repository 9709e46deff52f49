"""Source specs on the command line (skillwire choice, issue 12): PATH, KIND:TARGET and PREFIX=SPEC."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillwire.core.errors import SpecError
from skillwire.sources.composite import CompositeSource
from skillwire.sources.folder.source import FolderSource
from skillwire.sources.port import SourceOptions
from skillwire.sources.spec import KINDS, open_sources, opener, parse_spec
from tests.sources.contract.cases import skill_md
from tests.support.source_makers import write_tree


@pytest.mark.parametrize(
    ("text", "prefix", "kind", "target"),
    [
        ("skills/", (), "folder", "skills/"),
        ("team=skills/", ("team",), "folder", "skills/"),
        ("a/b=folder:skills", ("a", "b"), "folder", "skills"),
        ("folder:git:odd", (), "folder", "git:odd"),
        ("./x=y", (), "folder", "./x=y"),  # "./x" is no prefix: a folder named x=y
        ("unknown:thing", (), "folder", "unknown:thing"),  # not a registered kind: a folder path
        ("/abs/path", (), "folder", "/abs/path"),
    ],
)
def test_specs_parse_into_prefix_kind_and_target(text: str, prefix: tuple[str, ...], kind: str, target: str) -> None:
    """Each documented form parses as the module docstring says."""
    spec = parse_spec(text)
    assert (spec.prefix, spec.kind, spec.target) == (prefix, kind, target)


@pytest.mark.parametrize("text", ["folder:", "team="])
def test_a_spec_with_nothing_to_open_is_a_clear_error(text: str) -> None:
    """A kind or a prefix with nothing after it says so."""
    with pytest.raises(SpecError, match=r"nothing|needs"):
        parse_spec(text)


def test_plain_folders_are_one_folder_source_and_prefixed_ones_make_a_composite(tmp_path: Path) -> None:
    """Plain folders keep today's single FolderSource; a prefix serves them beside it under PREFIX/."""
    a = write_tree({"pdf/SKILL.md": skill_md("pdf")}, tmp_path / "a")
    b = write_tree({"pdf/SKILL.md": skill_md("pdf")}, tmp_path / "b")
    single = open_sources([str(a)], SourceOptions())
    assert isinstance(single, FolderSource)
    both = open_sources([str(a), f"vendor={b}"], SourceOptions())
    assert isinstance(both, CompositeSource)
    assert [s.uri for s in both.scan().skills] == ["skill://pdf/SKILL.md", "skill://vendor/pdf/SKILL.md"]


def test_every_registered_kind_names_an_opener_its_package_defines() -> None:
    """skillwire choice (issue 20): `KINDS` is the one registry, one `MODULE:FUNCTION` line a kind; each line names
    a function of the kind's own package (a typo there would only show when someone opens that kind)."""
    assert sorted(KINDS) == ["folder", "git", "mcp", "packages"]
    for kind, where in KINDS.items():
        assert where == f"skillwire.sources.{kind}:open_spec"
        assert callable(opener(kind))
