"""A notification's one-tap answer through the real API handler on moto (issue 32, item 3): the VAPID key
read from Secrets Manager as deployed, the push payload built by `WebPush` for a subscription on the
table, and its action POSTed as the service worker does (no cookie, no bearer): answered once as the
operator the push went to; the other action is the 409 naming the winner; a replay stops at the used-once
record. AWS calls are counted as the email link's answer is (tests/integration/test_email_links_store.py)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from baton.channels.push.web_push import VapidKeys
from baton.contracts import AskRequest
from baton.contracts.push import PUSH_ANSWER_PATH, PushSubscription
from tests.integration.conftest import MotoStack
from tests.integration.test_call_budgets import CallLog, call_log

__all__ = ["call_log"]  # the fixture, shared with the answer path's budgets

OPERATOR = "ops@example.com"


def test_a_pushed_action_answers_once_as_its_operator_through_the_real_api_handler(
    call_log: CallLog, moto_stack: MotoStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from baton.adapters.push_subscriptions import DynamoPushSubscriptions
    from baton.channels.push.sender import WebPush
    from baton.runtime.settings import get_settings
    from baton.runtime.wiring import _vapid_key_source, services, vapid_key_source

    keys = VapidKeys.generate()
    secret = boto3.client("secretsmanager").create_secret(Name="baton/vapid", SecretString=keys.private_pem.decode())
    monkeypatch.setenv("BATON_VAPID_SECRET_ID", secret["ARN"])
    caches = (get_settings, services, _vapid_key_source)
    for cached in caches:
        cached.cache_clear()
    try:
        asked = services().questions.ask(
            "r1", AskRequest(node="draft", question="Ship?", options=["yes", "no"], timeout_seconds=600), caller="agent"
        )
        iid = asked["interaction_id"]
        interaction = services().core.store.get_interaction("r1", iid)
        assert interaction is not None
        store = DynamoPushSubscriptions(moto_stack.provisioned.table_name, moto_stack.clients["dynamodb"])
        store.add_subscription(
            PushSubscription.model_validate(
                {
                    "operator": OPERATOR,
                    "subscription_id": "ps-1",
                    "endpoint": "https://push.example.test/1",
                    "keys": {"p256dh": "B", "auth": "a"},
                    "created_at": "2026-12-05T00:00:00Z",
                }
            )
        )
        sent: list[dict[str, Any]] = []
        push = WebPush(store, vapid_key_source(get_settings()), send=lambda _s, data, *_a, **_k: sent.append(data))
        assert push.push(OPERATOR, interaction, "escalated") == 1
        [payload] = [json.loads(data) for data in sent]
        yes, no = payload["one_tap"]
        assert (yes["path"], yes["auth"], yes["body"]["answer"], no["body"]["answer"]) == (
            PUSH_ANSWER_PATH,
            "credential",
            "yes",
            "no",
        )

        def tap(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            event = {
                "httpMethod": "POST",
                "path": PUSH_ANSWER_PATH,
                "headers": {"Content-Type": "application/json"},  # no Authorization, no Cookie
                "requestContext": {},
                "body": json.dumps(body),
            }
            result, errored = moto_stack.dispatcher.invoke("api", event)
            assert not errored, result
            return result["statusCode"], json.loads(result["body"])

        status, refused = tap({**yes["body"], "answer": "no"})  # also builds the clients and reads the key
        assert (status, refused["reason"]) == (403, "other_answer"), refused
        (status, answered), answer_calls = call_log.measure(lambda: tap(yes["body"]))
        assert status == 200 and answered["status"] == "answered", answered
        (status, lost), loser_calls = call_log.measure(lambda: tap(no["body"]))
        assert status == 409 and lost["winner"]["by"] == OPERATOR and lost["winner"]["value"] == "yes", lost
        (status, replayed), replay_calls = call_log.measure(lambda: tap(yes["body"]))
        assert status == 409 and replayed["reason"] == "used" and replayed["winner"]["by"] == OPERATOR, replayed

        # The email link's answer path, call for call: the item, the claim, the answer's Query and
        # transaction, the completion; the loser's claim is released; a replay stops at the claim.
        assert answer_calls == [
            "dynamodb.GetItem",
            "dynamodb.PutItem",
            "dynamodb.Query",
            "dynamodb.TransactWriteItems",
            "dynamodb.UpdateItem",
        ]
        assert loser_calls[:2] == ["dynamodb.GetItem", "dynamodb.PutItem"] and loser_calls[-1] == "dynamodb.DeleteItem"
        assert "dynamodb.TransactWriteItems" not in loser_calls
        assert replay_calls == ["dynamodb.GetItem", "dynamodb.PutItem", "dynamodb.GetItem"]

        stored = services().core.store.get_interaction("r1", iid)
        assert stored is not None and (stored.state.answer, stored.state.answered_by) == ("yes", OPERATOR)
        events = services().core.store.list_events("r1")
        decisions = [e.data for e in events if e.type == "interaction_answered"]
        assert [(d["by"], d["via"]) for d in decisions] == [(OPERATOR, "push")]
        item = moto_stack.clients["dynamodb"].query(
            TableName=moto_stack.provisioned.table_name,
            KeyConditionExpression="PK = :pk AND begins_with(SK, :link)",
            ExpressionAttributeValues={":pk": {"S": "RUN#r1"}, ":link": {"S": "LINK#"}},
        )["Items"]
        assert [(i["channel"]["S"], i["recipient"]["S"], i["state"]["S"]) for i in item] == [
            ("push", OPERATOR, "answered")
        ]
    finally:
        for cached in caches:
            cached.cache_clear()
