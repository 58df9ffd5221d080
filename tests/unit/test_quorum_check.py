"""`baton check` (C250) refuses a literal quorum that can never be met in a gate Task's payload; the
hosted interrupt gate takes its quorum from the run's input (its payload model and input schema)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baton.domain.gate_payloads import InterruptParkPayload
from baton.workflows.asl import check_definition
from baton.workflows.asl_rules import LAMBDA_RETRIER

ROOT = Path(__file__).resolve().parents[2]


def _gate(approval: Any) -> dict[str, Any]:
    park = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
        "Parameters": {
            "FunctionName": "${InterruptParkFunctionArn}",
            "Payload": {
                "token.$": "$$.Task.Token",
                "run_id.$": "$.run_id",
                "node": "approve",
                "request": {"prompt": "ship?", "timeout_seconds": 600, "approval": approval},
            },
        },
        "TimeoutSeconds": 605,  # the declared 600 s + baton.domain.deadline.GRACE_SECONDS (C245)
        "Retry": [LAMBDA_RETRIER],
        "End": True,
    }
    return {"StartAt": "Approve", "States": {"Approve": park}}


@pytest.mark.parametrize(
    "approval",
    [
        {"approvals": 3, "approvers": ["alice", "bob"]},
        {"approvals": 0},
        {"approvals": 1, "rejection": "most"},
        {"approvals": 1, "approvers": ["alice", "alice"]},
    ],
)
def test_a_quorum_that_can_never_be_met_is_c250(approval: dict[str, Any]) -> None:
    [problem] = check_definition(_gate(approval), "flow.asl.json")
    assert problem.code == "C250" and problem.state == "Approve"


@pytest.mark.parametrize(
    "approval",
    [{"approvals": 2, "approvers": ["alice", "bob"]}, {"approvals": 5, "approvers": ["group:release"]}, {}],
)
def test_a_quorum_that_can_be_met_passes(approval: dict[str, Any]) -> None:
    assert check_definition(_gate(approval), "flow.asl.json") == []


def test_the_hosted_interrupt_gate_reads_its_quorum_from_the_input() -> None:
    payload = InterruptParkPayload.model_validate(
        {
            "token": "t",
            "run_id": "r1",
            "node": "approve",
            "request": {"prompt": "ship?", "timeout_seconds": 60, "approval": {"approvals": 2}},
        }
    )
    assert payload.request.approval is not None and payload.request.approval.approvals == 2
    schema = json.loads((ROOT / "statemachines" / "interrupt.input.schema.json").read_text())
    assert schema["properties"]["approval"]["properties"]["approvals"]["minimum"] == 1
