"""A policy decides a tool call before a person is asked (issue 31), on moto through the real resolver: an
enforced allow is answered at once by its rule (nobody notified, usable once), a deny never runs and tells
the model the rule's reason, an ask goes to the rule's approvers with its quorum and shorter deadline, no
rule matched and a shadow policy change nothing, a policy that fails asks a person, and every decision is a
`policy_decided` record in the run's verified decision chain."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from baton.api import deps
from baton.api.auth import operator_token
from baton.contracts.policy import PolicyMode
from baton.domain.tool_calls import ToolCall
from baton.events import EventType
from baton.ids import parse_iso
from baton.policy.engine import Policy
from baton.policy.source import FixedPolicy
from tests.fakes.notifier import RecordingNotifier
from tests.integration.resolver import TOKEN, ResolverOnMoto

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

RUN = "policy-1"
POLICY = """
@id("read-only")
@reason("reading is safe")
permit(principal, action == Action::"call_tool", resource in Tool::"Bash")
when { resource.hasTag("command") && resource.getTag("command") like "ls*" };

@id("deploys")
@ask
@approvers("alice,bob")
@quorum("2")
@timeout("30")
permit(principal, action == Action::"call_tool", resource in Tool::"Bash")
when { resource.hasTag("command") && resource.getTag("command") like "make deploy*" };

