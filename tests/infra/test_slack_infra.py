"""The Slack app's infrastructure (infra/capabilities/slack.py): the unauthenticated, signature-checked
route on the people's API, the two functions and their least-privilege roles, the secrets by name, and
slack_sdk as its own layer."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra.conftest import PREFIX, TEAM, resources
from tests.infra.test_stack import _actions, _flatten, _policy_documents, _resources, _staged_asset

pytestmark = pytest.mark.infra


def _function(cfn: dict[str, Any], name: str) -> tuple[str, dict[str, Any]]:
    (found,) = [
        (k, v)
        for k, v in resources(cfn, "AWS::Lambda::Function").items()
        if v["Properties"]["FunctionName"] == f"{PREFIX}-{name}"
    ]
    return found


def _statements_of(cfn: dict[str, Any], function: str) -> list[dict[str, Any]]:
    _, fn = _function(cfn, function)
    role = fn["Properties"]["Role"]["Fn::GetAtt"][0]
    return [s for _, roles, doc in _policy_documents(cfn) if role in roles for s in doc["Statement"]]


def test_the_interaction_url_is_a_post_with_no_iam_or_cognito(cfn: dict[str, Any]) -> None:
    paths = resources(cfn, "AWS::ApiGateway::Resource")
    (interactions,) = [k for k, v in paths.items() if v["Properties"]["PathPart"] == "interactions"]
    parent = paths[interactions]["Properties"]["ParentId"]["Ref"]
    assert paths[parent]["Properties"]["PathPart"] == "slack"
    (method,) = [
        m
        for m in resources(cfn, "AWS::ApiGateway::Method").values()
        if m["Properties"]["ResourceId"] == {"Ref": interactions}
    ]
    props = method["Properties"]
    assert (props["HttpMethod"], props["AuthorizationType"]) == ("POST", "NONE")
    assert f"<{_function(cfn, 'slack_interactions')[0]}.Arn>" in _flatten(props["Integration"]["Uri"])
    api = cfn["Resources"][props["RestApiId"]["Ref"]]
    assert api["Properties"]["Name"] == f"{PREFIX}-web"  # the people's API and its throttled stage


def test_the_functions_know_their_secrets_by_name_never_by_value(cfn: dict[str, Any]) -> None:
    for name in ("slack_interactions", "slack_worker"):
        env = _function(cfn, name)[1]["Properties"]["Environment"]["Variables"]
        assert env["SLACK_APP_SECRET_ARN"] == f"baton/{TEAM}/slack-app"
        assert env["BATON_SLACK_OPERATORS_PARAMETER"] == f"/baton/{TEAM}/slack-operators"
        assert env["BATON_SLACK_WORKER_INVOKE"] == "event"
        assert "SLACK_SIGNING_SECRET" not in env and "SLACK_BOT_TOKEN" not in env
    interactions = _function(cfn, "slack_interactions")[1]["Properties"]["Environment"]["Variables"]
    assert interactions["BATON_SLACK_WORKER_FUNCTION"] == f"{PREFIX}-slack_worker"
    # No slack_channel in the context: notify_slack keeps posting to the incoming webhook.
    notify = _function(cfn, "notify_slack")[1]["Properties"]["Environment"]["Variables"]
    assert "SLACK_APP_SECRET_ARN" not in notify and "SLACK_WEBHOOK_PARAMETER" in notify


def test_the_interaction_function_may_only_read_its_secrets_use_the_table_and_invoke_the_worker(
    cfn: dict[str, Any],
) -> None:
    worker_id, _ = _function(cfn, "slack_worker")
    granted: dict[str, list[str]] = {}
    for statement in _statements_of(cfn, "slack_interactions"):
        for action in _actions(statement):
            granted.setdefault(action, []).extend(_flatten(r) for r in _resources(statement))
    assert granted["lambda:InvokeFunction"] == [f"<{worker_id}.Arn>", f"<{worker_id}.Arn>:*"]
    (secret,) = granted["secretsmanager:GetSecretValue"]
    assert secret.endswith(f":secret:baton/{TEAM}/slack-app-??????")
    (parameter,) = granted["ssm:GetParameter"]
    assert parameter.endswith(f":parameter/baton/{TEAM}/slack-operators")
    assert not any(a.startswith(("states:", "sns:")) for a in granted)  # it answers nothing itself
    assert "dynamodb:Scan" not in granted


def test_the_worker_answers_like_the_api_and_starts_or_invokes_nothing(cfn: dict[str, Any]) -> None:
    actions = {a for s in _statements_of(cfn, "slack_worker") for a in _actions(s)}
    assert {"states:SendTaskSuccess", "dynamodb:PutItem", "secretsmanager:GetSecretValue"} <= actions
    assert "lambda:InvokeFunction" not in actions and "states:StartExecution" not in actions
    worker_id, _ = _function(cfn, "slack_worker")
    (config,) = [
        c
        for c in resources(cfn, "AWS::Lambda::EventInvokeConfig").values()
        if c["Properties"]["FunctionName"] == {"Ref": worker_id}
    ]
    assert config["Properties"]["MaximumRetryAttempts"] == 1


def test_slack_sdk_ships_as_its_own_pure_python_layer(cfn: dict[str, Any], synthesized: Any) -> None:
    from infra.capabilities.mcp import locked_version
    from infra.capabilities.slack import SLACK_SDK

    (layer_id, layer) = next(
        (k, v)
        for k, v in resources(cfn, "AWS::Lambda::LayerVersion").items()
        if v["Properties"]["LayerName"] == f"{PREFIX}-slack-sdk"
    )
    assert locked_version(SLACK_SDK) in layer["Properties"]["Description"]
    folder = _staged_asset(synthesized, layer["Properties"]["Content"]["S3Key"])
    staged = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert {"python/slack_sdk/signature/__init__.py", "python/slack_sdk/web/client.py"} <= staged
    assert not any(path.endswith(".so") for path in staged)
    for name in ("slack_interactions", "slack_worker"):
        layers = _function(cfn, name)[1]["Properties"]["Layers"]
        assert {"Ref": layer_id} in layers
