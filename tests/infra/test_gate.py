"""BatonGate: a Baton gate in a user's state machine as one Task state, with its grants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.infra


def _user_stack(outdir: Path) -> tuple[Any, Any, Any]:
    from aws_cdk import App, Duration, Stack
    from aws_cdk import aws_stepfunctions as sfn

    from infra.gate import BatonGate, BatonRef

    app = App(outdir=str(outdir))
    stack = Stack(app, "UserFlow")
    baton = BatonRef.from_exports(stack, "Baton", team="ci")
    gate = BatonGate.ask(
        stack, "Approve", baton=baton, node="approve", prompt="Ship it?", timeout=Duration.hours(4), notify=["slack"]
    )
    timed_out = sfn.Fail(stack, "NobodyAnswered", error="HumanInputTimedOut")
    gate.add_catch(timed_out, errors=[sfn.Errors.TIMEOUT])
    machine = sfn.StateMachine(
        stack, "Flow", definition_body=sfn.DefinitionBody.from_chainable(gate.next(sfn.Succeed(stack, "Done")))
    )
    BatonGate.grant_resume(machine, baton=baton)
    return app, stack, gate


def test_gate_is_a_token_wait_with_timeout_and_payload(tmp_path: Path) -> None:
    from aws_cdk import Stack

    _, _, gate = _user_stack(tmp_path)
    state = Stack.of(gate).resolve(gate.to_state_json())
    assert ":states:::lambda:invoke.waitForTaskToken" in json.dumps(state["Resource"])
    assert state["TimeoutSeconds"] == 4 * 3600
    payload = state["Parameters"]["Payload"]
    assert payload["token.$"] == "$$.Task.Token"
    assert payload["run_id.$"] == "$.run_id"
    assert payload["node"] == "approve"
    assert payload["kind"] == "ask"
    assert payload["prompt"] == "Ship it?"
    assert payload["timeout_seconds"] == 4 * 3600
    assert payload["notify"] == ["slack"]
    assert state["ResultPath"] == "$.human"


def test_grants_invoke_to_the_machine_and_resume_to_batons_api(tmp_path: Path) -> None:
    from aws_cdk.assertions import Match, Template

    _, stack, _ = _user_stack(tmp_path)
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Action": [
                                    "states:SendTaskSuccess",
                                    "states:SendTaskFailure",
                                    "states:SendTaskHeartbeat",
                                ],
                                "Resource": {"Ref": Match.string_like_regexp("^Flow")},
                            }
                        )
                    ]
                )
            },
        },
    )
    template.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [Match.object_like({"Action": "lambda:InvokeFunction", "Resource": Match.any_value()})]
                )
            }
        },
    )
    assert "baton-ci-ParkFunctionArn" in str(template.to_json())
    assert "baton-ci-ApiRoleArn" in str(template.to_json())


def test_gate_refuses_missing_timeout_or_prompt(tmp_path: Path) -> None:
    from aws_cdk import App, Duration, Stack

    from infra.gate import BatonGate, BatonRef

    stack = Stack(App(outdir=str(tmp_path)), "Bad")
    baton = BatonRef.from_exports(stack, "Baton", team="ci")
    with pytest.raises(ValueError, match="timeout"):
        BatonGate.ask(stack, "A", baton=baton, node="n", prompt="p", timeout=Duration.seconds(0))
    with pytest.raises(ValueError, match="prompt"):
        BatonGate.ask(stack, "B", baton=baton, node="n", timeout=Duration.minutes(5))
    with pytest.raises(ValueError, match="kind"):
        BatonGate.ask(stack, "C", baton=baton, node="n", prompt="p", timeout=Duration.minutes(5), kind="nope")  # type: ignore[arg-type]
