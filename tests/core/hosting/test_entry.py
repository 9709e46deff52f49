"""Skill entries as a host receives them (Skill Entries, Resources, Limits): what parse_entry accepts and refuses."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import FrozenInstanceError
from typing import Any

import pytest

from skillwire.core.errors import InvalidEntry, SkillwireError
from skillwire.core.hosting.entry import EntryResource, SkillEntry, parse_entry
from tests.host import digest_of, make_entry, raw_entry, skill_md

SKILL = skill_md("refunds")
EMAIL = b"Dear customer,\n"
GOOD_DIGEST = "sha256:" + "0" * 64

Mutation = Callable[[dict[str, Any]], None]


def refunds() -> dict[str, Any]:
    return raw_entry("acme/billing/refunds", {"SKILL.md": SKILL, "examples/email.md": EMAIL})


def refused(raw: object) -> InvalidEntry:
    with pytest.raises(InvalidEntry) as info:
        parse_entry(raw)
    return info.value


def set_resource(index: int, field: str, value: object) -> Mutation:
    def mutate(raw: dict[str, Any]) -> None:
        raw["resources"][index][field] = value

    return mutate


def drop_resource_field(index: int, field: str) -> Mutation:
    def mutate(raw: dict[str, Any]) -> None:
        del raw["resources"][index][field]

    return mutate


# -- valid entries ----------------------------------------------------------------------------------------------------


def test_a_valid_entry_parses_into_its_manifest() -> None:
    """Spec MUST: an entry is {uri, frontmatter, resources} with every file's uri, digest and size."""
    entry = parse_entry(refunds())
    assert entry.uri == "skill://acme/billing/refunds/SKILL.md"
    assert entry.root_uri == "skill://acme/billing/refunds"
    assert entry.name == "refunds"
    assert entry.description == "A skill"
    assert not entry.is_dynamic
    assert entry.skill_md == EntryResource(entry.uri, digest_of(SKILL), len(SKILL))
    assert entry.resource("skill://acme/billing/refunds/examples/email.md") == EntryResource(
        "skill://acme/billing/refunds/examples/email.md", digest_of(EMAIL), len(EMAIL)
    )
    assert entry.resource("skill://acme/billing/refunds/examples/other.md") is None
    assert entry.path_segments == ("skill", "acme", "billing", "refunds")


def test_the_content_set_is_every_uri_and_digest() -> None:
    """Spec MUST: an approval binds to the entry's resources set, every uri and digest."""
    entry = parse_entry(refunds())
    assert entry.content_set == frozenset(
        {
            ("skill://acme/billing/refunds/SKILL.md", digest_of(SKILL)),
            ("skill://acme/billing/refunds/examples/email.md", digest_of(EMAIL)),
        }
    )


def test_dynamic_entry_parses_with_nothing_to_bind_to() -> None:
    """Spec MUST: resources is an array or the string "dynamic"; a dynamic skill cannot be content-bound."""
    raw = raw_entry("reports/daily")
    raw["resources"] = "dynamic"
    entry = parse_entry(raw)
    assert entry.is_dynamic
    assert entry.content_set == frozenset()
    assert entry.skill_md is None
    assert entry.over_limits() is None


def test_frontmatter_passes_through_every_field() -> None:
    """Spec MUST: frontmatter is rendered verbatim; fields beyond name and description pass through unchanged."""
    fm = {"name": "refunds", "description": "d", "license": "Apache-2.0", "metadata": {"io.example/x": [1, 2]}}
    entry = make_entry("refunds", {"SKILL.md": SKILL}, frontmatter=fm)
    assert dict(entry.frontmatter) == fm


def test_no_scheme_is_privileged() -> None:
    """Spec MAY: a server may serve skills under another scheme; the path rules apply regardless."""
    entry = make_entry("owner/repo/skills/refunds", {"SKILL.md": SKILL}, scheme="github")
    assert entry.root_uri == "github://owner/repo/skills/refunds"
    assert entry.name == "refunds"


