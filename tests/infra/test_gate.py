"""BatonGate: each Baton gate in a user's state machine as one Task state, with its timeout and grants."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from baton.domain.deadline import task_timeout_seconds

pytestmark = pytest.mark.infra

CONFIG = {"gate": "ship", "run_branch": "baton/run-42", "merge_into": "main", "timeout_seconds": 3600}


def _user_stack(outdir: Path) -> tuple[Any, Any, dict[str, Any]]:
    from aws_cdk import App, Duration, Stack
    from aws_cdk import aws_stepfunctions as sfn

    from infra.gate import BatonGate, BatonRef

    app = App(outdir=str(outdir))
    stack = Stack(app, "UserFlow")
    baton = BatonRef.from_exports(stack, "Baton", team="ci")
    gates: dict[str, Any] = {
        "ask": BatonGate.ask(
            stack,
            "Approve",
            baton=baton,
            node="approve",
            prompt="Ship it?",
            timeout=Duration.hours(4),
            notify=["slack"],
        ),
        "interrupt": BatonGate.interrupt(
            stack,
            "Edit",
            baton=baton,
            node="edit",
            prompt="Fix the plan",
            json_schema={"type": "object"},
            state_path="$.plan",
            notify=["console"],
            timeout=Duration.hours(1),
        ),
        "await": BatonGate.await_answers(
            stack, "Sync", baton=baton, gate="sync", from_node="approve", timeout=Duration.minutes(30)
        ),
        "review": BatonGate.review(stack, "Review", baton=baton, config=CONFIG, timeout=Duration.days(2)),
    }
    timed_out = sfn.Fail(stack, "NobodyAnswered", error="HumanInputTimedOut")
    for gate in gates.values():
        gate.add_catch(timed_out, errors=[sfn.Errors.TIMEOUT])
    chain = (
        gates["ask"]
        .next(gates["interrupt"])
        .next(gates["await"])
        .next(gates["review"])
        .next(sfn.Succeed(stack, "Done"))
    )
    machine = sfn.StateMachine(stack, "Flow", definition_body=sfn.DefinitionBody.from_chainable(chain))
    BatonGate.grant_resume(machine, baton=baton)
    return app, stack, gates


@pytest.fixture(scope="module")
def user_stack(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, dict[str, Any]]:
    return _user_stack(tmp_path_factory.mktemp("user"))


@pytest.fixture(scope="module")
def user_template(user_stack: tuple[Any, Any, dict[str, Any]]) -> Any:
    from aws_cdk.assertions import Template

    return Template.from_stack(user_stack[1])


def _state(gate: Any) -> dict[str, Any]:
    from aws_cdk import Stack

    resolved: dict[str, Any] = Stack.of(gate).resolve(gate.to_state_json())
    return resolved


def _imports(value: Any) -> str:
    """The export a FunctionName / StateMachineArn imports."""
    text = json.dumps(value)
    assert "Fn::ImportValue" in text, text
    return str(value["Fn::ImportValue"])


def _policy_statements(template: Any) -> list[dict[str, Any]]:
    return [
        s
        for p in template.find_resources("AWS::IAM::Policy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]


def test_ask_is_a_token_wait_on_park(user_stack: tuple[Any, Any, dict[str, Any]]) -> None:
    state = _state(user_stack[2]["ask"])
    assert ":states:::lambda:invoke.waitForTaskToken" in json.dumps(state["Resource"])
    assert _imports(state["Parameters"]["FunctionName"]) == "baton-ci-ParkFunctionArn"
    assert state["TimeoutSeconds"] == task_timeout_seconds(4 * 3600)  # Baton ends it at 4 h; this is the backstop
    payload = state["Parameters"]["Payload"]
    assert payload["token.$"] == "$$.Task.Token"
    assert payload["run_id.$"] == "$.run_id"
    assert payload["node"] == "approve"
    assert payload["kind"] == "ask"
    assert payload["prompt"] == "Ship it?"
    assert payload["timeout_seconds"] == 4 * 3600
    assert payload["notify"] == ["slack"]
    assert state["ResultPath"] == "$.human"


def test_interrupt_is_a_token_wait_on_interrupt_park(user_stack: tuple[Any, Any, dict[str, Any]]) -> None:
    """Created through interrupt_park (InterruptService.create: the IID# pointer), so GET/resume/claim/
    cancel by id work — not through park."""
    state = _state(user_stack[2]["interrupt"])
    assert ":states:::lambda:invoke.waitForTaskToken" in json.dumps(state["Resource"])
    assert _imports(state["Parameters"]["FunctionName"]) == "baton-ci-InterruptParkFunctionArn"
    assert state["TimeoutSeconds"] == task_timeout_seconds(3600)
    payload = state["Parameters"]["Payload"]
    assert payload == {
        "token.$": "$$.Task.Token",
        "entered_at.$": "$$.State.EnteredTime",  # Baton's deadline starts with the task (issue 17)
        "run_id.$": "$.run_id",
        "node": "edit",
        "request": {
            "prompt": "Fix the plan",
            "jsonSchema": {"type": "object"},
            "state.$": "$.plan",
            "notify": ["console"],
            "timeout_seconds": 3600,
        },
    }
    assert task_timeout_seconds(payload["request"]["timeout_seconds"]) == state["TimeoutSeconds"]
    assert state["ResultPath"] == "$.interrupt"


def test_interrupt_payload_is_what_interrupt_park_parses(user_stack: tuple[Any, Any, dict[str, Any]]) -> None:
    from baton.domain.gate_payloads import HostedInterruptRequest

    request = _state(user_stack[2]["interrupt"])["Parameters"]["Payload"]["request"]
    concrete = {k.removesuffix(".$"): ({"draft": 1} if k.endswith(".$") else v) for k, v in request.items()}
    parsed = HostedInterruptRequest.model_validate(concrete)
    assert (
        parsed.prompt == "Fix the plan" and parsed.json_schema == {"type": "object"} and parsed.timeout_seconds == 3600
    )


def test_await_answers_is_a_token_wait_on_await_gate(user_stack: tuple[Any, Any, dict[str, Any]]) -> None:
    state = _state(user_stack[2]["await"])
    assert ":states:::lambda:invoke.waitForTaskToken" in json.dumps(state["Resource"])
    assert _imports(state["Parameters"]["FunctionName"]) == "baton-ci-AwaitGateFunctionArn"
    assert state["TimeoutSeconds"] == task_timeout_seconds(1800)
    assert state["Parameters"]["Payload"] == {
        "token.$": "$$.Task.Token",
        "entered_at.$": "$$.State.EnteredTime",  # Baton's deadline starts with the task (issue 17)
        "run_id.$": "$.run_id",
        "gate": "sync",
        "from": "approve",
        "timeout_seconds": 1800,
    }
    assert state["ResultPath"] == "$.await"


def test_review_starts_batons_review_gate_synchronously(user_stack: tuple[Any, Any, dict[str, Any]]) -> None:
    state = _state(user_stack[2]["review"])
    assert json.dumps(state["Resource"]).endswith(':states:::states:startExecution.sync:2"]]}')
    assert _imports(state["Parameters"]["StateMachineArn"]) == "baton-ci-WorkflowReviewGate"
    assert state["Parameters"]["Input"] == {"run_id.$": "$.run_id", "input": CONFIG}
    assert state["TimeoutSeconds"] == 2 * 86400
    assert state["ResultSelector"] == {"output.$": "$.Output", "execution_arn.$": "$.ExecutionArn"}
    assert state["ResultPath"] == "$.review"


def test_every_gate_task_has_a_timeout_in_the_definition(user_template: Any) -> None:
    from baton.workflows.asl import check_definition

    (machine,) = user_template.find_resources("AWS::StepFunctions::StateMachine").values()
    parts = machine["Properties"]["DefinitionString"]["Fn::Join"][1]
    definition = json.loads("".join(p if isinstance(p, str) else "x" for p in parts))
    tasks = {name: s for name, s in definition["States"].items() if s["Type"] == "Task"}
    assert set(tasks) == {"Approve", "Edit", "Sync", "Review"}
    assert all(isinstance(s.get("TimeoutSeconds"), int) and s["TimeoutSeconds"] > 0 for s in tasks.values())
    assert check_definition(definition, "UserFlow") == []


def test_grants_invoke_start_and_resume(user_template: Any) -> None:
    statements = _policy_statements(user_template)

    def resources_for(action: str) -> list[str]:
        found = [s for s in statements if action in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])]
        assert found, action
        return [json.dumps(s["Resource"]) for s in found]

    invoked = " ".join(resources_for("lambda:InvokeFunction"))
    for export in ("ParkFunctionArn", "InterruptParkFunctionArn", "AwaitGateFunctionArn"):
        assert f"baton-ci-{export}" in invoked, export
    assert any("baton-ci-WorkflowReviewGate" in r for r in resources_for("states:StartExecution"))
    for action in ("states:DescribeExecution", "states:StopExecution"):
        (arn,) = [r for r in resources_for(action) if "baton-ci-WorkflowReviewGate" in r]
        assert ":execution:" in arn, arn
    for action in ("events:PutTargets", "events:PutRule", "events:DescribeRule"):
        (arn,) = resources_for(action)
        assert "rule/StepFunctionsGetEventsForStepFunctionsExecutionRule" in arn, arn
    # Baton's API role may resume this machine's gates, and only this machine's.
    (resume,) = [s for s in statements if s["Action"] == ["states:SendTaskSuccess", "states:SendTaskFailure"]]
    assert json.dumps(resume["Resource"]).startswith('{"Ref": "Flow')
    assert "baton-ci-ApiRoleArn" in json.dumps(user_template.to_json())


def test_grant_resume_lets_every_token_sender_resume_the_machine_and_describe_its_runs(user_template: Any) -> None:
    """Not the API alone: the Slack worker, the await gate's immediate release, the deadline timer and the
    reconciler send a user machine's tokens too (their `send_task` capability), and a release whose task
    is gone describes the run's execution (Core.release_gate)."""
    (policy,) = [
        p
        for p in user_template.find_resources("AWS::IAM::Policy").values()
        if any(s["Action"] == ["states:SendTaskSuccess", "states:SendTaskFailure"] for s in _statements(p))
    ]
    attached = json.dumps(policy["Properties"]["Roles"])
    for export in ("Api", "SlackWorker", "AwaitGate", "GateDeadline", "Reconcile"):
        assert f"baton-ci-{export}RoleArn" in attached, export
    (describe,) = [s for s in _statements(policy) if s["Action"] == "states:DescribeExecution"]
    arn = json.dumps(describe["Resource"])
    assert ":execution:" in arn and '{"Ref": "Flow' in arn and arn.endswith(':*"]]}'), arn

    from baton.workflows.resources import FUNCTIONS
    from infra.exports import role_export
    from infra.permissions import token_senders

    senders = token_senders(FUNCTIONS)  # every send_task function, derived, not a second list
    assert sorted(f"baton-ci-{role_export(name)}" for name in senders) == sorted(
        set(re.findall(r"baton-ci-[A-Za-z]+RoleArn", attached))
    )


def _statements(policy: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = policy["Properties"]["PolicyDocument"]["Statement"]
    return found


def test_gates_refuse_missing_timeout_prompt_or_config_and_unknown_options(tmp_path: Path) -> None:
    from aws_cdk import App, Duration, Stack

    from infra.gate import BatonGate, BatonRef

    stack = Stack(App(outdir=str(tmp_path)), "Bad")
    baton = BatonRef.from_exports(stack, "Baton", team="ci")
    five = Duration.minutes(5)
    with pytest.raises(ValueError, match="timeout"):
        BatonGate.ask(stack, "A", baton=baton, node="n", prompt="p", timeout=Duration.seconds(0))
    with pytest.raises(ValueError, match="prompt"):
        BatonGate.ask(stack, "B", baton=baton, node="n", timeout=five)
    # kind / extra were labels the park Lambda ignored: gone (each gate has its own helper).
    with pytest.raises(TypeError, match="kind"):
        BatonGate.ask(stack, "C", baton=baton, node="n", prompt="p", timeout=five, kind="interrupt")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="extra"):
        BatonGate.ask(stack, "D", baton=baton, node="n", prompt="p", timeout=five, extra={"x": 1})  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="timeout"):
        BatonGate.interrupt(stack, "E", baton=baton, prompt="p", timeout=Duration.seconds(0))
    with pytest.raises(ValueError, match="state"):
        BatonGate.interrupt(stack, "F", baton=baton, prompt="p", state={}, state_path="$.s", timeout=five)
    with pytest.raises(ValueError, match="timeout"):
        BatonGate.await_answers(stack, "G", baton=baton, gate="g", timeout=Duration.seconds(0))
    with pytest.raises(ValueError, match="timeout"):
        BatonGate.review(stack, "H", baton=baton, config=CONFIG, timeout=Duration.seconds(0))
    with pytest.raises(ValueError, match="config"):
        BatonGate.review(stack, "I", baton=baton, timeout=five)
    with pytest.raises(ValueError, match="merge_stratgy"):
        BatonGate.review(stack, "J", baton=baton, config={**CONFIG, "merge_stratgy": "squash"}, timeout=five)


