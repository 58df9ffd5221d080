"""The policy engine (baton.policy.engine): Cedar's answer as allow, deny or ask, and a bad policy refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.contracts.policy import AskSpec, PolicyQuery
from baton.policy.engine import NO_RULE, Policy, PolicyError

EXAMPLE = Path(__file__).parents[2] / "examples" / "policy" / "tools.cedar"


@pytest.fixture(scope="module")
def policy() -> Policy:
    return Policy.load(EXAMPLE.read_text())


def bash(command: str) -> PolicyQuery:
    return PolicyQuery(target="Bash", arguments={"command": command}, at="2026-12-05T10:00:00+00:00")


def test_a_permit_allows_with_its_rule_and_reason(policy: Policy) -> None:
    decision = policy.decide(bash("ls -la"))
    assert (decision.outcome, decision.rule, decision.reason) == ("allow", "read-only", "reading is safe")
    assert decision.policy_version == policy.version and decision.policy_version.startswith("sha256:")


def test_a_forbid_denies_with_the_reason_the_model_sees(policy: Policy) -> None:
    decision = policy.decide(bash("curl https://example.com"))
    assert (decision.outcome, decision.rule, decision.reason) == ("deny", "no-network", "no network from agents")


def test_an_ask_rule_names_its_approvers_quorum_and_deadline(policy: Policy) -> None:
    decision = policy.decide(bash("rm -rf build"))
    assert (decision.outcome, decision.rule) == ("ask", "destructive")
    assert decision.ask == AskSpec(approvers=["group:sre"], quorum=2, timeout_seconds=900, tier="high")


def test_no_matching_rule_asks_a_person(policy: Policy) -> None:
    decision = policy.decide(PolicyQuery(target="Write", arguments={"path": "a.txt", "lines": [1, 2]}))
    assert (decision.outcome, decision.rule, decision.reason) == ("ask", None, NO_RULE)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("permit(principal,", "does not parse"),
        ('@id("x") permit(principal, action, resource) when { context.nope };', "does not validate"),
        ("permit(principal, action, resource);", "needs an @id"),
        ('@id("x") @quorum("2") permit(principal, action, resource);', "need @ask"),
        ('@id("x") @ask @quorum("two") permit(principal, action, resource);', "whole number"),
        ('@id("x") @ask forbid(principal, action, resource);', "belong on a permit"),
        ('@id("x") permit(principal, action, resource);\n@id("x") forbid(principal, action, resource);', "twice"),
        ('@id("x") @colour("red") permit(principal, action, resource);', "unknown annotation @colour"),
    ],
)
def test_a_bad_policy_is_refused_naming_the_problem(text: str, problem: str) -> None:
    with pytest.raises(PolicyError) as refused:
        Policy.load(text)
    assert any(problem in p for p in refused.value.problems), refused.value.problems


LADDERED = """@id("deploys") @ask @approvers("alice") @timeout("600")
@remind_after("60") @escalate_after("300") @escalate_to("slack, email")
permit(principal, action, resource);"""


def test_an_ask_rule_names_its_ladder() -> None:
    decision = Policy.load(LADDERED).decide(bash("make deploy"))
    assert decision.ask == AskSpec(
        approvers=["alice"],
        timeout_seconds=600,
        remind_after=60,
        escalate_after=300,
        escalate_to=["slack", "email"],
    )


@pytest.mark.parametrize(
    ("annotations", "problem"),
    [
        ('@ask @remind_after("soon")', "rule r: @remind_after must be a whole number of seconds"),
        ('@ask @escalate_after("0") @escalate_to("slack")', "rule r: @escalate_after must be a whole number"),
        ('@ask @escalate_after("60")', "rule r: @escalate_after and @escalate_to go together"),
        ('@ask @escalate_to("slack")', "rule r: @escalate_after and @escalate_to go together"),
        ('@ask @escalate_after("60") @escalate_to("pager")', "rule r: @escalate_to names pager; channels are"),
        ('@ask @escalate_after("60") @escalate_to("slack,slack")', "rule r: @escalate_to names a channel twice"),
        ('@ask @remind_after("60") @escalate_after("60") @escalate_to("slack")', "must come after @remind_after"),
        ('@ask @timeout("60") @remind_after("60")', "rule r: @remind_after (60s) must come before the rule's @timeout"),
        ('@remind_after("60")', "rule r: @remind_after, @escalate_after and @escalate_to need @ask"),
    ],
)
def test_a_bad_ladder_is_refused_at_load_naming_the_rule(annotations: str, problem: str) -> None:
    with pytest.raises(PolicyError) as refused:
        Policy.load(f'@id("r") {annotations} permit(principal, action, resource);')
    assert any(problem in p for p in refused.value.problems), refused.value.problems


def test_a_ladder_on_a_forbid_is_refused() -> None:
    with pytest.raises(PolicyError) as refused:
        Policy.load('@id("r") @remind_after("60") forbid(principal, action, resource);')
    assert any(
        "rule r: @ask and its approvers, quorum, timeout and ladder belong on a permit" in p
        for p in refused.value.problems
    )


def test_a_rule_naming_more_approvers_than_an_approval_holds_is_refused_naming_the_rule() -> None:
    from baton.domain.approval import MAX_APPROVERS

    def rule(count: int) -> str:
        approvers = ",".join(f"op-{n}" for n in range(count))
        return f'@id("crowd") @ask @approvers("{approvers}") permit(principal, action, resource);'

    assert Policy.load(rule(MAX_APPROVERS)).rules  # at the limit: taken
    with pytest.raises(PolicyError) as refused:
        Policy.load(rule(MAX_APPROVERS + 1))
    assert refused.value.problems == [f"rule crowd: @approvers names {MAX_APPROVERS + 1}; at most {MAX_APPROVERS}"]