def test_to_wire_round_trips() -> None:
    """skillwire choice: an entry can be written back (to persist or show) and parses to the same value."""
    entry = parse_entry(refunds())
    assert parse_entry(entry.to_wire()) == entry


def test_invalid_entry_carries_the_uri_and_the_reason() -> None:
    """skillwire choice: errors carry fields, and derive from the one root exception."""
    raw = refunds()
    del raw["resources"]
    err = refused(raw)
    assert isinstance(err, SkillwireError)
    assert err.uri == "skill://acme/billing/refunds/SKILL.md"
    assert "resources is missing" in err.reason
    assert err.uri in str(err)


# -- the resources field ----------------------------------------------------------------------------------------------


def test_an_entry_without_resources_is_invalid() -> None:
    """Spec MUST: "An entry with no resources at all ... is invalid, and hosts MUST NOT load it"."""
    raw = refunds()
    del raw["resources"]
    assert "resources is missing" in refused(raw).reason


@pytest.mark.parametrize("value", ["sometimes", "Dynamic", "", None, 0, {"uri": "x"}, True])
def test_resources_other_than_an_array_or_dynamic_is_invalid(value: object) -> None:
    """Spec MUST: resources with "any value other than an array or 'dynamic'" is invalid."""
    raw = refunds()
    raw["resources"] = value
    assert "must be an array or the string 'dynamic'" in refused(raw).reason


def test_skill_md_missing_from_resources_is_invalid() -> None:
    """Spec MUST: the array is complete and includes an entry whose uri equals the skill's top-level uri."""
    raw = refunds()
    raw["resources"] = raw["resources"][1:]
    assert "does not list SKILL.md" in refused(raw).reason


def test_empty_resources_array_is_invalid() -> None:
    """Spec MUST: a complete array always lists SKILL.md, so an empty one cannot be complete."""
    raw = refunds()
    raw["resources"] = []
    assert "does not list SKILL.md" in refused(raw).reason


def test_a_uri_listed_twice_is_invalid() -> None:
    """Spec MUST: the array lists every file "each exactly once"."""
    raw = refunds()
    raw["resources"].append(dict(raw["resources"][1]))
    assert "listed twice" in refused(raw).reason


@pytest.mark.parametrize(
    ("folder", "inside"),
    [
        ("examples", "examples/email.md"),
        ("examples/email.md", "examples/email.md/x.md"),  # a listed file cannot be a folder either
        ("SKILL.md", "SKILL.md/x.md"),
        ("ex%61mples", "examples/email.md"),  # the same path once decoded, as a host writes it
    ],
)
def test_an_entry_listing_a_file_and_a_folder_of_one_name_is_invalid(folder: str, inside: str) -> None:
    """Spec (Skill Format: "A skill is a directory"): no directory holds `sub` as a file and `sub/file.md`, so such
    an entry is invalid for every host; the reason names both (issue 9: not a raw IsADirectoryError later)."""
    files = {"SKILL.md": SKILL, folder: EMAIL, inside: EMAIL}
    raw = raw_entry("acme/billing/refunds", files)
    reason = refused(raw).reason
    root = "skill://acme/billing/refunds/"
    assert f"{root}{folder}" in reason
    assert f"{root}{inside}" in reason
    assert "cannot be both" in reason


def test_sibling_paths_sharing_a_prefix_are_not_a_file_and_folder_clash() -> None:
    """skillwire choice: only whole segments count (`sub.md` and `sub/x.md`, `a` and `ab/x` are fine)."""
    files = {"SKILL.md": SKILL, "sub.md": EMAIL, "sub/x.md": EMAIL, "a": EMAIL, "ab/x": EMAIL}
    assert len(parse_entry(raw_entry("acme/billing/refunds", files)).resources) == 5