def test_from_stack_uses_the_stack_itself(synthesized: Any) -> None:
    """BatonRef.from_stack points at the deployed constructs, and the stack exports what from_exports imports."""
    from baton.workflows.resources import FUNCTIONS
    from infra.exports import role_export
    from infra.gate import GATE_FUNCTION_EXPORTS, BatonRef
    from infra.permissions import token_senders

    stack = synthesized.stack
    ref = BatonRef.from_stack(stack)
    assert ref.park_function is stack.functions.functions["park"]
    assert ref.interrupt_park_function is stack.functions.functions["interrupt_park"]
    assert ref.await_gate_function is stack.functions.functions["await_gate"]
    assert ref.review_gate is stack.gates.state_machines["review_gate"]
    assert ref.api_role is stack.functions.roles["api"]
    senders = [name for name in token_senders(FUNCTIONS) if name != "api"]
    assert list(ref.token_sender_roles) == [stack.functions.roles[name] for name in senders]
    outputs = json.loads(synthesized.template_path.read_text())["Outputs"]
    exports = {o["Export"]["Name"] for o in outputs.values() if "Export" in o}
    for suffix in [*GATE_FUNCTION_EXPORTS, "WorkflowReviewGate", *map(role_export, token_senders(FUNCTIONS))]:
        assert f"baton-ci-{suffix}" in exports, suffix


def test_token_gate_payloads_are_what_their_lambdas_parse(user_stack: tuple[Any, Any, dict[str, Any]]) -> None:
    """Each helper's payload, with its JSONPaths filled in, parses with the model its Lambda parses with."""
    from baton.domain.gate_payloads import AwaitGatePayload, InterruptParkPayload, ParkPayload

    filled = {"token": "tok", "run_id": "r1", "state": {"draft": 1}, "entered_at": "2026-12-01T10:00:00.123Z"}

    def concrete(payload: dict[str, Any]) -> dict[str, Any]:
        return {
            k.removesuffix(".$"): (
                filled[k.removesuffix(".$")] if k.endswith(".$") else concrete(v) if isinstance(v, dict) else v
            )
            for k, v in payload.items()
        }

    for gate, model in (("ask", ParkPayload), ("interrupt", InterruptParkPayload), ("await", AwaitGatePayload)):
        payload = _state(user_stack[2][gate])["Parameters"]["Payload"]
        model.model_validate(concrete(payload))
