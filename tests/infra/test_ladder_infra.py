"""Issue 13 item 3, deployed: the one timer machine per park (statemachines/gate_deadline.asl.json) walks
a pause's ladder with its own Wait and the same gate_deadline Lambda: after each call a Choice on the
Lambda's `next` loops back to the Wait (the next step, then the deadline) or ends the execution. No
polling loop, no second machine, nothing else it may invoke (test_deadline_timer.py holds the role)."""

from __future__ import annotations

from typing import Any

import pytest

from baton.domain.deadline import TIMER_STATE_MACHINE
from tests.infra.conftest import PREFIX, resources
from tests.infra.test_stack import _definitions

pytestmark = pytest.mark.infra


def test_the_timer_machine_loops_wait_then_lambda_over_the_ladder_steps(cfn: dict[str, Any]) -> None:
    states = _definitions(cfn)[f"{PREFIX}-{TIMER_STATE_MACHINE}"]["States"]
    assert states["EndPause"]["Next"] == "NextStep"
    assert states["EndPause"]["Parameters"]["Payload"]["step.$"] == "$.step"  # which rung fired
    choice = states["NextStep"]
    assert choice["Type"] == "Choice" and choice["Default"] == "Done" and states["Done"]["Type"] == "Succeed"
    (rule,) = choice["Choices"]
    assert rule == {"Variable": "$.next", "IsNull": False, "Next": "TakeNextStep"}
    take = states["TakeNextStep"]
    assert take["Type"] == "Pass" and take["InputPath"] == "$.next" and take["Next"] == "UntilDeadline"
    # Every wait in the loop is a Step Functions Wait (timer time, not a Lambda sleeping or polling).
    waits = [s for s in states.values() if s["Type"] == "Wait"]
    assert [w["SecondsPath"] for w in waits] == ["$.wait_seconds"]
    tasks = [s for s in states.values() if s["Type"] == "Task"]
    assert [t["Parameters"]["FunctionName"] for t in tasks] == ["fn:gate_deadline"]


def test_there_is_still_one_timer_machine(cfn: dict[str, Any]) -> None:
    names = [m["Properties"]["StateMachineName"] for m in resources(cfn, "AWS::StepFunctions::StateMachine").values()]
    assert [n for n in names if "deadline" in n or "ladder" in n] == [f"{PREFIX}-{TIMER_STATE_MACHINE}"]


def test_the_helpers_refuse_an_await_ladder_with_a_default_and_a_review_default_that_could_merge() -> None:
    from infra.gate_checks import GateCheckError, check_await_ladder, check_review

    check_await_ladder("Stack/Sync", 60, {"remind_after": 10, "on_timeout": "use_question_defaults"})
    with pytest.raises(GateCheckError, match="C261"):
        check_await_ladder("Stack/Sync", 60, {"on_timeout": {"default": "yes"}})
    with pytest.raises(GateCheckError, match="C261"):
        check_await_ladder("Stack/Sync", 60, {"remind_after": 60})
    config = {"gate": "ship", "run_branch": "baton/run", "timeout_seconds": 60}
    check_review("Stack/Review", {**config, "ladder": {"on_timeout": {"default": "request_changes"}}})
    with pytest.raises(GateCheckError, match="C260"):
        check_review("Stack/Review", {**config, "ladder": {"on_timeout": {"default": "approve_merge"}}})
