"""`baton check` C245: a parking Task's own TimeoutSeconds must come GRACE_SECONDS after the timeout_seconds
it sends Baton (baton.domain.deadline), or Step Functions may time it out as Baton answers at the deadline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from baton.domain.deadline import GRACE_SECONDS
from baton.workflows.asl import check_definition, check_directory
from baton.workflows.asl_rules import LAMBDA_RETRIER

STATEMACHINES = Path(__file__).parents[2] / "statemachines"


def _park(function: str, payload: dict[str, Any], **timeouts: Any) -> dict[str, Any]:
    park = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
        "Parameters": {
            "FunctionName": function,
            "Payload": {"token.$": "$$.Task.Token", "run_id.$": "$.run_id", **payload},
        },
        "Retry": [LAMBDA_RETRIER],
        "End": True,
        **timeouts,
    }
    return {"StartAt": "Park", "States": {"Park": park}}


def _grace(definition: dict[str, Any]) -> list[str]:
    return [p.message for p in check_definition(definition, "flow.asl.json") if p.code == "C245"]


ASK = ("${ParkFunctionArn}", {"node": "approve", "kind": "ask", "prompt": "Ship?", "timeout_seconds": 600})
INTERRUPT = ("${InterruptParkFunctionArn}", {"node": "edit", "request": {"prompt": "Fix", "timeout_seconds": 600}})
OWN_WAIT = ("arn:aws:lambda:eu-west-1:123456789012:function:my-pause", {"timeout_seconds": 600})


@pytest.mark.parametrize(("function", "payload"), [ASK, INTERRUPT, OWN_WAIT], ids=["ask", "interrupt", "own"])
@pytest.mark.parametrize("task_timeout", [600, 600 + GRACE_SECONDS - 1, 300])
def test_a_task_timeout_without_the_grace_is_c245_naming_both_numbers_and_the_fix(
    function: str, payload: dict[str, Any], task_timeout: int
) -> None:
    found = _grace(_park(function, payload, TimeoutSeconds=task_timeout))
    assert len(found) == 1
    assert f"TimeoutSeconds {task_timeout} " in found[0] and "timeout_seconds 600" in found[0]
    assert f"set TimeoutSeconds to at least {600 + GRACE_SECONDS}" in found[0]


@pytest.mark.parametrize(("function", "payload"), [ASK, INTERRUPT, OWN_WAIT], ids=["ask", "interrupt", "own"])
@pytest.mark.parametrize("task_timeout", [600 + GRACE_SECONDS, 7200])
def test_a_task_timeout_with_the_grace_passes(function: str, payload: dict[str, Any], task_timeout: int) -> None:
    assert check_definition(_park(function, payload, TimeoutSeconds=task_timeout), "flow.asl.json") == []


def test_paths_are_not_judged() -> None:
    function, payload = ASK
    from_path = {**{k: v for k, v in payload.items() if k != "timeout_seconds"}, "timeout_seconds.$": "$.timeout"}
    assert _grace(_park(function, payload, TimeoutSecondsPath="$.task_timeout.seconds")) == []
    assert _grace(_park(function, from_path, TimeoutSeconds=60)) == []
    # A token wait that sends no timeout_seconds is not a Baton pause's: nothing to compare with.
    assert _grace(_park(OWN_WAIT[0], {}, TimeoutSeconds=60)) == []


def test_every_shipped_state_machine_still_passes() -> None:
    assert check_directory(STATEMACHINES) == []
