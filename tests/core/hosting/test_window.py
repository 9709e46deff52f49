"""The acting window (The Acting Window and the Held Entry, Relative References, Directory Reads and the Held Entry)."""

from __future__ import annotations

import pytest

from skillwire.core.errors import OutsideSkill, UnlistedResource, VerificationError
from skillwire.core.hosting.entry import EntryResource, SkillEntry, parse_entry
from skillwire.core.hosting.registry import SkillKey
from skillwire.core.hosting.window import ActingWindow, DirectoryItem
from tests.host import digest_of, make_entry, raw_entry, skill_md

ROOT = "skill://acme/billing/refunds"
FILES = {
    "SKILL.md": skill_md("refunds"),
    "examples/email.md": b"Dear customer,\n",
    "examples/regional/eu.md": b"EU rules\n",
    "scripts/refund.py": b"print('refund')\n",
    "templates/a%20b.md": b"spaced\n",
    "forms/SKILL.md": skill_md("forms"),
}


def window(files: dict[str, bytes] | None = None, path: str = "acme/billing/refunds") -> ActingWindow:
    entry = make_entry(path, files or FILES)
    return ActingWindow(SkillKey("docs", entry.uri), entry)


def outside(win: ActingWindow, ref: str) -> OutsideSkill:
    with pytest.raises(OutsideSkill) as info:
        win.resolve(ref)
    return info.value


# -- resolving --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ref",
    [
        "examples/email.md",
        "./examples/email.md",
        "examples//email.md",
        "examples/regional/../email.md",
        "examples\\email.md",
        f"{ROOT}/examples/email.md",
        f"{ROOT}/examples/./email.md",
    ],
)
def test_relative_paths_resolve_against_the_skill_root(ref: str) -> None:
    """Spec: a relative reference resolves against the skill's root (the SKILL.md's directory), like a file path."""
    record = window().resolve(ref)
    assert record == EntryResource(f"{ROOT}/examples/email.md", digest_of(b"Dear customer,\n"), 15)


def test_the_root_is_the_skill_directory_not_the_scheme_root() -> None:
    """Spec: in skill://acme/billing/refunds/SKILL.md, references/GUIDE.md means skill://acme/billing/refunds/..."""
    win = window()
    assert win.resolve_uri("references/GUIDE.md") == f"{ROOT}/references/GUIDE.md"
    assert win.resolve_uri("") == ROOT
    assert win.resolve_uri("examples/..") == ROOT


@pytest.mark.parametrize(
    "ref",
    [
        "..",
        "../support/refunds/SKILL.md",
        "examples/../../support/refunds/SKILL.md",
        "../../../../../../etc/passwd",
        "%2e%2e/support/refunds/SKILL.md",
        "%2E%2E/x",
        "..\\support\\refunds\\SKILL.md",
        f"{ROOT}/../support/refunds/SKILL.md",
        f"{ROOT}/examples/../../x",
    ],
)
def test_dot_dot_cannot_leave_the_skill(ref: str) -> None:
    """Spec MUST: reads while acting resolve only within the held entry; skillwire refuses '..' past the root."""
    err = outside(window(), ref)
    assert isinstance(err, UnlistedResource)
    assert isinstance(err, VerificationError)
    assert err.skill_uri == f"{ROOT}/SKILL.md"


@pytest.mark.parametrize(
    "uri",
    [
        "skill://acme/support/refunds/SKILL.md",  # another skill on the same server
        "skill://acme/billing/refunds-v2/SKILL.md",  # shares a string prefix only
        "skill://acme/billing/SKILL.md",  # the enclosing directory
        "skill://other-skill/SKILL.md",  # another server's skill, named by its uri
        "github://acme/billing/refunds/SKILL.md",  # same path, another scheme
        "SKILL://acme/billing/refunds/SKILL.md",
        "file:///etc/passwd",
        "https://example.com/acme/billing/refunds/SKILL.md",
        "examples/http://evil/x",
    ],
)
def test_absolute_uris_of_another_skill_or_scheme_are_refused(uri: str) -> None:
    """Spec MUST: reads bind to the held skill (and its server); a URI outside it is not a file of the skill."""
    assert outside(window(), uri).uri == uri


@pytest.mark.parametrize("ref", ["examples/a%2Fb.md", "examples/a%00.md", "a\x00b"])
def test_encoded_separators_and_nul_are_refused(ref: str) -> None:
    """skillwire choice: a segment that decodes to '/' or NUL could smuggle a path; it is refused outright."""
    outside(window(), ref)