@pytest.mark.parametrize(
    "uri",
    [
        "skill://acme/billing/other/x.md",  # another skill
        "skill://acme/billing/refunds-v2/x.md",  # shares a string prefix, not the directory
        "skill://acme/billing/SKILL.md",  # the enclosing directory
        "skill://acme/billing/refunds/",  # the skill directory itself, not a file in it
        "skill://acme/billing/refunds",
        "github://acme/billing/refunds/x.md",  # same path, another scheme
        "file:///etc/passwd",
        "",
    ],
)
def test_a_resource_outside_the_skill_directory_is_invalid(uri: str) -> None:
    """Spec MUST: "Each uri MUST be the skill's SKILL.md or a file within the skill's directory"."""
    raw = refunds()
    raw["resources"][1]["uri"] = uri
    assert "not a file within the skill's directory" in refused(raw).reason


@pytest.mark.parametrize(
    "uri",
    [
        "skill://acme/billing/refunds/../support/x.md",
        "skill://acme/billing/refunds/examples/../../x.md",
        "skill://acme/billing/refunds/./x.md",
        "skill://acme/billing/refunds//x.md",
        "skill://acme/billing/refunds/examples/",
        "skill://acme/billing/refunds/%2e%2e/support/x.md",  # RFC 3986: %2E is '.'
        "skill://acme/billing/refunds/%2E%2E/x.md",
        "skill://acme/billing/refunds/.%2e/x.md",
    ],
)
def test_dot_segments_in_a_resource_uri_are_invalid(uri: str) -> None:
    """Spec MUST: resources stay within the skill's directory; a '..' (plain or %-encoded) could climb out of it."""
    raw = refunds()
    raw["resources"][1]["uri"] = uri
    assert "'.' or '..' segment" in refused(raw).reason


@pytest.mark.parametrize(
    "uri",
    ["skill://acme/../acme/refunds/SKILL.md", "skill://acme/%2e%2e/refunds/SKILL.md", "skill://acme//refunds/SKILL.md"],
)
def test_dot_segments_in_the_skill_uri_are_invalid(uri: str) -> None:
    """Spec MUST: the skill path locates one directory; dot or empty segments would make it ambiguous."""
    raw = raw_entry("refunds")
    raw["uri"] = uri
    raw["resources"][0]["uri"] = uri
    assert "'.' or '..' path segment" in refused(raw).reason


# -- digests and sizes ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "digest",
    [
        "sha256:" + "A" * 64,  # uppercase hex
        "sha256:" + "aB" * 32,
        "SHA256:" + "a" * 64,
        "sha-256:" + "a" * 64,
        "sha512:" + "a" * 64,
        "sha256:" + "a" * 63,
        "sha256:" + "a" * 65,
        "sha256:" + "g" * 64,
        "a" * 64,  # no algorithm prefix
        "sha256:" + "a" * 64 + "\n",
        " sha256:" + "a" * 64,
        "",
        None,
        64,
    ],
)
def test_a_digest_that_is_not_sha256_and_64_lowercase_hex_is_invalid(digest: object) -> None:
    """Spec MUST: digest is `sha256:{hex}` where {hex} is 64 lowercase hexadecimal characters."""
    raw = refunds()
    raw["resources"][1]["digest"] = digest
    assert "64 lowercase hex" in refused(raw).reason


@pytest.mark.parametrize("size", [True, False, "15", 15.0, 15.5, -1, None, [15]])
def test_a_size_that_is_not_a_non_negative_integer_is_invalid(size: object) -> None:
    """Spec MUST: each entry carries size, a byte length; a boolean is not one even though Python calls it an int."""
    raw = refunds()
    raw["resources"][1]["size"] = size
    assert "size is not a non-negative integer" in refused(raw).reason


@pytest.mark.parametrize(
    ("mutation", "fragment"),
    [
        (drop_resource_field(1, "size"), "size is not"),
        (drop_resource_field(1, "digest"), "digest is not"),
        (drop_resource_field(1, "uri"), "not a file within"),
        (set_resource(1, "uri", 7), "not a file within"),
    ],
)
def test_each_resource_needs_uri_digest_and_size(mutation: Mutation, fragment: str) -> None:
    """Spec MUST: every SkillResource carries uri, digest and size."""
    raw = refunds()
    mutation(raw)
    assert fragment in refused(raw).reason


