"""The stack tells Baton which notify channels it wires (`BATON_NOTIFY_CHANNELS`), from the same
subscriptions it creates: a question asking for another channel is a 422 (baton/domain/channels.py)."""

from __future__ import annotations

import json
from typing import Any

from infra.config import TeamConfig
from infra.stack import wired_channels
from tests.infra.conftest import PREFIX


def _subscribed_channels(cfn: dict[str, Any]) -> set[str]:
    channels = set()
    for res in cfn["Resources"].values():
        if res["Type"] == "AWS::SNS::Subscription" and "FilterPolicy" in res["Properties"]:
            policy = res["Properties"]["FilterPolicy"]
            policy = json.loads(policy) if isinstance(policy, str) else policy
            channels.update(c for c in json.dumps(policy).split('"') if c in {"console", "email", "slack", "webhook"})
    return channels


def test_the_functions_know_the_channels_the_stack_subscribes(cfn: dict[str, Any]) -> None:
    env = {
        v["Properties"]["FunctionName"].removeprefix(f"{PREFIX}-"): v["Properties"]["Environment"]["Variables"]
        for v in cfn["Resources"].values()
        if v["Type"] == "AWS::Lambda::Function" and "FunctionName" in v["Properties"]
    }
    declared = set(env["api"]["BATON_NOTIFY_CHANNELS"].split(","))
    assert declared == {"console", "slack", "webhook", "email"}  # the test context sets emails and a webhook URL
    assert declared == _subscribed_channels(cfn)


def test_a_stack_without_a_webhook_url_or_emails_does_not_declare_them() -> None:
    bare = TeamConfig(team="bare")
    assert wired_channels(bare) == ["console", "slack"]
    assert wired_channels(TeamConfig(team="mail", emails=["a@example.com"])) == ["console", "slack", "email"]
    assert "webhook" in wired_channels(TeamConfig(team="hook", webhook_url="https://hooks.example.com/x"))