@id("no-network")
@reason("no network from agents")
forbid(principal, action == Action::"call_tool", resource in Tool::"Bash")
when { resource.hasTag("command") && resource.getTag("command") like "curl*" };
"""


class Api(ResolverOnMoto):
    def __init__(self, stack: MotoStack) -> None:
        super().__init__(stack)
        self.notifier = RecordingNotifier()
        self.core.notifier = self.notifier

    def use(self, mode: PolicyMode = "enforce") -> Policy:
        policy = Policy.load(POLICY, mode=mode)
        self.core.policy = FixedPolicy(policy)
        return policy

    def ask(self, command: str, **more: Any) -> tuple[int, Any]:
        call = {"tool": "Bash", "arguments": {"command": command}}
        body = {"call": call, "reason": "work", "timeout_seconds": 60, "session": "s1", **more}
        return self.call("POST", f"/api/runs/{RUN}/tool-approvals", body)

    def answer(self, approval_id: str, answer: Any, *, by: str) -> tuple[int, Any]:
        token = operator_token(TOKEN, by)
        return self.call("POST", f"/api/runs/{RUN}/interactions/{approval_id}/answer", {"answer": answer}, token=token)

    def consume(self, approval_id: str, command: str) -> tuple[int, Any]:
        digest = ToolCall(tool="Bash", arguments={"command": command}).digest
        return self.call("POST", f"/api/runs/{RUN}/tool-approvals/{approval_id}/consume", {"digest": digest})

    def policy_decided(self) -> list[dict[str, Any]]:
        events = self.core.store.list_events(RUN, limit=1000)
        return [e.data for e in events if e.type == EventType.POLICY_DECIDED]


@pytest.fixture
def api(moto_stack: MotoStack) -> Iterator[Api]:
    yield Api(moto_stack)
    deps.set_services_provider(deps._default_provider)


def test_an_allowed_call_is_answered_at_once_by_its_rule_and_used_once(api: Api) -> None:
    policy = api.use()
    status, asked = api.ask("ls -la")
    assert status == 201 and asked["status"] == "answered", asked
    decision = asked["decision"]
    assert (decision["outcome"], decision["rule"], decision["policy_version"]) == (
        "policy",
        "read-only",
        policy.version,
    )
    assert (decision["decision"], decision["decided_by"], decision["reason"]) == (
        "approve",
        "policy:read-only",
        "reading is safe",
    )
    assert api.notifier.notifications == []  # a person is never asked
    assert api.consume(asked["interaction_id"], "ls -la")[0] == 200
    status, again = api.consume(asked["interaction_id"], "ls -la")
    assert status == 409 and again["reason"] == "consumed", again
    status, next_call = api.ask("ls -la")  # a used approval: the next call is decided again
    assert status == 201 and next_call["interaction_id"] != asked["interaction_id"]
    assert next_call["decision"]["outcome"] == "policy"


def test_a_denied_call_never_runs_and_the_model_hears_the_rules_reason(api: Api) -> None:
    api.use()
    status, asked = api.ask("curl https://example.com")
    assert status == 201 and asked["status"] == "answered", asked
    decision = asked["decision"]
    assert (decision["decision"], decision["reason"], decision["rule"]) == (
        "deny",
        "no network from agents",
        "no-network",
    )
    assert decision["digest"] is None and decision["decided_by"] == "policy:no-network"
    assert api.notifier.notifications == []
    status, refused = api.consume(asked["interaction_id"], "curl https://example.com")
    assert status == 409 and refused["reason"] == "denied", refused


def test_an_ask_goes_to_the_rules_approvers_with_its_quorum_and_shorter_deadline(api: Api) -> None:
    api.use()
    status, asked = api.ask("make deploy prod")
    assert status == 201 and asked["status"] == "pending", asked
    approval = asked["interaction_id"]
    deadline = parse_iso(asked["expires_at"]) - parse_iso(asked["created_at"])
    assert deadline.total_seconds() == 30  # the rule's 30 s, not the request's 60
    assert [n.event for n in api.notifier.notifications] == ["human_input_requested"]
    status, refused = api.answer(approval, {"decision": "approve"}, by="carol")  # not an approver
    assert status == 403, refused
    status, first = api.answer(approval, {"decision": "approve"}, by="alice")
    assert status == 200 and first["status"] == "pending", first
    status, second = api.answer(approval, {"decision": "approve"}, by="bob")
    assert status == 200 and second["status"] == "answered", second
    assert api.consume(approval, "make deploy prod")[0] == 200
    [decided] = api.policy_decided()
    assert (decided["outcome"], decided["rule"], decided["applied"]) == ("ask", "deploys", True)


def test_no_rule_matched_asks_a_person_as_before(api: Api) -> None:
    policy = api.use()
    status, asked = api.ask("python train.py")
    assert status == 201 and asked["status"] == "pending" and asked["decision"] is None, asked
    assert [n.event for n in api.notifier.notifications] == ["human_input_requested"]
    assert api.answer(asked["interaction_id"], {"decision": "approve"}, by="alice")[0] == 200
    [decided] = api.policy_decided()
    assert (decided["outcome"], decided["rule"], decided["policy_version"]) == ("ask", None, policy.version)
    status, again = api.ask("python train.py")  # a repeat finds its approval and is not decided again
    assert (status, again["interaction_id"]) == (200, asked["interaction_id"])
    assert len(api.policy_decided()) == 1


def test_a_shadow_policy_changes_nothing_and_logs_what_it_would_have_decided(api: Api) -> None:
    policy = api.use("shadow")
    allowed = api.ask("ls -la")[1]
    denied = api.ask("curl https://example.com")[1]
    assert allowed["status"] == denied["status"] == "pending"
    assert len(api.notifier.notifications) == 2
    decided = {d["interaction_id"]: d for d in api.policy_decided()}
    assert decided[allowed["interaction_id"]] | {"digest": None} == {
        "interaction_id": allowed["interaction_id"],
        "action": "call_tool",
        "target": "Bash",
        "digest": None,
        "outcome": "allow",
        "rule": "read-only",
        "reason": "reading is safe",
        "policy_version": policy.version,
        "mode": "shadow",
        "applied": False,
    }
    assert decided[allowed["interaction_id"]]["digest"] == allowed["digest"]
    assert (decided[denied["interaction_id"]]["outcome"], decided[denied["interaction_id"]]["applied"]) == (
        "deny",
        False,
    )


def test_a_policy_that_fails_never_allows_a_person_decides(api: Api) -> None:
    class Broken:
        version = "sha256:broken"
        mode: PolicyMode = "enforce"

        def decide(self, query: object) -> None:
            raise RuntimeError("cedar blew up")

    class BrokenSource:
        def current(self) -> Any:
            return Broken()

    api.core.policy = BrokenSource()
    status, asked = api.ask("ls -la")
    assert status == 201 and asked["status"] == "pending", asked
    assert [n.event for n in api.notifier.notifications] == ["human_input_requested"]
    [decided] = api.policy_decided()
    assert decided["outcome"] == "ask" and decided["rule"] is None and "cedar blew up" in decided["reason"]


def test_the_decision_chain_verifies_with_each_policy_decision_in_it(api: Api) -> None:
    policy = api.use()
    for command in ("ls -la", "curl x", "make deploy", "python x.py"):
        assert api.ask(command)[0] == 201
    status, verdict = api.call("GET", f"/api/runs/{RUN}/audit/verify")
    assert status == 200 and verdict["valid"] is True and verdict["unchained"] == [], verdict
    status, page = api.call("GET", f"/api/runs/{RUN}/audit")
    assert status == 200, page
    records = page["records"]
    decided = [r["data"] for r in records if r["type"] == "policy_decided"]
    assert [(d["rule"], d["outcome"]) for d in decided] == [
        ("read-only", "allow"),
        ("no-network", "deny"),
        ("deploys", "ask"),
        (None, "ask"),
    ]
    assert {d["policy_version"] for d in decided} == {policy.version}
    answered = [r["data"]["by"] for r in records if r["type"] == "interaction_answered"]
    assert answered == ["policy:read-only", "policy:no-network"]
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))


def test_a_rule_decides_before_a_remembered_grant_and_no_rule_leaves_it_to_the_grant(api: Api) -> None:
    _, first = api.ask("echo hi")  # no policy yet: a person approves and remembers Bash for the run
    remember = {"scope": "run", "expires_in_seconds": 600}
    assert api.answer(first["interaction_id"], {"decision": "approve", "remember": remember}, by="alice")[0] == 200
    api.use()
    _, denied = api.ask("curl x")  # the forbid stands: the policy saw the grant (`context.granted`)
    assert (denied["decision"]["decision"], denied["decision"]["outcome"]) == ("deny", "policy")
    _, granted = api.ask("python x.py")  # no rule matched: the grant answers, as before
    assert granted["decision"]["outcome"] == "grant"
    applied = {d["interaction_id"]: d["applied"] for d in api.policy_decided()}
    assert applied == {denied["interaction_id"]: True, granted["interaction_id"]: False}


def test_a_quorum_larger_than_the_named_approvers_needs_every_one_of_them(api: Api) -> None:
    rule = '@id("all-of-us") @ask @approvers("alice,bob") @quorum("3") permit(principal, action, resource);'
    api.core.policy = FixedPolicy(Policy.load(rule))
    _, asked = api.ask("anything")
    approval = asked["interaction_id"]
    assert api.answer(approval, {"decision": "approve"}, by="carol")[0] == 403  # never others
    assert api.answer(approval, {"decision": "approve"}, by="alice")[1]["status"] == "pending"  # never fewer
    assert api.answer(approval, {"decision": "approve"}, by="bob")[1]["status"] == "answered"