def test_an_unlisted_file_inside_the_skill_is_a_verification_failure() -> None:
    """Spec MUST: a read of an unlisted file within the skill is a verification failure equal to a digest mismatch."""
    with pytest.raises(UnlistedResource) as info:
        window().resolve("secrets/extra.md")
    err = info.value
    assert not isinstance(err, OutsideSkill)
    assert isinstance(err, VerificationError)
    assert (err.uri, err.skill_uri) == (f"{ROOT}/secrets/extra.md", f"{ROOT}/SKILL.md")


def test_the_skill_directory_itself_is_not_a_file() -> None:
    """Spec: the held entry lists files; the root directory is not one of them."""
    with pytest.raises(UnlistedResource):
        window().resolve("")


def test_a_dynamic_skill_has_no_listed_files() -> None:
    """Spec: "dynamic" offers no manifest, so nothing resolves as a verified file (resolve_uri still works)."""
    raw = raw_entry("reports/daily")
    raw["resources"] = "dynamic"
    entry = parse_entry(raw)
    win = ActingWindow(SkillKey("docs", entry.uri), entry)
    assert win.resolve_uri("data/today.csv") == "skill://reports/daily/data/today.csv"
    with pytest.raises(UnlistedResource):
        win.resolve("SKILL.md")
    with pytest.raises(UnlistedResource):
        win.list_directory()


# -- percent-encoding -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ref", ["templates/a b.md", "templates/a%20b.md", f"{ROOT}/templates/a%20b.md"])
def test_percent_encoded_names_resolve(ref: str) -> None:
    """Spec: file paths are URI path segments; a name with a space is listed %-encoded and found either way."""
    assert window().resolve(ref).uri == f"{ROOT}/templates/a%20b.md"


@pytest.mark.parametrize("listed", ["résumé.md", "r%c3%a9sum%c3%a9.md", "r%C3%A9sum%C3%A9.md"])
@pytest.mark.parametrize("ref", ["résumé.md", "r%C3%A9sum%C3%A9.md", "r%c3%a9sum%c3%a9.md"])
def test_equivalent_spellings_of_a_listed_uri_resolve_to_it(listed: str, ref: str) -> None:
    """Spec MUST: a listed file is readable while acting; RFC 3986 spellings that differ only in encoding are one URI.

    The record returned keeps the URI exactly as the server listed it, so the read asks for that.
    """
    win = window({"SKILL.md": FILES["SKILL.md"], listed: b"cv\n"}, path="cv")
    assert win.resolve(ref).uri == f"skill://cv/{listed}"
    assert win.resolve(f"skill://cv/{listed}").uri == f"skill://cv/{listed}"


def test_an_encoded_dot_in_a_name_is_just_a_dot() -> None:
    """skillwire choice: only whole '.' and '..' segments navigate; %2e inside a name is an ordinary character."""
    win = window({"SKILL.md": FILES["SKILL.md"], "notes.md": b"n\n"}, path="cv")
    assert win.resolve("notes%2emd").uri == "skill://cv/notes.md"


# -- nesting ----------------------------------------------------------------------------------------------------------


def test_a_nested_skill_md_is_an_ordinary_file_of_the_enclosing_skill() -> None:
    """Spec: from the enclosing skill's perspective a nested SKILL.md is a supporting file, readable while acting."""
    assert window().resolve("forms/SKILL.md").uri == f"{ROOT}/forms/SKILL.md"


def test_a_nested_skill_cannot_climb_into_its_enclosing_skill() -> None:
    """Spec: a nested skill's references resolve against its own root; '..' past it leaves the skill."""
    nested = make_entry("acme/billing/refunds/forms", {"SKILL.md": skill_md("forms")})
    win = ActingWindow(SkillKey("docs", nested.uri), nested)
    outside(win, "../SKILL.md")
    outside(win, f"{ROOT}/SKILL.md")


# -- directories ------------------------------------------------------------------------------------------------------


def test_the_root_listing_comes_from_the_manifest() -> None:
    """Spec MAY: a host acting on a skill answers "what is in templates/" from the held entry alone."""
    items = window().list_directory()
    assert items == (
        DirectoryItem("SKILL.md", f"{ROOT}/SKILL.md", False, len(FILES["SKILL.md"])),
        DirectoryItem("examples", f"{ROOT}/examples", True),
        DirectoryItem("forms", f"{ROOT}/forms", True),
        DirectoryItem("scripts", f"{ROOT}/scripts", True),
        DirectoryItem("templates", f"{ROOT}/templates", True),
    )


