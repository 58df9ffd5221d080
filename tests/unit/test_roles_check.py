"""The calls-against-roles checker (tests/roles_check.py) on a tiny synthetic template, so it cannot pass
silently: an allowed call passes, a denied call fails and is named with its function and code line, a
wildcard resource matches, a transaction needs each item's action, an encrypted topic needs its key, and a
token of a user's machine needs the user stack's grant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.call_recorder import RecordedCall
from tests.roles_check import Deployment, StackTemplate, format_denied, main, matches

ACCOUNT_REGION = "us-east-1:123456789012"
LOCAL_MACHINE = f"arn:aws:states:{ACCOUNT_REGION}:stateMachine:baton-it-demo"


def _arn(service: str, resource: str) -> dict[str, Any]:
    parts: list[Any] = ["arn:", {"Ref": "AWS::Partition"}, f":{service}:", {"Ref": "AWS::Region"}, ":"]
    return {"Fn::Join": ["", [*parts, {"Ref": "AWS::AccountId"}, f":{resource}"]]}


def _template() -> dict[str, Any]:
    allow = [
        {
            "Effect": "Allow",
            "Action": ["dynamodb:GetItem", "dynamodb:PutItem"],
            "Resource": {"Fn::GetAtt": ["T", "Arn"]},
        },
        {"Effect": "Allow", "Action": "states:Send*", "Resource": _arn("states", "stateMachine:baton-ci-*")},
        {"Effect": "Allow", "Action": "sns:Publish", "Resource": {"Ref": "Topic"}},
    ]
    return {
        "Resources": {
            "T": {"Type": "AWS::DynamoDB::Table", "Properties": {"TableName": "baton-ci"}},
            "Key": {"Type": "AWS::KMS::Key", "Properties": {}},
            "Topic": {
                "Type": "AWS::SNS::Topic",
                "Properties": {"TopicName": "baton-ci-notifications", "KmsMasterKeyId": {"Fn::GetAtt": ["Key", "Arn"]}},
            },
            "WorkerRole": {"Type": "AWS::IAM::Role", "Properties": {}},
            "WorkerPolicy": {
                "Type": "AWS::IAM::Policy",
                "Properties": {"PolicyDocument": {"Statement": allow}, "Roles": [{"Ref": "WorkerRole"}]},
            },
            "Worker": {
                "Type": "AWS::Lambda::Function",
                "Properties": {"FunctionName": "baton-ci-worker", "Role": {"Fn::GetAtt": ["WorkerRole", "Arn"]}},
            },
            "Machine": {
                "Type": "AWS::StepFunctions::StateMachine",
                "Properties": {"StateMachineName": "baton-ci-demo"},
            },
        },
        "Outputs": {
            "Role": {"Value": {"Fn::GetAtt": ["WorkerRole", "Arn"]}, "Export": {"Name": "baton-ci-WorkerRole"}}
        },
    }


def _user_template(*, granted: bool) -> dict[str, Any]:
    role = {"Fn::Select": [1, {"Fn::Split": ["/", {"Fn::ImportValue": "baton-ci-WorkerRole"}]}]}
    statement = {"Effect": "Allow", "Action": "states:SendTaskSuccess", "Resource": {"Ref": "Flow"}}
    resources: dict[str, Any] = {"Flow": {"Type": "AWS::StepFunctions::StateMachine", "Properties": {}}}
    if granted:
        resources["Resume"] = {
            "Type": "AWS::IAM::Policy",
            "Properties": {"PolicyDocument": {"Statement": [statement]}, "Roles": [role]},
        }
    return {"Resources": resources}


def _call(operation: str, service: str = "dynamodb", **resources: str) -> RecordedCall:
    return RecordedCall(
        function="worker", service=service, operation=operation, resources=resources, line="baton/x.py:7"
    )


def _deployment(*, user_granted: bool | None = None) -> Deployment:
    baton = StackTemplate(_template(), name="baton")
    if user_granted is None:
        return Deployment(baton)
    user = StackTemplate(_user_template(granted=user_granted), name="user", exports=baton.resolved_exports())
    return Deployment(baton, user)


def test_an_allowed_call_passes_and_a_denied_call_fails_named_with_its_function_and_line() -> None:
    verdict = _deployment().check(
        [_call("GetItem", TableName="baton-it-table"), _call("DeleteItem", TableName="baton-it-table")]
    )
    assert [(call.operation, need.action) for call, need in verdict.denied] == [("DeleteItem", "dynamodb:DeleteItem")]
    table = f"arn:aws:dynamodb:{ACCOUNT_REGION}:table/baton-ci"
    assert format_denied(verdict.denied) == [
        f"DENIED worker: dynamodb:DeleteItem on {table}",
        "    DeleteItem at baton/x.py:7",
    ]


def test_a_transaction_needs_each_items_action() -> None:
    put_and_delete = RecordedCall(
        function="worker",
        service="dynamodb",
        operation="TransactWriteItems",
        resources={},
        items=(("Delete", "baton-it-table"), ("Put", "baton-it-table")),
        line="baton/x.py:9",
    )
    verdict = _deployment().check([put_and_delete])
    assert [need.action for _, need in verdict.denied] == ["dynamodb:DeleteItem"]


def test_a_wildcard_resource_matches_a_tokens_machine_and_an_encrypted_topic_needs_its_key() -> None:
    send = _call("SendTaskSuccess", service="states", token_machine=LOCAL_MACHINE)
    publish = _call("Publish", service="sns", TopicArn=f"arn:aws:sns:{ACCOUNT_REGION}:baton-it-notifications")
    verdict = _deployment().check([send, publish])
    assert sorted(need.action for _, need in verdict.denied) == ["kms:Decrypt", "kms:GenerateDataKey"]
    assert matches("states:send*", "states:SendTaskSuccess", case_sensitive=False)
    assert not matches("arn:aws:states:*:stateMachine:baton-ci-*", "arn:aws:states:x:execution:baton-ci-demo:1:2")


def test_a_user_machines_token_needs_the_user_stacks_grant_to_the_functions_role() -> None:
    send = _call("SendTaskSuccess", service="states", token_machine=LOCAL_MACHINE)
    denied = _deployment(user_granted=False).check([send]).denied
    assert [(need.action, need.user_machine) for _, need in denied] == [("states:SendTaskSuccess", True)]
    assert _deployment(user_granted=True).check([send]).denied == []


def test_no_recorded_calls_fail_the_check(tmp_path: Path) -> None:
    assert main([str(tmp_path)]) == 1
