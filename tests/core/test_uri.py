"""Skill URI building and strict parsing (Resource Mapping; hostile-input handling)."""

from __future__ import annotations

import pytest

from skillwire.core.errors import InvalidSkillUri
from skillwire.core.uri import (
    canonical_uri,
    directory_uri,
    file_uri,
    normal_uri,
    same_uri,
    skill_root_of,
    skill_uri,
    skill_uris_of,
)


def test_skill_uri_ends_in_skill_md() -> None:
    """Spec MUST: the skill's SKILL.md is always skill://<skill-path>/SKILL.md."""
    assert skill_uri(("acme", "billing", "refunds")) == "skill://acme/billing/refunds/SKILL.md"


def test_directory_uri_has_no_trailing_slash() -> None:
    """Spec MUST: directory URIs are written without a trailing slash."""
    assert directory_uri(("pdf-processing",)) == "skill://pdf-processing"
    assert directory_uri(("pdf-processing",), "templates/") == "skill://pdf-processing/templates"


def test_file_names_are_percent_encoded() -> None:
    """skillwire choice: characters outside RFC 3986 pchar are percent-encoded, UTF-8 first."""
    assert file_uri(("a",), "docs/my file.md") == "skill://a/docs/my%20file.md"
    assert file_uri(("a",), "résumé.md") == "skill://a/r%C3%A9sum%C3%A9.md"
    assert file_uri(("a",), "100%.md") == "skill://a/100%25.md"


def test_skill_root_of_strips_skill_md() -> None:
    assert skill_root_of("skill://a/b/SKILL.md") == "skill://a/b"
    with pytest.raises(InvalidSkillUri):
        skill_root_of("skill://a/b/README.md")


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("skill://pdf-processing/SKILL.md", "skill://pdf-processing/SKILL.md"),
        ("skill://a/%74emplates/x.md", "skill://a/templates/x.md"),
        ("skill://a/my%20file.md", "skill://a/my%20file.md"),
        ("skill://a/my file.md", "skill://a/my%20file.md"),
    ],
)
def test_equivalent_spellings_canonicalise_to_one_uri(given: str, canonical: str) -> None:
    assert canonical_uri(given) == canonical


@pytest.mark.parametrize(
    ("uri", "reason"),
    [
        ("skill://a/../b/SKILL.md", "'.' and '..'"),
        ("skill://a/./SKILL.md", "'.' and '..'"),
        ("skill://a/%2e%2e/SKILL.md", "'.' and '..'"),
        ("skill://a/%2E%2E/SKILL.md", "'.' and '..'"),
        ("skill://a/b%2Fc", "encoded path separators"),
        ("skill://a/b%5Cc", "encoded path separators"),
        ("skill://a\\b", "backslashes"),
        ("skill://a/b\x00.md", "control characters"),
        ("skill://a/b%00.md", "control characters"),
        ("skill://a/b%C2%9B.md", "control characters"),  # C1: U+009B is a CSI on some terminals
        ("skill://a/b\x85.md", "control characters"),
        ("skill://a//b", "empty path segment"),
        ("skill:///etc/passwd", "empty path segment"),
        ("skill://a/", "empty path segment"),
        ("skill://", "empty path segment"),
        ("file:///etc/passwd", "scheme 'file'"),
        ("/etc/passwd", "no skill:// scheme"),
        ("http://example.invalid/x", "scheme 'http'"),
        ("skill://a/b?x=1", "queries and fragments"),
        ("skill://a/b#frag", "queries and fragments"),
        ("skill://a/%ff.md", "not UTF-8"),
        ("skill://a/" + "x" * 5000, "longer than"),
    ],
)
def test_hostile_uris_are_rejected_with_a_reason(uri: str, reason: str) -> None:
    """skillwire choice: anything that could smuggle a path is refused before any lookup."""
    with pytest.raises(InvalidSkillUri) as info:
        canonical_uri(uri)
    assert reason in info.value.reason
    assert len(str(info.value)) < 400  # one readable line, even for huge input


def test_non_string_uri_is_rejected() -> None:
    with pytest.raises(InvalidSkillUri):
        canonical_uri(42)


# -- one notion of URI equality on the host side ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("skill://acme/caf%c3%a9/SKILL.md", "skill://acme/caf%C3%A9/SKILL.md"),
        ("skill://acme/café/SKILL.md", "skill://acme/caf%C3%A9/SKILL.md"),
        ("skill://acme/%61bc/SKILL.md", "skill://acme/abc/SKILL.md"),
        ("github://o/r/a%20b/SKILL.md", "github://o/r/a b/SKILL.md"),
    ],
)
def test_equivalent_spellings_are_one_uri(a: str, b: str) -> None:
    """RFC 3986 6.2.2 (case and percent-encoding normalisation): the host takes both spellings for one resource."""
    assert same_uri(a, b)
    assert normal_uri(a) == normal_uri(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("skill://acme/a%2Fb/SKILL.md", "skill://acme/a/b/SKILL.md"),  # an encoded "/" is no separator
        ("SKILL://acme/x/SKILL.md", "skill://acme/x/SKILL.md"),  # the scheme as canonical_uri takes it
        ("skill://acme/%FF/SKILL.md", "skill://acme/%FE/SKILL.md"),  # bytes that are not UTF-8 stay apart
        ("skill://acme/x/SKILL.md?a", "skill://acme/x/SKILL.md?b"),
    ],
)
def test_different_resources_stay_different(a: str, b: str) -> None:
    """skillwire choice: normalising never makes two resources one."""
    assert not same_uri(a, b)


def test_the_host_normal_form_is_the_servers_canonical_form() -> None:
    """skillwire choice (issue 11): host and server agree on which URI names a file."""
    for uri in ("skill://acme/caf%c3%a9/SKILL.md", "skill://a/x%20y.md", "skill://a/%7e.md"):
        assert normal_uri(uri) == canonical_uri(uri)


@pytest.mark.parametrize(
    ("base", "folders"),
    [
        ((), ["a", "team/pdf", "team/pdf/inner"]),
        (("root",), ["", "x", "x/y"]),
        (("a b",), ["", "c"]),  # a base that needs encoding
        ((), ["team/a b", "café/x", "ok"]),  # one folder that does not make the rest take the slow way wrongly
        ((), ["a//b", "/c", "d/"]),  # empty segments are dropped
        ((), ["line\nbreak", "x"]),
        ((), [""]),
        ((), []),
    ],
)
def test_skill_uris_of_many_folders_equal_skill_uri_of_each(base: tuple[str, ...], folders: list[str]) -> None:
    """skillwire choice (issue 23): a warm restart names every skill at once; each name is `skill_uri`'s."""
    expected = [skill_uri((*base, *filter(None, f.split("/")))) for f in folders]
    assert skill_uris_of(base, folders) == expected