def test_a_subdirectory_lists_its_direct_children_only() -> None:
    """Spec: a directory read is not recursive; subdirectories are listed as directories."""
    assert window().list_directory("examples") == (
        DirectoryItem("email.md", f"{ROOT}/examples/email.md", False, 15),
        DirectoryItem("regional", f"{ROOT}/examples/regional", True),
    )
    assert window().list_directory(f"{ROOT}/examples/regional") == (
        DirectoryItem("eu.md", f"{ROOT}/examples/regional/eu.md", False, 9),
    )


def test_listed_names_are_shown_decoded() -> None:
    """skillwire choice: a directory item's name is the decoded file name; its uri stays as listed."""
    assert window().list_directory("templates") == (DirectoryItem("a b.md", f"{ROOT}/templates/a%20b.md", False, 7),)


def test_a_directory_the_manifest_does_not_have_is_unlisted() -> None:
    """Spec MUST NOT: a host never extends the manifest; a directory it does not list has nothing the model may read."""
    with pytest.raises(UnlistedResource):
        window().list_directory("secrets")
    with pytest.raises(OutsideSkill):
        window().list_directory("../support")


def test_a_file_the_server_added_after_the_listing_never_appears() -> None:
    """Spec MUST NOT: a file added on the server after the entry was fetched is not surfaced as a file of the skill."""
    held = window({"SKILL.md": FILES["SKILL.md"], "templates/a.md": b"a\n"})
    assert [i.name for i in held.list_directory("templates")] == ["a.md"]
    with pytest.raises(UnlistedResource):
        held.resolve("templates/b.md")


def test_the_window_keeps_its_key_and_grants() -> None:
    """skillwire choice: the window records which (origin, uri) it acts for and the grants the user gave."""
    entry: SkillEntry = make_entry("refunds")
    win = ActingWindow(SkillKey("docs", entry.uri), entry, frozenset({"allowed-tools"}))
    assert (win.key.origin, win.grants) == ("docs", frozenset({"allowed-tools"}))


# -- nested skills: references resolve against their own root -----------------------------------------------------

NESTED_FILES = {
    **FILES,
    "forms/examples/email.md": b"nested email\n",
    "forms/guide/steps.md": b"steps\n",
}


@pytest.mark.parametrize("base", ["forms/SKILL.md", f"{ROOT}/forms/SKILL.md", "forms/guide/steps.md"])
def test_a_reference_in_a_nested_skill_resolves_against_its_root(base: str) -> None:
    """Spec (Relative References): "a relative reference in a nested skill's SKILL.md resolves against the nested
    skill's root regardless of how the file was reached"; skillwire treats the nested skill's other files alike."""
    record = window(NESTED_FILES).resolve("examples/email.md", base=base)
    assert record.uri == f"{ROOT}/forms/examples/email.md"


@pytest.mark.parametrize("base", [None, "SKILL.md", "examples/regional/eu.md"])
def test_a_reference_in_the_skills_own_files_resolves_against_its_root(base: str | None) -> None:
    """Spec (Relative References): the enclosing skill's own files resolve against the enclosing root."""
    assert window(NESTED_FILES).resolve("examples/email.md", base=base).uri == f"{ROOT}/examples/email.md"


def test_dot_dot_never_leaves_the_nested_root() -> None:
    """skillwire choice: the root a reference resolves against is a wall, for a nested skill as for its parent."""
    outside_ref = window(NESTED_FILES)
    with pytest.raises(OutsideSkill):
        outside_ref.resolve("../examples/email.md", base="forms/SKILL.md")


def test_a_base_outside_the_skill_is_refused() -> None:
    """skillwire choice: the file a reference was written in must itself be a file of the held skill."""
    with pytest.raises(OutsideSkill):
        window(NESTED_FILES).resolve("examples/email.md", base="skill://other/SKILL.md")


def test_an_equivalent_spelling_of_the_root_is_the_root() -> None:
    """skillwire choice (issue 11): an absolute URI in another spelling of a listed file is that file."""
    files = {"SKILL.md": skill_md("refunds"), "examples/caf\u00e9.md": b"coffee\n"}
    win = window(files, path="acme/caf%c3%a9/refunds")
    record = win.resolve("skill://acme/caf%C3%A9/refunds/examples/caf%c3%a9.md")
    assert record.size == 7
