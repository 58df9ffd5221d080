"""`POST /slack/interactions` on a stack with no Slack app (no signing secret): the deployed handler says
so, a 404 with a JSON error in words, rather than crashing into API Gateway's 502."""

from __future__ import annotations

import importlib.util
import json
from typing import Any
from urllib.parse import urlencode

import pytest

from baton.local.http_adapter import to_proxy_event
from baton.workflows.source_tree import source_tree
from tests.unit.test_api_gateway_events import LambdaContextStub

HANDLER = source_tree().root / "functions" / "slack_interactions" / "handler.py"


def _handler() -> Any:
    spec = importlib.util.spec_from_file_location("slack_interactions_under_test", HANDLER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.lambda_handler


def test_a_stack_without_slack_answers_its_interaction_url_with_a_404_in_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("SLACK_SIGNING_SECRET", "SLACK_APP_SECRET_ARN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BATON_TABLE_NAME", "t")
    body = urlencode({"payload": json.dumps({"type": "block_actions", "user": {"id": "U1"}})}).encode()
    headers = {"Content-Type": "application/x-www-form-urlencoded", "X-Slack-Request-Timestamp": "1"}
    event = to_proxy_event("POST", "/slack/interactions", headers, body, "127.0.0.1")
    result = _handler()(event, LambdaContextStub(function_name="baton-slack-interactions"))
    assert result["statusCode"] == 404
    assert result["headers"]["Content-Type"] == "application/json"
    refused = json.loads(result["body"])
    assert refused["error"] == "not_found"
    assert refused["message"].startswith("Slack is not configured on this stack")