def test_a_resource_that_is_not_an_object_is_invalid() -> None:
    """Spec MUST: resources is an array of SkillResource objects."""
    raw = refunds()
    raw["resources"][1] = "skill://acme/billing/refunds/examples/email.md"
    assert "resources[1] is not an object" in refused(raw).reason


def test_an_empty_file_is_a_valid_resource() -> None:
    """Spec: size is the byte length of the raw content, and a file may be empty (size 0)."""
    entry = make_entry("refunds", {"SKILL.md": SKILL, "empty.txt": b""})
    assert entry.resource("skill://refunds/empty.txt") == EntryResource("skill://refunds/empty.txt", digest_of(b""), 0)


# -- the uri and frontmatter ------------------------------------------------------------------------------------------


def test_a_last_segment_that_differs_from_the_name_is_invalid() -> None:
    """Spec MUST: "The final <skill-path> segment of the entry's uri MUST equal frontmatter.name"."""
    raw = refunds()
    raw["frontmatter"]["name"] = "chargebacks"
    err = refused(raw)
    assert "'refunds' differs from frontmatter.name 'chargebacks'" in err.reason


@pytest.mark.parametrize(
    ("mutation", "fragment"),
    [
        (lambda raw: raw.pop("uri"), "uri is missing"),
        (lambda raw: raw.update(uri=""), "uri is missing"),
        (lambda raw: raw.update(uri=5), "uri is missing"),
        (lambda raw: raw.update(uri="acme/billing/refunds/SKILL.md"), "no scheme"),
        (lambda raw: raw.update(uri="skill://acme/billing/refunds/README.md"), "must end in /SKILL.md"),
        (lambda raw: raw.update(uri="skill://acme/billing/refunds/skill.md"), "must end in /SKILL.md"),
        (lambda raw: raw.pop("frontmatter"), "frontmatter is missing"),
        (lambda raw: raw.update(frontmatter=["name", "refunds"]), "frontmatter is missing"),
        (lambda raw: raw["frontmatter"].pop("name"), "name must be a string"),
        (lambda raw: raw["frontmatter"].update(name="Refunds"), "uppercase"),
        (lambda raw: raw["frontmatter"].pop("description"), "description is missing"),
        (lambda raw: raw["frontmatter"].update(description=42), "description is missing"),
    ],
)
def test_uri_and_frontmatter_rules(mutation: Callable[[dict[str, Any]], object], fragment: str) -> None:
    """Spec MUST: uri is the SKILL.md's URI; frontmatter always carries a valid name and a description."""
    raw = refunds()
    mutation(raw)
    assert fragment in refused(raw).reason


@pytest.mark.parametrize("raw", [None, "skill://a/SKILL.md", ["uri"], 3])
def test_an_entry_that_is_not_an_object_is_invalid(raw: object) -> None:
    """Spec MUST: a Skill entry is a JSON object."""
    err = refused(raw)
    assert err.uri is None
    assert "JSON object" in err.reason


def test_a_huge_hostile_uri_is_shortened_in_the_error() -> None:
    """skillwire choice: errors stay readable for hostile input; the uri is cut to 300 characters."""
    raw = refunds()
    raw["uri"] = "skill://" + "a" * 10_000
    err = refused(raw)
    assert err.uri is not None
    assert len(err.uri) == 300


# -- limits -----------------------------------------------------------------------------------------------------------


def test_limits_are_inclusive() -> None:
    """Spec MUST: hosts support skills up to and including 512 resources and 16 MiB."""
    files = {"SKILL.md": SKILL} | {f"f/{i:03}.md": b"" for i in range(511)}
    assert make_entry("many", files).over_limits() is None
    raw = raw_entry("big")
    raw["resources"].append({"uri": "skill://big/blob.bin", "digest": GOOD_DIGEST, "size": 0})
    raw["resources"][1]["size"] = 16 * 1024 * 1024 - raw["resources"][0]["size"]
    assert parse_entry(raw).over_limits() is None


def test_513_resources_is_over_the_limit_before_any_fetch() -> None:
    """Spec SHOULD: limits are checkable from the entry alone, and a host that declines says why."""
    files = {"SKILL.md": SKILL} | {f"f/{i:03}.md": b"" for i in range(512)}
    reason = make_entry("many", files).over_limits()
    assert reason is not None
    assert "513 files" in reason
    assert "512" in reason


