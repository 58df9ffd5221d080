"""The deployed shape of the gates' timers (issue 17 item 4): one Standard state machine
(statemachines/gate_deadline.asl.json: a Wait, then the gate_deadline Lambda) whose role invokes only
that Lambda; only the parks (and the API, for tool-form awaits) may start it, and nothing may start it
as a workflow or send task tokens to it. cdk-nag runs over the whole stack in test_nag.py."""

from __future__ import annotations

from typing import Any

import pytest

from baton.domain.deadline import TIMER_STATE_MACHINE
from tests.infra.conftest import PREFIX, resources
from tests.infra.test_stack import _actions, _definitions, _flatten, _resources

pytestmark = pytest.mark.infra

TIMER_ARN = f"arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:stateMachine:{PREFIX}-{TIMER_STATE_MACHINE}"
# Whoever posts a question with remind_after / escalate_after / on_timeout, or parks a gate, starts its timer:
# the parks, the API (tool-form awaits and questions), MCP's and the demo agent's questions. The roles check
# (tests/roles_check.py, after the tests in make test) holds the recorded StartExecution calls to this.
STARTERS = {"park", "await_gate", "interrupt_park", "review_park", "api", "mcp", "demo_agent"}


def _role_of(cfn: dict[str, Any], function: str) -> str:
    for fn in resources(cfn, "AWS::Lambda::Function").values():
        if fn["Properties"]["FunctionName"] == f"{PREFIX}-{function}":
            logical_id: str = fn["Properties"]["Role"]["Fn::GetAtt"][0]
            return logical_id
    raise AssertionError(function)


def _statements_of_role(cfn: dict[str, Any], role: str) -> list[dict[str, Any]]:
    found = []
    for policy in resources(cfn, "AWS::IAM::Policy").values():
        if {"Ref": role} in policy["Properties"].get("Roles", []):
            found += policy["Properties"]["PolicyDocument"]["Statement"]
    return found


def test_the_timer_machine_waits_then_invokes_the_deadline_lambda(cfn: dict[str, Any]) -> None:
    definition = _definitions(cfn)[f"{PREFIX}-{TIMER_STATE_MACHINE}"]
    wait, task = (definition["States"][name] for name in ("UntilDeadline", "EndPause"))
    assert definition["StartAt"] == "UntilDeadline" and wait["Type"] == "Wait" and wait["Next"] == "EndPause"
    assert wait["SecondsPath"] == "$.wait_seconds"
    assert task["Parameters"]["FunctionName"] == "fn:gate_deadline" and task["TimeoutSeconds"] > 0
    machines = resources(cfn, "AWS::StepFunctions::StateMachine")
    (timer,) = [
        m for m in machines.values() if m["Properties"]["StateMachineName"] == f"{PREFIX}-{TIMER_STATE_MACHINE}"
    ]
    assert timer["Properties"].get("StateMachineType", "STANDARD") == "STANDARD"


def test_the_timer_machine_may_invoke_only_the_deadline_lambda(cfn: dict[str, Any]) -> None:
    machines = resources(cfn, "AWS::StepFunctions::StateMachine")
    (timer,) = [
        m for m in machines.values() if m["Properties"]["StateMachineName"] == f"{PREFIX}-{TIMER_STATE_MACHINE}"
    ]
    role = timer["Properties"]["RoleArn"]["Fn::GetAtt"][0]
    invoked = [
        _flatten(r)
        for s in _statements_of_role(cfn, role)
        if "lambda:InvokeFunction" in _actions(s)
        for r in _resources(s)
    ]
    functions = {k: v["Properties"]["FunctionName"] for k, v in resources(cfn, "AWS::Lambda::Function").items()}
    named = {functions[target.strip("<>").split(".")[0]] for target in invoked if target.startswith("<")}
    assert named == {f"{PREFIX}-gate_deadline"}, invoked
    for statement in _statements_of_role(cfn, role):
        assert not any(a.startswith("states:") or a.startswith("dynamodb:") for a in _actions(statement)), statement


def test_only_the_parks_may_start_a_timer_and_nothing_sends_tokens_to_it(cfn: dict[str, Any]) -> None:
    starters = set()
    for fn in resources(cfn, "AWS::Lambda::Function").values():
        name = fn["Properties"]["FunctionName"].removeprefix(f"{PREFIX}-")
        for statement in _statements_of_role(cfn, _role_of(cfn, name)):
            targets = {_flatten(r) for r in _resources(statement)}
            if TIMER_ARN not in targets:
                continue
            assert _actions(statement) == ["states:StartExecution"] and targets == {TIMER_ARN}, (name, statement)
            starters.add(name)
    assert starters == STARTERS


def test_the_deadline_lambda_sends_task_failures_and_starts_nothing(cfn: dict[str, Any]) -> None:
    actions = {a for s in _statements_of_role(cfn, _role_of(cfn, "gate_deadline")) for a in _actions(s)}
    assert {"states:SendTaskFailure", "dynamodb:GetItem", "dynamodb:Query"} <= actions
    assert "states:StartExecution" not in actions


def test_whoever_settles_a_pause_may_stop_its_timer_and_only_its_executions(cfn: dict[str, Any]) -> None:
    """A settlement stops the pause's timer (`Core.stop_timer`): the token senders' releases, and the
    answers, cancels and withdrawals of pauses no gate parks by the functions that start timers (MCP's
    `tasks/cancel` of a question has no token to send). Only the timer machine's executions."""
    timers = TIMER_ARN.replace(":stateMachine:", ":execution:") + ":*"
    stoppers = set()
    for fn in resources(cfn, "AWS::Lambda::Function").values():
        name = fn["Properties"]["FunctionName"].removeprefix(f"{PREFIX}-")
        for statement in _statements_of_role(cfn, _role_of(cfn, name)):
            targets = {_flatten(r) for r in _resources(statement)}
            if timers in targets:
                assert _actions(statement) == ["states:StopExecution"] and targets == {timers}, (name, statement)
                stoppers.add(name)
    assert STARTERS | {"reconcile", "gate_deadline", "slack_worker"} <= stoppers
