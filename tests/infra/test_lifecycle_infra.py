"""Item 3 of issue 10, deployed: an EventBridge rule sends the ends of Baton's executions to
run_lifecycle, and a machine granted to Baton gets a rule of its own that reaches the same function."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.infra

ENDED = ["SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"]


def _resources(template: dict[str, Any], kind: str) -> dict[str, Any]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == kind}


def _lifecycle_function_id(template: dict[str, Any]) -> str:
    (fid,) = [
        k
        for k, v in _resources(template, "AWS::Lambda::Function").items()
        if v["Properties"].get("FunctionName") == "baton-ci-run_lifecycle"
    ]
    return fid


def test_baton_s_machines_end_into_run_lifecycle(synthesized: Any) -> None:
    template = json.loads(Path(synthesized.template_path).read_text())
    rules = [
        r["Properties"]
        for r in _resources(template, "AWS::Events::Rule").values()
        if r["Properties"].get("EventPattern", {}).get("source") == ["aws.states"]
    ]
    (rule,) = rules
    pattern = rule["EventPattern"]
    assert pattern["detail-type"] == ["Step Functions Execution Status Change"]
    assert pattern["detail"]["status"] == ENDED
    machines = json.dumps(pattern["detail"]["stateMachineArn"])
    for workflow in ("human_pause", "review_gate", "demo", "interrupt", "await_answers"):
        assert f"stateMachine:baton-ci-{workflow}" in machines, workflow
    assert "stateMachine:baton-ci-gate_deadline" not in machines  # a gate's timer is no run
    function_id = _lifecycle_function_id(template)
    (target,) = rule["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [function_id, "Arn"]}
    assert target["RetryPolicy"]["MaximumRetryAttempts"] > 0
    permissions = [
        p["Properties"]
        for p in _resources(template, "AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == "events.amazonaws.com"
        and p["Properties"]["FunctionName"] == {"Fn::GetAtt": [function_id, "Arn"]}
    ]
    # the rule's own permission, and the one for the rules of granted machines (baton-ci-lifecycle-*)
    assert len(permissions) == 2
    assert any("rule/baton-ci-lifecycle-*" in json.dumps(p.get("SourceArn")) for p in permissions)
    assert all("SourceArn" in p for p in permissions)  # never any rule of any account


def test_the_lifecycle_function_only_reads_and_writes_the_table_and_publishes(synthesized: Any) -> None:
    from baton.workflows.resources import function
    from infra.permissions import access_for

    assert access_for(function("run_lifecycle")) == ("table", "topic")


def test_a_granted_machine_gets_a_rule_to_batons_run_lifecycle(tmp_path: Path) -> None:
    from aws_cdk import App, Stack
    from aws_cdk import aws_stepfunctions as sfn
    from aws_cdk.assertions import Template

    from infra.gate import BatonGate, BatonRef

    app = App(outdir=str(tmp_path))
    stack = Stack(app, "UserFlow")
    baton = BatonRef.from_exports(stack, "Baton", team="ci")
    machine = sfn.StateMachine(
        stack, "Flow", definition_body=sfn.DefinitionBody.from_chainable(sfn.Succeed(stack, "Done"))
    )
    BatonGate.grant_resume(machine, baton=baton)
    template = Template.from_stack(stack).to_json()
    (rule,) = [r["Properties"] for r in _resources(template, "AWS::Events::Rule").values()]
    assert rule["Name"].startswith("baton-ci-lifecycle-") and len(rule["Name"]) <= 64
    assert rule["EventPattern"]["detail"]["status"] == ENDED
    assert rule["EventPattern"]["detail"]["stateMachineArn"] == [
        {"Ref": next(iter(_resources(template, "AWS::StepFunctions::StateMachine")))}
    ]
    (target,) = rule["Targets"]
    assert target["Arn"] == {"Fn::ImportValue": "baton-ci-RunLifecycleFunctionArn"}
    # no permission in the user's stack: Baton's function allows rules named baton-ci-lifecycle-*
    assert _resources(template, "AWS::Lambda::Permission") == {}
