"""Identical tool-approval requests at the same moment (issue 30): 50 threads released by one barrier post
the same call through the real API handler (moto as DynamoDB). Exactly one approval is created and every
request returns it; once it is used, the next identical call gets a new approval, again exactly one."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from baton.domain.tool_calls import ToolCall
from tests.integration.racing import RACERS, call_api, event_types, operator, race

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

CALL: dict[str, Any] = {"tool": "run_shell", "arguments": {"command": "make deploy"}}


def _request(stack: MotoStack, run_id: str) -> list[tuple[int, dict[str, Any]]]:
    body = {"call": CALL, "reason": "deploy", "timeout_seconds": 600, "session": "sess-1", "agent": "claude-code"}
    return race(lambda n: call_api(stack, operator(n), "POST", f"/api/runs/{run_id}/tool-approvals", body))


def _one_approval(results: list[tuple[int, dict[str, Any]]]) -> str:
    assert Counter(status for status, _ in results) == {201: 1, 200: RACERS - 1}, [s for s, _ in results]
    ids = {body["interaction_id"] for _, body in results}
    assert len(ids) == 1, ids
    return ids.pop()


def test_fifty_identical_requests_make_one_approval_and_a_used_one_is_replaced_once(moto_stack: MotoStack) -> None:
    run_id = "race-tool-approval"
    first = _one_approval(_request(moto_stack, run_id))
    store = moto_stack.services.core.store
    assert [i.interaction_id for i in store.list_run_interactions(run_id, kind="tool_approval")] == [first]
    assert event_types(moto_stack, run_id)["human_input_requested"] == 1

    answer = {"answer": {"decision": "approve"}}
    status, _ = call_api(moto_stack, operator(0), "POST", f"/api/runs/{run_id}/interactions/{first}/answer", answer)
    assert status == 200
    digest = ToolCall.model_validate(CALL).digest
    consume = {"digest": digest}
    status, _ = call_api(moto_stack, operator(0), "POST", f"/api/runs/{run_id}/tool-approvals/{first}/consume", consume)
    assert status == 200

    second = _one_approval(_request(moto_stack, run_id))  # used: the same call needs (exactly) a new approval
    assert second != first
    assert len(store.list_run_interactions(run_id, kind="tool_approval")) == 2
    assert event_types(moto_stack, run_id)["human_input_requested"] == 2


ALLOW_LISTING = """
@id("read-only") permit(principal, action == Action::"call_tool", resource in Tool::"run_shell")
when { resource.hasTag("command") && resource.getTag("command") like "ls*" };
"""


def test_fifty_calls_a_policy_answers_at_once_chain_every_decision_with_their_creation(moto_stack: MotoStack) -> None:
    """Each approval's events are chained in its creating write: racers lose the run's head to each other
    and chain after the winner, so every decision is in the log once, in one verified chain."""
    from baton.policy.engine import Policy
    from baton.policy.source import FixedPolicy

    run_id = "race-tool-policy"
    moto_stack.services.core.policy = FixedPolicy(Policy.load(ALLOW_LISTING))

    def request(n: int) -> tuple[int, dict[str, Any]]:
        call = {"tool": "run_shell", "arguments": {"command": f"ls {n}"}}
        body = {"call": call, "reason": "list", "timeout_seconds": 600}
        return call_api(moto_stack, operator(n), "POST", f"/api/runs/{run_id}/tool-approvals", body)

    results = race(request)
    assert [status for status, _ in results] == [201] * RACERS, results
    assert {body["decision"]["decided_by"] for _, body in results} == {"policy:read-only"}
    counted = event_types(moto_stack, run_id)
    assert (counted["policy_decided"], counted["interaction_answered"]) == (RACERS, RACERS), counted
    status, verdict = call_api(moto_stack, operator(0), "GET", f"/api/runs/{run_id}/audit/verify", None)
    assert status == 200 and verdict["valid"] is True and verdict["unchained"] == [], verdict
    assert moto_stack.services.core.store.read_audit(run_id).head.seq == 2 * RACERS
