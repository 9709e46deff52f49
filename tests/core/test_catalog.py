"""The catalog snapshot: lookups, directory tree, keyset cursors (Listing Skills, Reading Directories)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from skillwire.core.catalog import Catalog, decode_cursor, encode_cursor
from skillwire.core.errors import InvalidCursor
from skillwire.core.manifest import Skill, SkillFile
from skillwire.core.scoped_catalog import ScopedCatalog
from skillwire.core.scopes import Visibility
from skillwire.core.uri import file_uri
from skillwire.sources.memory.source import MemoryFile


def make_skill(path: tuple[str, ...], *rels: str) -> Skill:
    files = tuple(
        SkillFile(rel, file_uri(path, rel), "sha256:" + "0" * 64, 1, "text/markdown") for rel in ("SKILL.md", *rels)
    )
    return Skill(path, {"name": path[-1], "description": "d"}, files)


def make_catalog(*skills: Skill) -> Catalog:
    locations = {f.uri: MemoryFile(b"") for s in skills for f in s.files}
    return Catalog(skills, locations)


def test_pages_cover_every_skill_once_in_uri_order() -> None:
    skills = [make_skill((f"s{i:02}",)) for i in range(25)]
    catalog = make_catalog(*reversed(skills))
    seen: list[str] = []
    cursor = None
    while True:
        page = catalog.skills_page(cursor, 10)
        seen.extend(s.uri for s in page.items)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == sorted(s.uri for s in skills)


def test_cursor_survives_a_rebuilt_catalog() -> None:
    """skillwire choice: keyset cursors name the last URI, so a rebuild neither repeats nor skips survivors."""
    a, b, c, d = (make_skill((n,)) for n in ("a", "b", "c", "d"))
    first = make_catalog(a, b, c, d).skills_page(None, 2)
    assert [s.name for s in first.items] == ["a", "b"]
    rebuilt = make_catalog(a, c, d, make_skill(("aa",)))  # b removed, aa added before the cursor
    second = rebuilt.skills_page(first.next_cursor, 2)
    assert [s.name for s in second.items] == ["c", "d"]


def test_foreign_and_cross_listing_cursors_are_refused() -> None:
    catalog = make_catalog(make_skill(("a",)), make_skill(("b",)))
    with pytest.raises(InvalidCursor):
        catalog.skills_page("garbage!", 1)
    with pytest.raises(InvalidCursor, match="different listing"):
        catalog.skills_page(encode_cursor("resources", "x"), 1)
    assert decode_cursor(encode_cursor("skills", "skill://a/SKILL.md"), "skills") == "skill://a/SKILL.md"


def test_directory_children_are_direct_only() -> None:
    """Spec MUST: every direct child; subdirectories as inode/directory; not recursive."""
    catalog = make_catalog(make_skill(("pdf",), "templates/a.md", "templates/regional/b.md", "z.md"))
    root = catalog.children_page("skill://pdf", None, 100).items
    assert [(c.uri, c.name, c.mime_type) for c in root] == [
        ("skill://pdf/SKILL.md", "SKILL.md", "text/markdown"),
        ("skill://pdf/templates", "templates", "inode/directory"),
        ("skill://pdf/z.md", "z.md", "text/markdown"),
    ]
    sub = catalog.children_page("skill://pdf/templates", None, 100).items
    assert [c.name for c in sub] == ["a.md", "regional"]
    assert catalog.is_directory("skill://pdf/templates/regional")
    assert not catalog.is_directory("skill://pdf/z.md")


def test_file_shared_by_nested_skills_lists_both_owners() -> None:
    outer = make_skill(("outer",), "inner/SKILL.md")
    inner = make_skill(("outer", "inner"))
    catalog = make_catalog(outer, inner)
    served = catalog.file("skill://outer/inner/SKILL.md")
    assert served is not None
    assert served.skills == ("skill://outer/SKILL.md", "skill://outer/inner/SKILL.md")
    assert served.is_skill_md


def test_skills_enclosing_finds_nested_owners() -> None:
    outer = make_skill(("outer",), "inner/docs/a.md", "inner/SKILL.md")
    inner = make_skill(("outer", "inner"), "docs/a.md")
    catalog = make_catalog(outer, inner)
    assert [s.name for s in catalog.skills_enclosing("skill://outer/inner/docs")] == ["inner", "outer"]
    assert [s.name for s in catalog.skills_enclosing("skill://outer")] == ["outer"]
    assert catalog.skills_enclosing("skill://elsewhere/x") == ()


def test_a_deferred_catalog_builds_each_skill_on_first_use_and_equals_an_eager_one() -> None:
    """skillwire choice: a restart publishes a catalog whose skills are built only when something asks."""
    skills = [make_skill(("a",), "x.md"), make_skill(("a", "inner")), make_skill(("b",), "d/y.md")]
    eager = make_catalog(*skills)
    built: list[str] = []

    def builder(skill: Skill) -> Callable[[], Skill]:
        def build() -> Skill:
            built.append(skill.uri)
            return skill

        return build

    locations = {f.uri: MemoryFile(b"") for s in skills for f in s.files}
    lazy = Catalog.deferred([(s.uri, builder(s)) for s in reversed(skills)], locations)
    assert len(lazy) == 3
    assert built == []
    assert lazy.skill("skill://b/SKILL.md") == skills[2]
    assert built == ["skill://b/SKILL.md"]
    assert lazy.skills == eager.skills
    assert lazy.file("skill://a/inner/SKILL.md") == eager.file("skill://a/inner/SKILL.md")
    assert [c.uri for c in lazy.children_page("skill://b/d", None, 10).items] == ["skill://b/d/y.md"]
    assert sorted(built) == sorted(s.uri for s in skills)  # each built once, then kept


def test_a_deferred_skill_whose_builder_finds_it_gone_is_withdrawn_from_every_answer() -> None:
    """skillwire choice (issue 23): a restored skill is checked when first built; one that no longer matches its
    source is served by no method, and its builder is asked once."""
    kept, gone = make_skill(("a",), "x.md"), make_skill(("a", "inner"), "y.md")
    asked: list[str] = []

    def withdrawn() -> Skill | None:
        asked.append(gone.uri)
        return None

    locations = {f.uri: MemoryFile(b"") for s in (kept, gone) for f in s.files}
    lazy = Catalog.deferred([(kept.uri, lambda: kept), (gone.uri, withdrawn)], locations)
    assert list(lazy.skill_uris) == [kept.uri, gone.uri]  # listed before anything is built
    assert lazy.skill(gone.uri) is None
    assert lazy.skills == (kept,)
    assert lazy.skills_page(None, 10).items == (kept,)
    assert lazy.skills_enclosing("skill://a/inner/y.md") == (kept,)
    assert lazy.file("skill://a/inner/y.md") is None
    assert lazy.file(gone.uri) is None
    assert [f.file.uri for f in lazy.files_page(None, 10).items] == [kept.uri, "skill://a/x.md"]
    assert not lazy.is_directory("skill://a/inner")
    assert asked == [gone.uri]


def test_a_deferred_skill_that_builds_another_uri_is_an_error() -> None:
    other = make_skill(("other",))
    lazy = Catalog.deferred([("skill://mine/SKILL.md", lambda: other)], {})
    with pytest.raises(ValueError, match=r"built skill://other/SKILL\.md"):
        lazy.skill("skill://mine/SKILL.md")


def test_empty_folders_of_a_skill_are_directories_with_no_children() -> None:
    """Spec MUST: "An empty directory yields an empty resources array"; skillwire choice: an empty folder is one."""
    skill = Skill(
        ("pdf",),
        {"name": "pdf", "description": "d"},
        make_skill(("pdf",), "templates/a.md").files,
        ("drafts", "templates/old/empty"),
    )
    catalog = make_catalog(skill)
    root = catalog.children_page("skill://pdf", None, 100).items
    assert [(c.name, c.is_directory) for c in root] == [("SKILL.md", False), ("drafts", True), ("templates", True)]
    assert [c.name for c in catalog.children_page("skill://pdf/templates", None, 100).items] == ["a.md", "old"]
    assert [c.name for c in catalog.children_page("skill://pdf/templates/old", None, 100).items] == ["empty"]
    for empty in ("skill://pdf/drafts", "skill://pdf/templates/old/empty"):
        assert catalog.is_directory(empty)
        assert catalog.children_page(empty, None, 100).items == ()
    assert not catalog.is_directory("skill://pdf/templates/old/empty/deeper")


def test_prefix_levels_above_skills_list_the_next_level_down() -> None:
    """Spec: "every directory level is a directory resource"; skillwire choice: so are the levels above skills."""
    catalog = make_catalog(
        make_skill(("acme", "billing"), "refunds/SKILL.md"),
        make_skill(("acme", "billing", "refunds")),  # nested: under billing's tree, not a prefix level
        make_skill(("acme", "tools", "deep", "lint")),
        make_skill(("acme-two", "x")),
        make_skill(("solo",)),
    )
    listing = catalog.children_page("skill://acme", None, 100)
    assert [(c.uri, c.name, c.mime_type) for c in listing.items] == [
        ("skill://acme/billing", "billing", "inode/directory"),
        ("skill://acme/tools", "tools", "inode/directory"),
    ]
    assert listing.next_cursor is None
    assert [c.uri for c in catalog.children_page("skill://acme/tools", None, 100).items] == ["skill://acme/tools/deep"]
    assert [c.uri for c in catalog.children_page("skill://acme/tools/deep", None, 9).items] == [
        "skill://acme/tools/deep/lint"
    ]
    assert [c.name for c in catalog.children_page("skill://acme/billing", None, 9).items] == ["SKILL.md", "refunds"]
    for not_a_level in ("skill://ac", "skill://acme/bill", "skill://acme/tools/deep/lint/x", "skill://solo/SKILL.md"):
        assert not catalog.is_directory(not_a_level), not_a_level
        with pytest.raises(KeyError):
            catalog.children_page(not_a_level, None, 10)


def test_prefix_level_pages_cover_every_child_once_whatever_the_names_sort_like() -> None:
    """Keyset pages over a prefix level: no repeat, no gap, with names where "a" < "a-b" but "a-b/" < "a/"."""
    names = ["a", "a-b", "a.b", "a0", "a b", "b", "ab", "a~", "z"]
    catalog = make_catalog(*(make_skill(("org", n, "skill")) for n in names), make_skill(("org", "a", "two")))
    for limit in (1, 2, 3, 100):
        seen: list[str] = []
        cursor = None
        for _ in range(20):
            page = catalog.children_page("skill://org", cursor, limit)
            assert len(page.items) <= limit
            seen.extend(c.uri for c in page.items)
            cursor = page.next_cursor
            if cursor is None:
                break
        assert sorted(seen) == sorted(f"skill://org/{n}".replace(" ", "%20") for n in names), limit
    with pytest.raises(InvalidCursor, match="different listing"):
        catalog.children_page("skill://org", encode_cursor("dir:skill://other", "skill://org/a"), 2)


def test_a_scoped_view_lists_only_the_prefix_levels_of_the_skills_it_sees() -> None:
    """A prefix level shows nothing of a hidden skill: not its name, and not at all when it leads only there."""
    catalog = make_catalog(make_skill(("acme", "billing")), make_skill(("acme", "secret")), make_skill(("hidden", "x")))
    view = ScopedCatalog(catalog, Visibility(["acme/billing"]))
    assert [c.uri for c in view.children_page("skill://acme", None, 10).items] == ["skill://acme/billing"]
    assert not view.is_directory("skill://hidden")
    assert not view.is_directory("skill://acme/secret")


def test_file_count_counts_a_nested_skills_files_once_without_listing_every_file() -> None:
    """`file_count` (asked by `skillwire serve` and `/metrics`) is the number of distinct files, as
    `resources/list` enumerates them, counted skill by skill: the sorted list of every file URI is not made and
    kept for it (issue 23: 500,000 strings at 100,000 skills). A skillwire choice."""
    outer = make_skill(("a",), "x.md", "b/SKILL.md", "b/y.md")
    nested = make_skill(("a", "b"), "y.md", "z.md")  # z.md: a manifest made by hand that the outer one lacks
    other = make_skill(("c",), "d/e.md")
    locations = {f.uri: MemoryFile(b"") for s in (outer, nested, other) for f in s.files}
    catalog = Catalog((outer, nested, other), lambda skill, f: locations[f.uri])
    assert catalog.file_count == 7
    assert catalog._file_uris is None
    listed = catalog.files_page(None, 100).items
    assert len(listed) == len({s.file.uri for s in listed}) == catalog.file_count
