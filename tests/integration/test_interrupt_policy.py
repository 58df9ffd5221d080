"""A policy decides an interrupt that declares the action it gates (issue 31, `pass_gate`), on moto through
the real resolver: an enforced allow resumes it at once with `onAllow` by `policy:<rule>` (nobody notified),
a deny with `onDeny`, an ask goes to the rule's approvers with its quorum, no rule matched and a shadow
policy change nothing, an interrupt without an action never asks the policy, a hosted one's workflow gets
the decided value, and every decision is a `policy_decided` record in the run's verified decision chain."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from baton.api import deps
from baton.api.auth import operator_token
from baton.contracts.policy import PolicyMode
from baton.events import EventType
from baton.ids import parse_iso
from baton.policy.engine import Policy
from baton.policy.source import FixedPolicy
from tests.conftest import wait_for
from tests.fakes.notifier import RecordingNotifier
from tests.integration.resolver import TOKEN, ResolverOnMoto

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

RUN = "gate-policy-1"
POLICY = """
@id("staging-ok")
@reason("staging is safe")
permit(principal, action == Action::"pass_gate", resource == Gate::"deploy")
when { resource.hasTag("env") && resource.getTag("env") == "staging" };

@id("prod-needs-two")
@ask
@approvers("alice,bob")
@quorum("2")
@timeout("30")
permit(principal, action == Action::"pass_gate", resource == Gate::"deploy")
when { resource.hasTag("env") && resource.getTag("env") == "prod" };