def test_16_mib_plus_one_byte_is_over_the_limit_before_any_fetch() -> None:
    """Spec SHOULD: the total-size limit is the sum of size over the resources, checked before any read."""
    raw = raw_entry("big")
    raw["resources"].append(
        {
            "uri": "skill://big/blob.bin",
            "digest": GOOD_DIGEST,
            "size": 16 * 1024 * 1024 + 1 - raw["resources"][0]["size"],
        }
    )
    reason = parse_entry(raw).over_limits()
    assert reason is not None
    assert "16,777,217 bytes" in reason


@pytest.mark.parametrize("bad", ["a b", "a\nb", "a\x00b", "a\x85b"])
def test_uri_with_whitespace_or_control_characters_is_invalid(bad: str) -> None:
    """skillwire choice: a uri with whitespace or control characters is refused before it reaches any display."""
    raw = raw_entry("acme/refunds")
    raw["uri"] = f"skill://acme/{bad}/refunds/SKILL.md"
    with pytest.raises(InvalidEntry, match="whitespace or control"):
        parse_entry(raw)


# -- how an entry is held (issue 13: a host holds 100,000 of them) -----------------------------------------------------


@pytest.mark.parametrize(
    "resources",
    [
        (EntryResource("skill://a/x/SKILL.md", GOOD_DIGEST, 10),),
        (  # every record unusual: another spelling of the root, a digest in no canonical form, a size past 64 bits
            EntryResource("skill://a/x/SKILL.md", "sha256:" + "A" * 64, 2**70),
            EntryResource("skill://%61/x/notes.md", "md5:abc", 0),
            EntryResource("other://a/x/SKILL.md", GOOD_DIGEST, 2**63),
        ),
    ],
)
def test_an_entry_gives_back_its_manifest_exactly_as_it_was_given(resources: tuple[EntryResource, ...]) -> None:
    """skillwire choice: the packed manifest keeps every uri, digest and size as listed, whatever their form."""
    entry = SkillEntry("skill://a/x/SKILL.md", {"name": "x", "description": "d"}, resources)
    assert entry.resources == resources
    assert entry.content_set == frozenset((r.uri, r.digest) for r in resources)
    assert entry == SkillEntry("skill://a/x/SKILL.md", {"name": "x", "description": "d"}, resources)
    assert entry.to_wire()["resources"] == [{"uri": r.uri, "digest": r.digest, "size": r.size} for r in resources]


def test_a_parsed_entry_is_immutable() -> None:
    """skillwire choice: an entry is a value; what a host verified against cannot be changed under it."""
    entry = parse_entry(refunds())
    with pytest.raises(FrozenInstanceError):
        entry.uri = "skill://elsewhere/SKILL.md"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del entry.frontmatter


def test_entries_share_the_frontmatter_text_a_listing_repeats() -> None:
    """skillwire choice (issue 13): keys and short values repeated by every skill are held once, not per skill."""
    fm = {"license": "MIT", "metadata": {"owner": "team-a/area-1", "tags": ["pdf"]}, "long": "x" * 500}
    first, second = (
        parse_entry(
            json.loads(json.dumps(raw_entry(f"acme/{name}", frontmatter={"name": name, "description": "d"} | fm)))
        )
        for name in ("one", "two")
    )
    assert first.frontmatter["metadata"] == second.frontmatter["metadata"] == fm["metadata"]
    assert first.frontmatter["long"] == fm["long"]
    assert first.frontmatter["license"] is second.frontmatter["license"]
    assert first.frontmatter["metadata"]["owner"] is second.frontmatter["metadata"]["owner"]
    assert first.frontmatter["metadata"]["tags"][0] is second.frontmatter["metadata"]["tags"][0]
    first_keys, second_keys = list(first.frontmatter["metadata"]), list(second.frontmatter["metadata"])
    assert all(a is b for a, b in zip(first_keys, second_keys, strict=True))
