"""The scopes policy: parsing (strict, one clear message per mistake) and matching (skillwire choices, issue 10)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from skillwire.core.scopes import ANONYMOUS, Caller, InvalidScopePolicy, Visibility, parse_policy

POLICY = """\
unmatched = ["public/**"]
anonymous = ["welcome"]

[[grant]]
subject = "ci"
skills = ["**"]

[[grant]]
scope = "skills:billing"
skills = ["acme/billing/**"]

[[grant]]
claim = { groups = "finance" }
client_id = "ledger"
skills = ["acme/finance/*", "git-workflow"]
"""


def sees(policy_text: str, caller: Caller, path: str) -> bool:
    return parse_policy(policy_text, origin="scopes.toml").visibility(caller).allows(path)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("acme/billing/**", "acme/billing", True),  # ** is zero segments too
        ("acme/billing/**", "acme/billing/refunds", True),
        ("acme/billing/**", "acme/billing/a/b/c", True),
        ("acme/billing/**", "acme/billingx/refunds", False),
        ("acme/billing/**", "acme/billin", False),
        ("*", "git-workflow", True),
        ("*", "acme/billing", False),  # * stays inside one segment
        ("**", "acme/billing/refunds", True),
        ("acme/*/refunds", "acme/billing/refunds", True),
        ("acme/*/refunds", "acme/billing/x/refunds", False),
        ("acme/**/refunds", "acme/refunds", True),
        ("acme/**/refunds", "acme/a/b/refunds", True),
        ("acme/**/refunds", "acme/a/b/refunds/more", False),
        ("git-?orkflow", "git-workflow", True),
        ("git-workflow", "git-workflow", True),
        ("git-workflow", "git-workflow/nested", False),
        ("a.b", "axb", False),  # no regex leaks through: . is a dot
        ("a+b", "a+b", True),
    ],
)
def test_glob_patterns_match_skill_paths_segment_by_segment(pattern: str, path: str, expected: bool) -> None:
    """skillwire choice: * and ? within a segment, ** any whole segments (zero included), nothing else special."""
    assert Visibility([pattern]).allows(path) is expected


def test_a_caller_sees_the_union_of_its_grants_and_unmatched_only_when_none_matches() -> None:
    """skillwire choice: grants add up; `unmatched` is for authenticated callers no grant names."""
    billing = Caller(subject="alice", scopes=frozenset({"skills:billing"}))
    assert sees(POLICY, billing, "acme/billing/refunds")
    assert not sees(POLICY, billing, "public/readme")
    assert sees(POLICY, Caller(subject="nobody"), "public/readme")
    assert not sees(POLICY, Caller(subject="nobody"), "acme/billing/refunds")
    assert sees(POLICY, Caller(subject="ci"), "anything/at/all")
    assert sees(POLICY, ANONYMOUS, "welcome")
    assert not sees(POLICY, ANONYMOUS, "public/readme")


def test_every_condition_of_a_grant_must_hold_and_list_claims_match_by_membership() -> None:
    """skillwire choice: subject, client_id, scope and claim are ANDed; a list claim (groups) matches a member."""
    both = Caller(subject="x", client_id="ledger", claims={"groups": ["staff", "finance"]})
    assert sees(POLICY, both, "acme/finance/ledger")
    assert not sees(POLICY, Caller(subject="x", client_id="other", claims={"groups": "finance"}), "acme/finance/l")
    assert not sees(POLICY, Caller(subject="x", client_id="ledger", claims={"groups": ["financex"]}), "acme/finance/l")
    assert not sees(POLICY, Caller(subject="x", client_id="ledger", claims={"groups": 7}), "acme/finance/l")


def test_an_anonymous_caller_matches_no_grant_even_one_for_a_missing_subject() -> None:
    """A request without a token is never taken for a caller a grant names."""
    assert parse_policy(POLICY, origin="p").patterns_for(ANONYMOUS) == ("welcome",)
    assert parse_policy('[[grant]]\nscope = "s"\nskills = ["**"]\n', origin="p").patterns_for(ANONYMOUS) == ()


def test_no_policy_entry_means_nothing_is_visible() -> None:
    """skillwire choice: an authenticated caller no grant matches sees nothing unless `unmatched` says otherwise."""
    policy = parse_policy('[[grant]]\nsubject = "ci"\nskills = ["**"]\n', origin="p")
    assert policy.patterns_for(Caller(subject="someone")) == ()
    assert not policy.visibility(Caller(subject="someone")).allows("git-workflow")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[[grant]\n", "not valid TOML"),
        ('[[grants]]\nsubject = "a"\nskills = ["x"]\n', "unknown key 'grants'"),
        ('[[grant]]\nsubject = "a"\nskils = ["x"]\n', "grant 1 (the 1st [[grant]]) has an unknown key 'skils'"),
        ('[[grant]]\nsubject = "a"\n', "has no `skills`"),
        ('[[grant]]\nsubject = "a"\nskills = []\n', "is empty"),
        ('[[grant]]\nskills = ["x"]\n', "would match every caller"),
        ('[[grant]]\nsubject = ["a", "b"]\nskills = ["x"]\n', "one grant per value"),
        ('[[grant]]\nscope = "a b"\nskills = ["x"]\n', "holds a space"),
        ('[[grant]]\nclaim = { groups = ["a"] }\nskills = ["x"]\n', "claim 'groups' must be a non-empty string"),
        ('[[grant]]\nclaim = "groups"\nskills = ["x"]\n', "`claim` must be a table"),
        ('[[grant]]\nsubject = "a"\nskills = "x"\n', "must be a list"),
        ('[[grant]]\nsubject = "a"\nskills = ["/x"]\n', "empty segment"),
        ('[[grant]]\nsubject = "a"\nskills = ["x//y"]\n', "empty segment"),
        ('[[grant]]\nsubject = "a"\nskills = ["x/../y"]\n', ". or .. segment"),
        ('[[grant]]\nsubject = "a"\nskills = ["x/a**"]\n', "** inside a segment"),
        ('[[grant]]\nsubject = "a"\nskills = ["x/[ab]"]\n', "only *, ? and ** are wildcards"),
        ('[[grant]]\nsubject = "a"\nskills = ["skill://x/SKILL.md"]\n', "is a URI"),
        ('[[grant]]\nsubject = "a"\nskills = ["x\\u0007"]\n', "control character"),
        ('unmatched = "x"\n', "`unmatched` must be a list"),
        ('grant = "x"\n', "[[grant]]"),
    ],
)
def test_a_bad_policy_is_one_message_naming_the_file_and_the_mistake(text: str, says: str) -> None:
    """skillwire choice: strict validation; every mistake is one line that says where and what to fix."""
    with pytest.raises(InvalidScopePolicy) as bad:
        parse_policy(text, origin="scopes.toml")
    message = str(bad.value)
    assert message.startswith("scopes.toml: ")
    assert says in message
    assert "\n" not in message


def test_an_oversized_policy_is_refused_before_parsing() -> None:
    """A policy file is read whole: its size is bounded."""
    with pytest.raises(InvalidScopePolicy, match="larger than"):
        parse_policy("#" * (1024 * 1024 + 1), origin="p")


def test_callers_with_the_same_patterns_share_one_visibility() -> None:
    """Views are cached by pattern set: many callers of one team cost one compiled matcher."""
    policy = parse_policy(POLICY, origin="p")
    a = policy.visibility(Caller(subject="a", scopes=frozenset({"skills:billing"})))
    b = policy.visibility(Caller(subject="b", scopes=frozenset({"skills:billing", "other"})))
    assert a is b


def test_a_pathological_pattern_matches_in_bounded_time() -> None:
    """A policy pattern is input too: `a*a*...*b` or `**/**/.../x` must not backtrack exponentially (a regex does:
    5 s for a 60-character name, forever for 200), freezing every request that builds a view."""
    script = (
        "from skillwire.core.scopes import Visibility\n"
        "v = Visibility(['x/' + 'a*' * 12 + 'b', '**/' * 40 + 'never', '*a' * 30 + '?c'])\n"
        "assert not v.allows('x/' + 'a' * 250)\n"
        "assert not v.allows('/'.join(['seg'] * 60))\n"
        "assert not v.allows('a' * 250)\n"
        "assert v.allows('x/' + 'a' * 250 + 'b')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=20, check=False)
    assert done.returncode == 0, done.stderr
