"""The host registry (Names, Skill URIs, Security Considerations): identity, handles, collisions, resolution."""

from __future__ import annotations

import pytest

from skillwire.core.errors import AmbiguousSkillName, UnknownSkill
from skillwire.core.hosting.entry import SkillEntry
from skillwire.core.hosting.registry import LOCAL_ORIGIN, LocalSkill, Registry, SkillKey, check_label
from skillwire.core.uri import same_uri
from tests.host import make_entry, skill_md


def entry(path: str, description: str = "A skill", *, scheme: str = "skill") -> SkillEntry:
    name = path.rsplit("/", 1)[-1]
    return make_entry(
        path,
        {"SKILL.md": skill_md(name, description)},
        frontmatter={"name": name, "description": description},
        scheme=scheme,
    )


def ambiguous(registry: Registry, ref: str) -> AmbiguousSkillName:
    with pytest.raises(AmbiguousSkillName) as info:
        registry.resolve(ref)
    return info.value


# -- one origin -------------------------------------------------------------------------------------------------------


def test_a_unique_name_gets_a_label_and_name_handle() -> None:
    """skillwire choice: a skill's handle is `label:name` when its origin has one skill of that name."""
    registry = Registry()
    registry.set_origin("docs", [entry("pdf-processing"), entry("acme/billing/refunds")])
    assert [s.handle for s in registry.skills()] == ["docs:pdf-processing", "docs:refunds"]
    skill = registry.resolve("docs:refunds")
    assert skill.key == SkillKey("docs", "skill://acme/billing/refunds/SKILL.md")
    assert skill.is_mcp
    assert registry.resolve("refunds") is skill


def test_same_name_in_one_origin_gets_distinguishing_path_handles() -> None:
    """Spec MUST: two entries of one listing that share a name are disambiguated, e.g. by distinguishing segments."""
    registry = Registry()
    registry.set_origin("docs", [entry("acme/billing/refunds", "Billing"), entry("acme/support/refunds", "Support")])
    assert [s.handle for s in registry.skills()] == ["docs:billing/refunds", "docs:support/refunds"]
    assert registry.resolve("docs:billing/refunds").description == "Billing"
    assert registry.resolve("docs:support/refunds").description == "Support"


def test_same_name_in_one_origin_is_never_silently_preferred() -> None:
    """Spec MUST: hosts disambiguate "rather than silently discarding or preferring one"; a bare name is refused."""
    registry = Registry()
    registry.set_origin("docs", [entry("acme/billing/refunds"), entry("acme/support/refunds")])
    err = ambiguous(registry, "refunds")
    assert err.handles == ("docs:billing/refunds", "docs:support/refunds")
    assert len(registry.skills("docs")) == 2
    assert registry.collisions() == {"refunds": ("docs:billing/refunds", "docs:support/refunds")}


def test_handles_use_as_many_segments_as_it_takes() -> None:
    """skillwire choice: the handle is the shortest path suffix that tells the same-named skills apart."""
    registry = Registry()
    registry.set_origin("docs", [entry("a/team/billing/refunds"), entry("b/team/billing/refunds")])
    assert [s.handle for s in registry.skills()] == ["docs:a/team/billing/refunds", "docs:b/team/billing/refunds"]


def test_a_nested_skill_sharing_a_top_level_name_is_disambiguated() -> None:
    """Spec: "a nested skill may share its name with a top-level one"; both stay reachable by handle."""
    registry = Registry()
    registry.set_origin("docs", [entry("refunds"), entry("refunds/legacy/refunds")])
    handles = {s.key.uri: s.handle for s in registry.skills()}
    assert handles == {
        "skill://refunds/SKILL.md": "docs:refunds",
        "skill://refunds/legacy/refunds/SKILL.md": "docs:legacy/refunds",
    }
    assert ambiguous(registry, "refunds").handles == ("docs:legacy/refunds", "docs:refunds")


def test_the_same_path_under_two_schemes_is_told_apart_by_uri() -> None:
    """Spec: no scheme is privileged; skillwire falls back to the full uri when only the scheme differs."""
    registry = Registry()
    registry.set_origin("docs", [entry("refunds"), entry("refunds", scheme="github")])
    handles = sorted(s.handle for s in registry.skills())
    assert handles == ["docs:github://refunds/SKILL.md", "docs:skill://refunds/SKILL.md"]
    assert registry.resolve("docs:github://refunds/SKILL.md").key.uri == "github://refunds/SKILL.md"


# -- across origins ---------------------------------------------------------------------------------------------------


