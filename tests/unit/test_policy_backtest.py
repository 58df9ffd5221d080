"""What a policy would change over decided tool approvals (baton.policy.backtest), without HTTP: each group
of a backtest, the unchanged counted, calls a person did not decide counted apart, the since filter, and
a report's shadow decisions read from a run's decision log."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest

from baton.contracts.audit import AuditRecordView
from baton.contracts.tool_approvals import DecidedToolApproval, ToolDecisionView
from baton.policy.backtest import backtest, compare, query_of, shadow_decisions, summarize
from baton.policy.engine import Policy

EXAMPLE = Path(__file__).parents[2] / "examples" / "policy" / "tools.cedar"
DIGEST = "0" * 64
Outcome = Literal["answered", "timed_out_default", "grant"]


@pytest.fixture(scope="module")
def policy() -> Policy:
    return Policy.load(EXAMPLE.read_text())


def decided(
    iid: str,
    command: str,
    decision: Literal["approve", "deny", "edit"] | None,
    *,
    tool: str = "Bash",
    outcome: Outcome = "answered",
    created_at: str = "2026-12-04T10:00:00.000Z",
    run_id: str = "r1",
) -> DecidedToolApproval:
    view = None
    if decision is not None:
        view = ToolDecisionView(
            decision=decision, arguments={"command": command}, decided_by="alice", outcome=outcome, digest=DIGEST
        )
    return DecidedToolApproval(
        interaction_id=iid,
        run_id=run_id,
        status="answered" if decision else "pending",
        tool=tool,
        arguments={"command": command},
        digest=DIGEST,
        risk="medium",
        reason="because",
        session="s1",
        created_at=created_at,
        decision=view,
        consumed=False,
        agent="coder",
    )


HISTORY = [
    decided("a-ls-denied", "ls -la", "deny"),
    decided("a-ls-approved", "ls", "approve"),
    decided("a-curl-approved", "curl https://example.com", "approve"),
    decided("a-curl-denied", "curl https://evil.example", "deny"),
    decided("a-rm-1", "rm -rf build", "approve"),
    decided("a-rm-2", "rm -rf dist", "edit"),  # an edit approves the edited call
    decided("a-write-1", "x", "approve", tool="Write"),
    decided("a-write-2", "y", "deny", tool="Write"),  # no rule asks, and a person once said no: unchanged
    decided("a-grant", "rm -rf tmp", "approve", outcome="grant"),
    decided("a-default", "curl https://x", "deny", outcome="timed_out_default"),
    decided("a-pending", "ls", None),
]


def test_a_backtest_groups_what_would_change_and_counts_the_rest(policy: Policy) -> None:
    result = backtest(policy, HISTORY)
    assert [c.interaction_id for c in result.allowed_that_a_person_denied] == ["a-ls-denied"]
    changed = result.allowed_that_a_person_denied[0]
    assert (changed.run_id, changed.tool, changed.arguments, changed.rule) == (
        "r1",
        "Bash",
        "command=ls -la",
        "read-only",
    )
    assert (changed.person, changed.decided_by, changed.policy) == ("denied", "alice", "allow")
    assert [c.interaction_id for c in result.denied_that_a_person_approved] == ["a-curl-approved"]
    assert result.denied_that_a_person_approved[0].rule == "no-network"
    [asked] = result.asked_that_was_always_approved
    assert (asked.tool, asked.rule, asked.count) == ("Bash", "destructive", 2)
    assert [c.interaction_id for c in asked.calls] == ["a-rm-1", "a-rm-2"]
    assert result.unchanged == 4  # ls approved, curl denied, both Write calls (asked, once denied)
    assert result.compared == 8 and result.not_by_person == 2
    assert result.policy_versions == [policy.version]


def test_a_backtest_leaves_out_calls_made_before_since(policy: Policy) -> None:
    history = [
        decided("old", "ls", "deny", created_at="2026-11-01T00:00:00.000Z"),
        decided("new", "ls", "deny", created_at="2026-12-04T00:00:00.000Z"),
    ]
    result = backtest(policy, history, since="2026-12-01T00:00:00.000Z")
    assert [c.interaction_id for c in result.allowed_that_a_person_denied] == ["new"]
    assert result.compared == 1 and result.since == "2026-12-01T00:00:00.000Z"


def test_the_policy_is_asked_about_the_call_as_it_was_made() -> None:
    query = query_of(decided("a1", "ls", "approve", run_id="run-7"))
    assert (query.target, query.arguments, query.agent, query.run_id, query.session) == (
        "Bash",
        {"command": "ls"},
        "coder",
        "run-7",
        "s1",
    )
    assert (query.risk, query.at) == ("medium", "2026-12-04T10:00:00.000Z")


def test_an_argument_summary_is_one_short_line() -> None:
    assert summarize({"path": "a.txt", "lines": [1, 2]}) == "path=a.txt lines=[1,2]"
    long = summarize({"command": "echo " + "x" * 200})
    assert len(long) == 60 and long.endswith("…") and "\n" not in summarize({"c": "a\nb"})


def _record(seq: int, data: dict[str, Any], type_: str = "policy_decided") -> AuditRecordView:
    return AuditRecordView(
        event_id=f"e{seq}", run_id="r1", type=type_, at="2026-12-04T10:00:00.000Z", data=data, seq=seq,
        prev_hash="0" * 64, hash="1" * 64,
    )  # fmt: skip


def test_a_report_compares_the_shadow_decisions_with_what_people_decided() -> None:
    shadow = {"action": "call_tool", "policy_version": "sha256:abc", "mode": "shadow", "applied": False}
    records = [
        _record(1, {**shadow, "interaction_id": "a-ls-denied", "target": "Bash", "outcome": "allow", "rule": "ro"}),
        _record(2, {**shadow, "interaction_id": "a-rm-1", "target": "Bash", "outcome": "ask", "rule": "rm"}),
        _record(3, {**shadow, "interaction_id": "a-rm-2", "target": "Bash", "outcome": "ask", "rule": "rm"}),
        _record(
            4, {**shadow, "interaction_id": "a-ls-approved", "target": "Bash", "outcome": "allow", "mode": "enforce"}
        ),
        _record(5, {"interaction_id": "a-curl-approved", "answer": {}}, type_="interaction_answered"),
    ]
    decisions = shadow_decisions(records)
    assert set(decisions) == {"a-ls-denied", "a-rm-1", "a-rm-2"}  # enforce records are not shadow ones
    result = compare(HISTORY, lambda a: decisions.get(a.interaction_id))
    assert [c.interaction_id for c in result.allowed_that_a_person_denied] == ["a-ls-denied"]
    assert result.allowed_that_a_person_denied[0].rule == "ro"
    [asked] = result.asked_that_was_always_approved
    assert (asked.rule, asked.count) == ("rm", 2)
    assert result.denied_that_a_person_approved == [] and result.unchanged == 0
    assert (result.compared, result.without_policy_decision, result.not_by_person) == (3, 5, 2)
    assert result.policy_versions == ["sha256:abc"]
