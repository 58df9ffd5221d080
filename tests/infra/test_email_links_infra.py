"""The email channel deployed (infra/capabilities/email_links.py): the link key secret read by exactly
the two functions that sign and check links, SES sends only from the configured sender, the answer
routes on the people's API with no IAM/Cognito auth (and nothing else there without it), the mailer
told the recipients and the links' address, and alarms still mailed by SNS."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.infra.conftest import PREFIX, resources

pytestmark = pytest.mark.infra
SENDER = "baton@example.com"


def _functions(cfn: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        v["Properties"]["FunctionName"].removeprefix(f"{PREFIX}-"): {"id": k, **v["Properties"]}
        for k, v in resources(cfn, "AWS::Lambda::Function").items()
    }


def _statements(cfn: dict[str, Any], role_id: str) -> list[dict[str, Any]]:
    found = []
    for policy in resources(cfn, "AWS::IAM::Policy").values():
        if {"Ref": role_id} in policy["Properties"]["Roles"]:
            found += policy["Properties"]["PolicyDocument"]["Statement"]
    return found


def _role_of(fn: dict[str, Any]) -> str:
    return str(fn["Role"]["Fn::GetAtt"][0])


def test_the_link_key_is_a_generated_secret_read_only_by_the_mailer_and_the_api(cfn: dict[str, Any]) -> None:
    secrets = resources(cfn, "AWS::SecretsManager::Secret").items()
    [(secret_id, secret)] = [(k, v) for k, v in secrets if v["Properties"]["Name"] == f"{PREFIX}/email-link-key"]
    assert secret["Properties"]["GenerateSecretString"]["PasswordLength"] == 64
    functions = _functions(cfn)
    readers = {
        name
        for name, fn in functions.items()
        if any(
            "secretsmanager:GetSecretValue" in json.dumps(s["Action"]) and {"Ref": secret_id} == s["Resource"]
            for s in _statements(cfn, _role_of(fn))
        )
    }
    assert readers == {"notify_email", "api"}
    for name in readers:
        assert functions[name]["Environment"]["Variables"]["BATON_EMAIL_LINK_SECRET_ARN"] == {"Ref": secret_id}
        assert (
            functions[name]["Environment"]["Variables"]["BATON_EMAIL_RECIPIENTS"] == "ops@example.com,lead@example.com"
        )


def test_only_the_mailer_sends_mail_and_only_from_the_sender(cfn: dict[str, Any]) -> None:
    functions = _functions(cfn)
    senders = {}
    for name, fn in functions.items():
        for statement in _statements(cfn, _role_of(fn)):
            if "ses:" in json.dumps(statement["Action"]):
                senders[name] = statement
    assert set(senders) == {"notify_email"}
    statement = senders["notify_email"]
    assert statement["Action"] == "ses:SendEmail"
    assert statement["Condition"] == {"StringEquals": {"ses:FromAddress": SENDER}}
    resources_text = json.dumps(statement["Resource"])
    assert f"identity/{SENDER}" in resources_text and "identity/example.com" in resources_text
    assert "*" not in resources_text.replace(":*", "")
    env = functions["notify_email"]["Environment"]["Variables"]
    assert env["BATON_EMAIL_SENDER"] == SENDER
    assert "BATON_EMAIL_LINK_BASE_URL" in env and "BATON_INBOX_URL" in env
    assert "BATON_EMAIL_OUTBOX" not in env  # deployed mail is sent, never kept


def test_the_answer_routes_and_the_slack_endpoint_are_the_only_unauthenticated_methods(cfn: dict[str, Any]) -> None:
    paths = {k: v["Properties"] for k, v in resources(cfn, "AWS::ApiGateway::Resource").items()}
    open_methods = []
    for method in resources(cfn, "AWS::ApiGateway::Method").values():
        props = method["Properties"]
        if props["AuthorizationType"] == "NONE" and props["HttpMethod"] != "OPTIONS":
            resource = paths[props["ResourceId"]["Ref"]]
            parent = paths[resource["ParentId"]["Ref"]]
            open_methods.append((parent["PathPart"], resource["PathPart"], props["HttpMethod"]))
            assert props["Integration"]["Type"] == "AWS_PROXY"
            assert "api" in json.dumps(props["Integration"]["Uri"])
    # The signed link is the answer routes' credential; Slack's signature the Slack endpoint's
    # (tests/infra/test_slack_infra.py); the one-tap credential a push's answer's (test_web_push_infra.py).
    assert sorted(open_methods) == [
        ("answer", "{link}", "GET"),
        ("answer", "{link}", "POST"),
        ("push", "answer", "POST"),
        ("slack", "interactions", "POST"),
    ]


def test_the_notifications_topic_has_no_email_subscription_and_alarms_still_mail(cfn: dict[str, Any]) -> None:
    topics = {k: v["Properties"]["TopicName"] for k, v in resources(cfn, "AWS::SNS::Topic").items()}
    mailed = [
        topics[sub["Properties"]["TopicArn"]["Ref"]]
        for sub in resources(cfn, "AWS::SNS::Subscription").values()
        if sub["Properties"]["Protocol"] == "email"
    ]
    assert sorted(mailed) == [f"{PREFIX}-alarms", f"{PREFIX}-alarms"]