@id("no-friday")
@reason("no deploys to the lab")
forbid(principal, action == Action::"pass_gate", resource == Gate::"deploy")
when { resource.hasTag("env") && resource.getTag("env") == "lab" };
"""
SCHEMA = {"type": "enum", "enum": ["go", "stop"]}


def action(env: str, **more: Any) -> dict[str, Any]:
    return {"name": "deploy", "arguments": {"env": env}, "onAllow": "go", "onDeny": "stop", **more}


class Api(ResolverOnMoto):
    def __init__(self, stack: MotoStack) -> None:
        super().__init__(stack)
        self.notifier = RecordingNotifier()
        self.core.notifier = self.notifier

    def use(self, mode: PolicyMode = "enforce") -> Policy:
        policy = Policy.load(POLICY, mode=mode)
        self.core.policy = FixedPolicy(policy)
        return policy

    def interrupt(self, gated: dict[str, Any] | None, **more: Any) -> tuple[int, Any]:
        body = {"sessionId": RUN, "prompt": "Deploy?", "schema": SCHEMA, "timeoutMs": 60_000, **more}
        if gated is not None:
            body["action"] = gated
        return self.call("POST", "/api/v1/interrupts", body)

    def resume(self, interrupt_id: str, value: Any, *, by: str) -> tuple[int, Any]:
        token = operator_token(TOKEN, by)
        return self.call("POST", f"/api/v1/interrupts/{interrupt_id}/resume", {"input": value}, token=token)

    def policy_decided(self, run_id: str = RUN) -> list[dict[str, Any]]:
        events = self.core.store.list_events(run_id, limit=1000)
        return [e.data for e in events if e.type == EventType.POLICY_DECIDED]


@pytest.fixture
def api(moto_stack: MotoStack) -> Iterator[Api]:
    yield Api(moto_stack)
    deps.set_services_provider(deps._default_provider)


def test_an_allowed_action_resumes_at_once_with_on_allow_by_its_rule(api: Api) -> None:
    policy = api.use()
    status, created = api.interrupt(action("staging"))
    assert status == 201, created
    assert (created["status"], created["value"], created["resolvedBy"]) == ("answered", "go", "policy:staging-ok")
    assert api.notifier.notifications == []  # a person is never asked
    [decided] = api.policy_decided()
    assert decided == {
        "interaction_id": created["id"],
        "action": "pass_gate",
        "target": "deploy",
        "outcome": "allow",
        "rule": "staging-ok",
        "reason": "staging is safe",
        "policy_version": policy.version,
        "mode": "enforce",
        "applied": True,
    }
    status, again = api.resume(created["id"], "stop", by="alice")  # decided: a person's resume lost
    assert status == 409, again
    assert api.core.store.get_run(RUN).status == "running"  # nothing is pending: the session runs again


def test_a_denied_action_resumes_with_on_deny_never_the_allow_value(api: Api) -> None:
    api.use()
    status, created = api.interrupt(action("lab"))
    assert status == 201, created
    assert (created["status"], created["value"], created["resolvedBy"]) == ("answered", "stop", "policy:no-friday")
    assert api.notifier.notifications == []
    [decided] = api.policy_decided()
    assert (decided["outcome"], decided["reason"], decided["applied"]) == ("deny", "no deploys to the lab", True)


def test_an_ask_goes_to_the_rules_approvers_with_its_quorum_and_shorter_deadline(api: Api) -> None:
    api.use()
    status, created = api.interrupt(action("prod"))
    assert status == 201 and created["status"] == "pending", created
    deadline = parse_iso(created["expiresAt"]) - parse_iso(created["createdAt"])
    assert deadline.total_seconds() == 30  # the rule's 30 s, not the interrupt's 60
    assert [n.event for n in api.notifier.notifications] == ["interrupt_created"]
    status, refused = api.resume(created["id"], "go", by="carol")  # not an approver
    assert status == 403, refused
    status, first = api.resume(created["id"], "go", by="alice")
    assert status == 200 and first["interrupt"]["status"] == "pending", first
    status, second = api.resume(created["id"], "go", by="bob")
    assert status == 200 and second["interrupt"]["status"] == "answered", second
    [decided] = api.policy_decided()
    assert (decided["outcome"], decided["rule"], decided["applied"]) == ("ask", "prod-needs-two", True)


def test_no_rule_matched_asks_a_person_as_before(api: Api) -> None:
    policy = api.use()
    status, created = api.interrupt(action("dev"))
    assert status == 201 and created["status"] == "pending", created
    assert [n.event for n in api.notifier.notifications] == ["interrupt_created"]
    assert api.resume(created["id"], "go", by="alice")[0] == 200
    [decided] = api.policy_decided()
    assert (decided["outcome"], decided["rule"], decided["policy_version"]) == ("ask", None, policy.version)


def test_a_shadow_policy_changes_nothing_and_logs_what_it_would_have_decided(api: Api) -> None:
    api.use("shadow")
    allowed = api.interrupt(action("staging"), key="a")[1]
    denied = api.interrupt(action("lab"), key="d")[1]
    assert allowed["status"] == denied["status"] == "pending"
    assert len(api.notifier.notifications) == 2
    decided = {d["interaction_id"]: d for d in api.policy_decided()}
    assert (decided[allowed["id"]]["outcome"], decided[allowed["id"]]["applied"]) == ("allow", False)
    assert (decided[denied["id"]]["outcome"], decided[denied["id"]]["mode"]) == ("deny", "shadow")
    assert not decided[denied["id"]]["applied"]


def test_without_an_action_the_policy_is_not_asked(api: Api) -> None:
    asked: list[object] = []

    class Counting:
        def current(self) -> Policy:
            asked.append(1)
            return Policy.load(POLICY)

    api.core.policy = Counting()
    status, created = api.interrupt(None)
    assert status == 201 and created["status"] == "pending", created
    assert asked == [] and api.policy_decided() == []


def test_a_resume_value_the_schema_refuses_is_a_422_at_the_field(api: Api) -> None:
    api.use()
    status, refused = api.interrupt(action("staging", onAllow="maybe"))
    assert status == 422 and refused["path"] == "action.onAllow", refused
    status, refused = api.interrupt(action("staging", onDeny="go"))  # a deny must not pass as an allow
    assert status == 422 and refused["path"] == "action.onDeny", refused
    assert api.core.store.list_run_interactions(RUN, kind="interrupt") == []


def test_the_decision_chain_verifies_with_each_policy_decision_in_it(api: Api) -> None:
    policy = api.use()
    for env in ("staging", "lab", "prod", "dev"):
        assert api.interrupt(action(env), key=env)[0] == 201
    status, verdict = api.call("GET", f"/api/runs/{RUN}/audit/verify")
    assert status == 200 and verdict["valid"] is True and verdict["unchained"] == [], verdict
    status, page = api.call("GET", f"/api/runs/{RUN}/audit")
    assert status == 200, page
    records = page["records"]
    decided = [r["data"] for r in records if r["type"] == "policy_decided"]
    assert [(d["rule"], d["outcome"]) for d in decided] == [
        ("staging-ok", "allow"),
        ("no-friday", "deny"),
        ("prod-needs-two", "ask"),
        (None, "ask"),
    ]
    assert {d["policy_version"] for d in decided} == {policy.version}
    resumed = [r["data"]["by"] for r in records if r["type"] == "interrupt_resumed"]
    assert resumed == ["policy:staging-ok", "policy:no-friday"]


def test_a_hosted_interrupt_passes_its_gate_with_the_decided_value(moto_stack: MotoStack) -> None:
    services = moto_stack.services
    services.core.policy = FixedPolicy(Policy.load(POLICY))
    body = {"prompt": "Deploy?", "schema": SCHEMA, "timeout_seconds": 60, "action": action("staging")}
    started = services.runs.start("interrupt", body, run_id="gate-hosted", caller="op")
    sfn = moto_stack.clients["stepfunctions"]

    def described() -> dict[str, Any]:
        result: dict[str, Any] = sfn.describe_execution(executionArn=started.execution_arn)
        return result

    wait_for(lambda: described()["status"] != "RUNNING")
    output = json.loads(described()["output"])
    assert (output["input"], output["resolved_by"]) == ("go", "policy:staging-ok"), output
    assert services.runs.get("gate-hosted")["status"] == "succeeded"
    types = [e.type for e in services.core.store.list_events("gate-hosted", limit=1000)]
    assert EventType.POLICY_DECIDED in types and EventType.RUN_RESUMED in types


def test_a_rule_decides_a_quorum_interrupt_at_once_nobody_votes(api: Api) -> None:
    api.use()
    quorum = {"approvals": 2, "approvers": ["alice", "bob"]}
    status, created = api.interrupt(action("lab"), approval=quorum)
    assert status == 201, created
    assert (created["status"], created["value"], created["resolvedBy"]) == ("answered", "stop", "policy:no-friday")
    assert api.notifier.notifications == []


def test_a_policy_that_fails_never_passes_the_gate_a_person_decides(api: Api) -> None:
    class Broken:
        version = "sha256:broken"
        mode: PolicyMode = "enforce"

        def decide(self, query: object) -> None:
            raise RuntimeError("cedar blew up")

    class BrokenSource:
        def current(self) -> Any:
            return Broken()

    api.core.policy = BrokenSource()
    status, created = api.interrupt(action("staging"))
    assert status == 201 and created["status"] == "pending", created
    assert [n.event for n in api.notifier.notifications] == ["interrupt_created"]
    [decided] = api.policy_decided()
    assert decided["outcome"] == "ask" and decided.get("rule") is None and "cedar blew up" in decided["reason"]


def test_a_rules_resume_that_fails_leaves_the_interrupt_to_a_person(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    from baton.services.interrupts import InterruptService

    def failing(*args: object, **kwargs: object) -> None:
        raise RuntimeError("throttled")

    api.use()
    monkeypatch.setattr(InterruptService, "resume", failing)
    status, created = api.interrupt(action("staging"))
    assert status == 201 and created["status"] == "pending", created
    assert [n.event for n in api.notifier.notifications] == ["interrupt_created"]