def test_keys_are_origin_and_uri_never_uri_alone() -> None:
    """Spec MUST: two servers serving skill://refunds/SKILL.md serve two unrelated skills; keys keep both halves."""
    registry = Registry()
    registry.set_origin("alpha", [entry("refunds", "Alpha's")])
    registry.set_origin("beta", [entry("refunds", "Beta's")])
    uri = "skill://refunds/SKILL.md"
    alpha, beta = registry.get(SkillKey("alpha", uri)), registry.get(SkillKey("beta", uri))
    assert alpha is not None
    assert beta is not None
    assert (alpha.description, beta.description) == ("Alpha's", "Beta's")
    assert alpha.key != beta.key
    assert str(alpha.key) == "alpha:skill://refunds/SKILL.md"
    assert registry.resolve(f"beta:{uri}") is beta
    assert registry.get(SkillKey("gamma", uri)) is None


def test_same_name_across_servers_resolves_only_by_handle() -> None:
    """Spec MUST: across origins a name resolves within a per-origin namespace named by a host-assigned label."""
    registry = Registry()
    registry.set_origin("docs", [entry("acme/billing/refunds")])
    registry.set_origin("evil", [entry("refunds")])
    assert registry.resolve("docs:refunds").origin == "docs"
    assert registry.resolve("evil:refunds").origin == "evil"
    assert ambiguous(registry, "refunds").handles == ("docs:refunds", "evil:refunds")
    assert registry.collisions() == {"refunds": ("docs:refunds", "evil:refunds")}


def test_an_mcp_skill_never_shadows_a_local_skill_of_the_same_name() -> None:
    """Spec MUST NOT: an MCP-served skill must not silently shadow, or be substituted for, a filesystem skill."""
    registry = Registry()
    registry.set_local([LocalSkill("git-workflow", "Our conventions", "skills/git-workflow")])
    registry.set_origin("docs", [entry("git-workflow", "Their conventions")])
    registry.set_origin("other", [entry("team/git-workflow", "More conventions")])
    err = ambiguous(registry, "git-workflow")
    assert err.handles == ("docs:git-workflow", "local:git-workflow", "other:git-workflow")
    local = registry.resolve("local:git-workflow")
    assert (local.origin, local.is_mcp, local.entry, local.description) == (
        LOCAL_ORIGIN,
        False,
        None,
        "Our conventions",
    )
    assert registry.resolve("docs:git-workflow").is_mcp
    assert registry.collisions()["git-workflow"] == err.handles


def test_a_local_skill_does_not_silently_win_either() -> None:
    """Spec MUST: collisions are never resolved silently; skillwire asks for a handle whichever side is local."""
    registry = Registry()
    registry.set_origin("docs", [entry("git-workflow")])
    registry.set_local([LocalSkill("git-workflow", "Ours", "skills/git-workflow")])
    assert ambiguous(registry, "git-workflow").handles == ("docs:git-workflow", "local:git-workflow")


def test_ambiguity_error_lists_every_handle() -> None:
    """Spec SHOULD: collisions are surfaced; the error names every candidate so the caller can pick."""
    registry = Registry()
    registry.set_origin("docs", [entry("acme/billing/refunds"), entry("acme/support/refunds")])
    registry.set_origin("evil", [entry("refunds")])
    err = ambiguous(registry, "refunds")
    assert err.name == "refunds"
    assert err.handles == ("docs:billing/refunds", "docs:support/refunds", "evil:refunds")
    for handle in err.handles:
        assert handle in str(err)


def test_no_collisions_when_names_differ() -> None:
    """skillwire choice: collisions() reports only names carried by more than one skill."""
    registry = Registry()
    registry.set_origin("docs", [entry("pdf-processing")])
    registry.set_local([LocalSkill("git-workflow", "Ours", "skills/git-workflow")])
    assert registry.collisions() == {}


# -- labels -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["docs", "docs-server", "a.b_c-1", "0", "x" * 63])
def test_valid_labels(label: str) -> None:
    """Spec MUST: servers are identified by a host-assigned label; skillwire's labels are short and plain."""
    assert check_label(label) == label


@pytest.mark.parametrize("label", ["", "Docs", "docs server", "docs:x", "-docs", ".docs", "x" * 64, "dócs", "a/b"])
def test_invalid_labels_are_refused(label: str) -> None:
    """skillwire choice: a label is 1-63 of a-z, 0-9, '.', '_', '-' (no ':' so handles split cleanly)."""
    with pytest.raises(ValueError, match="server label"):
        check_label(label)
    with pytest.raises(ValueError, match="server label"):
        Registry().set_origin(label, [])


def test_local_is_reserved_for_the_hosts_own_skills() -> None:
    """Spec MUST: an MCP server can never pose as the host's filesystem skills, so `local` is not a server label."""
    with pytest.raises(ValueError, match="reserved"):
        check_label("local")
    with pytest.raises(ValueError, match="reserved"):
        Registry().set_origin("local", [entry("git-workflow")])


