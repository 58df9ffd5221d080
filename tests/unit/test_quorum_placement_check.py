"""`baton check` C270/C271: where a quorum is given. A quorum on an await gate would be ignored (C270);
a park pause's quorum from an input field the workflow's input schema does not declare would fail the
Task at run time (C271). The shipped human_pause declares and defaults its `approval`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from baton.workflows.asl import check_definition, check_file
from baton.workflows.asl_rules import LAMBDA_RETRIER
from baton.workflows.resources import WORKFLOW_DEFAULTS

ROOT = Path(__file__).resolve().parents[2]


def _task(function: str, payload: dict[str, Any]) -> dict[str, Any]:
    task = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
        "Parameters": {"FunctionName": function, "Payload": {"token.$": "$$.Task.Token", **payload}},
        "TimeoutSeconds": 600,
        "Retry": [LAMBDA_RETRIER],
        "End": True,
    }
    return {"StartAt": "Gate", "States": {"Gate": task}}


def test_a_quorum_on_an_await_gate_is_c270() -> None:
    for approval in ({"approval": {"approvals": 2}}, {"approval.$": "$.input.approval"}):
        gate = _task("${AwaitGateFunctionArn}", {"run_id.$": "$.run_id", "gate": "sync", **approval})
        [problem] = check_definition(gate, "flow.asl.json")
        assert problem.code == "C270" and "ignore a quorum" in problem.message


def test_a_park_quorum_from_an_undeclared_input_field_is_c271_and_a_declared_one_passes() -> None:
    park = _task("${ParkFunctionArn}", {"run_id.$": "$.run_id", "node": "approve", "approval.$": "$.input.quorum"})
    [problem] = check_definition(park, "flow.asl.json", input_schema={"type": "object", "properties": {}})
    assert problem.code == "C271" and "input.quorum" in problem.message
    declared = {"type": "object", "properties": {"quorum": {"type": ["object", "null"]}}}
    assert check_definition(park, "flow.asl.json", input_schema=declared) == []
    assert check_definition(park, "flow.asl.json") == []  # no schema: judged at run time


def test_the_shipped_human_pause_passes_its_quorum_and_defaults_it() -> None:
    asl = json.loads((ROOT / "statemachines/human_pause.asl.json").read_text())
    assert asl["States"]["AskHuman"]["Parameters"]["Payload"]["approval.$"] == "$.input.approval"
    schema = json.loads((ROOT / "statemachines/human_pause.input.schema.json").read_text())
    assert schema["properties"]["approval"]["type"] == ["object", "null"]
    assert WORKFLOW_DEFAULTS["human_pause"]["approval"] is None
    assert check_file(ROOT / "statemachines/human_pause.asl.json") == []
