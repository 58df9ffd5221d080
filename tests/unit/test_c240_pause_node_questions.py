"""Issue 28 item 12, the seed's C240: async questions belong on agent nodes. A node that is itself a
person's pause (a blocking ask, an interrupt, a review gate) IS the blocking question: `baton check`
refuses a Task posting questions as that node, and at run time the ask is refused with a 422 naming why."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts import AskRequest
from baton.domain.gate_payloads import ParkPayload
from baton.errors import ValidationFailedError
from baton.services.questions import QuestionService
from baton.services.runs import RunService
from baton.workflows.asl import check_definition
from baton.workflows.asl_rules import LAMBDA_RETRIER

if TYPE_CHECKING:
    from baton.services.core import Core

HUMAN_PAUSE = json.loads((Path(__file__).parents[2] / "statemachines" / "human_pause.asl.json").read_text())


def _asking(node: str) -> dict[str, Any]:
    """The demo agent's Task, posting questions as `node` before the pause."""
    return {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {
            "FunctionName": "${DemoAgentFunctionArn}",
            "Payload": {"run_id.$": "$.run_id", "node": node, "questions.$": "$.input.questions"},
        },
        "ResultPath": "$.posted",
        "Retry": [LAMBDA_RETRIER],
        "Next": "AskHuman",
    }


def _flow(asking_node: str) -> dict[str, Any]:
    flow = copy.deepcopy(HUMAN_PAUSE)
    flow["States"]["Draft"] = _asking(asking_node)
    flow["StartAt"] = "Draft"
    return flow


def _c240(definition: dict[str, Any]) -> list[str]:
    return [f"{p.state}: {p.message}" for p in check_definition(definition, "flow.asl.json") if p.code == "C240"]


def test_check_refuses_questions_posted_as_the_node_of_a_blocking_ask() -> None:
    [found] = _c240(_flow("approve"))  # human_pause's AskHuman parks node "approve"
    assert found.startswith("Draft: ") and "node 'approve'" in found and "AskHuman" in found


def test_check_passes_questions_from_an_agent_node_and_the_pauses_own_handlers() -> None:
    assert _c240(_flow("draft")) == []
    assert _c240(HUMAN_PAUSE) == []  # its RecordTimeout names node "approve" but asks nothing


def test_check_refuses_questions_posted_as_a_review_gate() -> None:
    flow = _flow("ship_review")
    flow["States"]["Draft"]["Next"] = "Ship"
    flow["StartAt"] = "Draft"
    flow["States"]["Ship"] = {
        "Type": "Task",
        "Resource": "arn:aws:states:::states:startExecution.sync:2",
        "Parameters": {
            "StateMachineArn": "${ReviewGateStateMachineArn}",
            "Input": {"run_id.$": "$.run_id", "input": {"gate": "ship_review", "run_branch": "b", "repo_path": "/r"}},
        },
        "TimeoutSeconds": 3600,
        "End": True,
    }
    [found] = _c240(flow)
    assert "node 'ship_review'" in found and "Ship" in found


def test_an_ask_on_a_node_that_is_a_pause_is_refused_at_run_time(core: Core, runs: RunService) -> None:
    runs.park(ParkPayload(run_id="r1", node="approve", token="tok", prompt="Ship it?", timeout_seconds=60))
    questions = QuestionService(core)
    with pytest.raises(ValidationFailedError) as refused:
        questions.ask("r1", AskRequest(node="approve", question="Which colour?"), caller="agent")
    assert refused.value.details["reason"] == "node_is_a_human_pause" and refused.value.details["kind"] == "ask"
    assert "C240" in refused.value.message
    assert [i.request.kind for i in core.store.list_run_interactions("r1")] == ["ask"]  # nothing stored
    assert (
        questions.ask("r1", AskRequest(node="draft", question="Which colour?"), caller="agent")["status"] == "pending"
    )
