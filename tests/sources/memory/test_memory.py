"""MemorySource (skillwire choice, issue 12): files held in memory, served like a folder holding them."""

from __future__ import annotations

import pytest

from skillwire.sources.memory.source import MemorySource
from tests.sources.contract.cases import skill_md


def test_the_mapping_is_copied_so_the_catalog_never_changes_under_a_reader() -> None:
    """Changing the caller's dict or bytearray after the source is made changes nothing served."""
    data = bytearray(b"one\n")
    files: dict[str, bytes] = {"pdf/SKILL.md": skill_md("pdf"), "pdf/a.md": data}  # type: ignore[dict-item]
    source = MemorySource(files)
    data[:] = b"two\n"
    files["pdf/b.md"] = b"later\n"
    catalog = source.scan()
    served = catalog.file("skill://pdf/a.md")
    assert served is not None
    assert served.content.read(100) == b"one\n"
    assert catalog.file("skill://pdf/b.md") is None


@pytest.mark.parametrize("path", ["", "/abs/SKILL.md", "a//b.md", "a/../b.md", "./a.md"])
def test_a_path_that_is_not_relative_names_is_refused_when_made(path: str) -> None:
    """Paths are '/'-separated relative names: nothing absolute, empty, '.' or '..'."""
    with pytest.raises(ValueError, match="relative path"):
        MemorySource({path: b"x"})


def test_a_skill_md_at_the_top_makes_the_whole_mapping_one_skill_named_root_name() -> None:
    """As a root folder that is itself a skill is named by its folder."""
    catalog = MemorySource({"SKILL.md": skill_md("tools"), "a.md": b"a"}, root_name="tools").scan()
    assert [s.uri for s in catalog.skills] == ["skill://tools/SKILL.md"]


def test_an_ignore_file_that_is_not_utf8_refuses_the_skill_holding_it() -> None:
    """As in a folder: the rules cannot be read, so what the skill publishes is unknown."""
    catalog = MemorySource({"pdf/SKILL.md": skill_md("pdf"), "pdf/.skillwireignore": b"\xff"}, label="mem").scan()
    assert [(r.path, r.rule) for r in catalog.refusals] == [("mem/pdf/.skillwireignore", "unreadable")]


def test_a_key_ending_in_a_slash_is_a_folder_and_holds_no_bytes() -> None:
    """ "drafts/" is an empty folder (a directory with no children); a folder key with bytes is refused when made."""
    catalog = MemorySource({"pdf/SKILL.md": skill_md("pdf"), "pdf/drafts/": b""}).scan()
    skill = catalog.skill("skill://pdf/SKILL.md")
    assert skill is not None
    assert skill.folders == ("drafts",)
    assert [f.rel_path for f in skill.files] == ["SKILL.md"]
    assert catalog.children_page("skill://pdf/drafts", None, 10).items == ()
    with pytest.raises(ValueError, match="names a folder"):
        MemorySource({"pdf/drafts/": b"x"})
