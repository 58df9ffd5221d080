"""The deployed shapes of the review gate's builds: no task token in any CodeBuild environment or
in anything a state machine hands a build; the build's role may write its report into the table and
nothing more (no Step Functions, no read); one EventBridge rule on the merge project's terminal state
changes invokes build_finished, and only it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.infra.conftest import PREFIX, resources

pytestmark = pytest.mark.infra

TOKEN_MARKS = ("TaskToken", "Task.Token", "TASK_TOKEN")


def _statements(cfn: dict[str, Any], role_prefix: str) -> list[dict[str, Any]]:
    found = []
    for policy in resources(cfn, "AWS::IAM::Policy").values():
        roles = json.dumps(policy["Properties"].get("Roles", []))
        if role_prefix in roles:
            found.extend(policy["Properties"]["PolicyDocument"]["Statement"])
    return found


def _actions(statement: dict[str, Any]) -> list[str]:
    action = statement.get("Action", [])
    return [action] if isinstance(action, str) else list(action)


def test_no_task_token_in_any_codebuild_environment(cfn: dict[str, Any]) -> None:
    projects = resources(cfn, "AWS::CodeBuild::Project")
    assert projects
    for logical_id, project in projects.items():
        env = json.dumps(project["Properties"]["Environment"])
        spec = project["Properties"]["Source"].get("BuildSpec", "")
        for mark in TOKEN_MARKS:
            assert mark not in env, f"{logical_id}: {mark} in its environment"
            assert mark not in spec, f"{logical_id}: {mark} in its buildspec"
    # ...nor does any state machine start a build itself (a token would ride in its overrides).
    for logical_id, machine in resources(cfn, "AWS::StepFunctions::StateMachine").items():
        definition = json.dumps(machine["Properties"].get("DefinitionString", ""))
        assert "codebuild:startBuild" not in definition, logical_id


def test_the_build_role_writes_its_report_and_nothing_else(cfn: dict[str, Any]) -> None:
    statements = _statements(cfn, "MergeProjectRole")
    actions = {a for s in statements for a in _actions(s)}
    assert not any(a.startswith("states:") for a in actions), actions
    dynamo = [s for s in statements if any(a.startswith("dynamodb:") for a in _actions(s))]
    assert [_actions(s) for s in dynamo] == [["dynamodb:PutItem"]]
    conditions = dynamo[0]["Condition"]
    assert conditions["ForAllValues:StringEquals"]["dynamodb:Attributes"] == [
        "PK",
        "SK",
        "record",
        "build_key",
        "report",
    ]
    assert conditions["StringEqualsIfExists"]["dynamodb:ReturnValues"] == "NONE"
    (project,) = resources(cfn, "AWS::CodeBuild::Project").values()
    env = {v["Name"] for v in project["Properties"]["Environment"]["EnvironmentVariables"]}
    assert "BATON_TABLE_NAME" in env


def test_one_rule_on_the_merge_projects_end_invokes_build_finished(cfn: dict[str, Any]) -> None:
    rules = {k: v for k, v in resources(cfn, "AWS::Events::Rule").items() if "EventPattern" in v["Properties"]}
    [(rule_id, rule)] = [
        (k, v) for k, v in rules.items() if v["Properties"]["EventPattern"].get("source") == ["aws.codebuild"]
    ]
    pattern = rule["Properties"]["EventPattern"]
    assert pattern["detail-type"] == ["CodeBuild Build State Change"]
    assert pattern["detail"]["build-status"] == ["SUCCEEDED", "FAILED", "FAULT", "STOPPED", "TIMED_OUT"]
    (project_id,) = resources(cfn, "AWS::CodeBuild::Project")
    assert pattern["detail"]["project-name"] == [{"Ref": project_id}]
    [target] = rule["Properties"]["Targets"]
    functions = resources(cfn, "AWS::Lambda::Function")
    target_fn = target["Arn"]["Fn::GetAtt"][0]
    assert functions[target_fn]["Properties"]["FunctionName"] == f"{PREFIX}-build_finished"
    # Least privilege: build_finished may be invoked by this rule alone.
    permissions = [
        p["Properties"]
        for p in resources(cfn, "AWS::Lambda::Permission").values()
        if p["Properties"]["FunctionName"] == {"Fn::GetAtt": [target_fn, "Arn"]}
    ]
    assert permissions == [
        {
            "Action": "lambda:InvokeFunction",
            "FunctionName": {"Fn::GetAtt": [target_fn, "Arn"]},
            "Principal": "events.amazonaws.com",
            "SourceArn": {"Fn::GetAtt": [rule_id, "Arn"]},
        }
    ]


def test_only_batons_functions_send_the_builds_tokens(cfn: dict[str, Any]) -> None:
    """build_finished sends; merge_start only parks and starts (no SendTask*); diff_start releases a gate
    with nothing to diff."""

    def sends(role: str) -> bool:
        return any(a.startswith("states:SendTask") for s in _statements(cfn, role) for a in _actions(s))

    assert sends("Functionsbuildfinished")
    assert sends("Functionsdiffstart")
    assert not sends("Functionsmergestart")
    assert not sends("MergeProjectRole")