# -- updates ----------------------------------------------------------------------------------------------------------


def test_unknown_names_and_handles_are_refused() -> None:
    """skillwire choice: an unresolvable reference raises UnknownSkill, whatever its form."""
    registry = Registry()
    registry.set_origin("docs", [entry("refunds")])
    for ref in ("chargebacks", "docs:chargebacks", "nobody:refunds", "docs:skill://other/SKILL.md", "skill://x"):
        with pytest.raises(UnknownSkill):
            registry.resolve(ref)


def test_set_origin_replaces_that_origin_only() -> None:
    """skillwire choice: a fresh listing replaces the origin's skills and leaves other origins alone."""
    registry = Registry()
    registry.set_origin("docs", [entry("refunds"), entry("pdf-processing")])
    registry.set_origin("other", [entry("refunds")])
    registry.set_origin("docs", [entry("pdf-processing")])
    assert [s.handle for s in registry.skills()] == ["docs:pdf-processing", "other:refunds"]
    assert registry.resolve("refunds").origin == "other"
    registry.remove_origin("other")
    assert registry.origins == ("docs",)
    with pytest.raises(UnknownSkill):
        registry.resolve("refunds")


def test_update_entry_adds_a_skill_reached_by_skills_get_and_rebuilds_handles() -> None:
    """Spec MUST: a skill absent from a listing is still loadable by URI; a same-named one gets path handles."""
    registry = Registry()
    registry.set_origin("docs", [entry("acme/billing/refunds")])
    added = registry.update_entry("docs", entry("acme/support/refunds"))
    assert added.handle == "docs:support/refunds"
    assert registry.resolve("docs:billing/refunds").key.uri == "skill://acme/billing/refunds/SKILL.md"


def test_update_entry_replaces_the_held_entry() -> None:
    """skillwire choice: a fresher entry for the same (origin, uri) replaces the old one."""
    registry = Registry()
    registry.set_origin("docs", [entry("refunds", "Old")])
    registry.update_entry("docs", entry("refunds", "New"))
    assert [(s.handle, s.description) for s in registry.skills()] == [("docs:refunds", "New")]


def _state(registry: Registry) -> tuple[object, ...]:
    """Everything a caller sees of a registry: skills with handles, collisions, and what search finds."""
    skills = [(s.handle, s.key, s.description) for s in registry.skills()]
    found = [[s.key for s in registry.search(query)] for query in ("refunds", "pdf", "fresh words", "a skill")]
    return skills, registry.collisions(), found


@pytest.mark.parametrize(
    "fresh",
    [
        entry("acme/support/refunds"),  # a third `refunds`: every `refunds` handle deepens
        entry("acme/billing/refunds", "Fresh words"),  # the held entry, re-described: search follows
        entry("acme/caf%c3%a9/refunds"),  # another spelling of a held uri replaces it
        entry("new-one"),
    ],
)
def test_update_entry_leaves_the_registry_as_relisting_every_entry_would(fresh: SkillEntry) -> None:
    """skillwire choice (issue 13): updating one entry rebuilds only what it touches, with the same result as
    set_origin over every entry (handles, collisions, search)."""
    held = [entry("acme/billing/refunds"), entry("acme/caf%C3%A9/refunds"), entry("pdf"), entry("tools/pdf")]
    updated = Registry()
    updated.set_origin("docs", held)
    updated.update_entry("docs", fresh)
    relisted = Registry()
    relisted.set_origin("docs", [*(e for e in held if not same_uri(e.uri, fresh.uri)), fresh])
    assert _state(updated) == _state(relisted)


def test_two_local_skills_of_one_name_are_told_apart() -> None:
    """Spec MUST: name collisions are disambiguated among the host's own skills too."""
    registry = Registry()
    registry.set_local(
        [LocalSkill("deploy", "A", "home/skills/deploy"), LocalSkill("deploy", "B", "work/skills/deploy")]
    )
    handles = [s.handle for s in registry.skills()]
    assert handles == ["local:home/skills/deploy", "local:work/skills/deploy"]
    assert registry.resolve("local:work/skills/deploy").description == "B"


def test_origin_qualified_name_shared_within_one_origin_lists_both_handles() -> None:
    """Spec MUST: same-named entries in one listing are disambiguated, never silently one of them."""
    from skillwire.core.errors import AmbiguousSkillName
    from skillwire.core.hosting.registry import Registry
    from tests.host import make_entry

    registry = Registry()
    registry.set_origin("docs", [make_entry("acme/billing/refunds"), make_entry("acme/support/refunds")])
    with pytest.raises(AmbiguousSkillName) as info:
        registry.resolve("docs:refunds")
    assert info.value.handles == ("docs:billing/refunds", "docs:support/refunds")
