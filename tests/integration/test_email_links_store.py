"""The email channel's AWS adapters on moto: the link item's conditional claim (one use; a stale claim is
taken over; a release or completion touches only its own claim), the link key read from Secrets Manager,
SES v2 mail from the configured sender, and the whole answer through the real API handler."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import boto3
import pytest
from moto import mock_aws

from baton.adapters.answer_links import DynamoAnswerLinks
from baton.adapters.ses_mail import SesMailSender
from baton.channels.email.config import EmailConfig, EmailConfigError
from baton.channels.email.links import LinkUse
from baton.channels.email.mail import Mail
from baton.contracts import AskRequest
from baton.workflows.table import TTL_ATTRIBUTE
from tests.integration.conftest import MotoStack
from tests.integration.test_call_budgets import CallLog, call_log

__all__ = ["call_log"]  # the fixture, shared with the answer path's budgets

SENDER = "baton@example.com"


def _use(at: str = "2026-11-30T12:00:00.000Z", link_id: str = "link-0001") -> LinkUse:
    return LinkUse(
        link_id=link_id, run_id="r1", interaction_id="q1", recipient="a@example.com", at=at, expires_at=1_900_000_000
    )


def test_a_link_is_claimed_once_and_a_stale_claim_is_taken_over(moto_stack: MotoStack) -> None:
    links = DynamoAnswerLinks(moto_stack.provisioned.table_name, moto_stack.clients["dynamodb"])
    first = _use()
    assert links.claim_link(first, stale_before="2026-11-30T11:59:00.000Z") is None
    held = links.claim_link(_use(at="2026-11-30T12:00:30.000Z"), stale_before="2026-11-30T11:59:30.000Z")
    assert held == first  # a fresh claim holds
    later = _use(at="2026-11-30T12:01:30.000Z")
    assert links.claim_link(later, stale_before="2026-11-30T12:00:30.000Z") is None  # the stale one is taken over
    links.release_link(first)  # not this request's claim any more: nothing happens
    assert links.get_link("r1", "link-0001") == later
    links.complete_link(later.model_copy(update={"state": "answered", "answer": {"pick": "postgres"}}))
    done = links.get_link("r1", "link-0001")
    assert done is not None and done.state == "answered" and done.answer == {"pick": "postgres"}
    assert links.claim_link(_use(at="2026-11-30T13:00:00.000Z"), stale_before="2026-11-30T12:59:00.000Z") == done
    links.release_link(later)  # an answered use is never released
    assert links.get_link("r1", "link-0001") == done
    item = moto_stack.clients["dynamodb"].get_item(
        TableName=moto_stack.provisioned.table_name, Key={"PK": {"S": "RUN#r1"}, "SK": {"S": "LINK#link-0001"}}
    )["Item"]
    assert "GSI1PK" not in item and int(item[TTL_ATTRIBUTE]["N"]) > 1_900_000_000


def test_the_link_key_comes_from_secrets_manager(aws_env: None) -> None:
    with mock_aws():
        client = boto3.client("secretsmanager")
        arn = client.create_secret(Name="baton/email-link-key", SecretString="k" * 64)["ARN"]
        config = EmailConfig.from_env({"BATON_EMAIL_LINK_SECRET_ARN": arn, "BATON_LOCAL_API_TOKEN": "ignored"})
        assert config.link_key(client) == b"k" * 64
        short = client.create_secret(Name="short", SecretString="too short")["ARN"]
        with pytest.raises(EmailConfigError):
            EmailConfig.from_env({"BATON_EMAIL_LINK_SECRET_ARN": short}).link_key(client)
    with pytest.raises(EmailConfigError, match="BATON_EMAIL_LINK_SECRET_ARN"):
        EmailConfig.from_env({}).link_key()


def test_ses_v2_sends_one_plain_text_mail_per_recipient_from_the_sender(aws_env: None) -> None:
    with mock_aws():
        client = boto3.client("sesv2")
        client.create_email_identity(EmailIdentity=SENDER)
        sender = SesMailSender(client, SENDER)
        message_id = sender.send(
            Mail(to="ops@example.com", subject="[Baton] Question", text="Answer: https://x/answer/a.b")
        )
        assert message_id
        request = sender.request(Mail(to="ops@example.com", subject="s", text="t"))
        assert request["FromEmailAddress"] == SENDER and request["Destination"] == {"ToAddresses": ["ops@example.com"]}
        assert request["Content"]["Simple"]["Body"] == {"Text": {"Data": "t", "Charset": "UTF-8"}}
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.ses.models import ses_backends

        sent = ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages
        assert [m.destinations["ToAddresses"] for m in sent] == [["ops@example.com"]]


def test_a_link_answers_through_the_real_api_handler_on_the_table(
    call_log: CallLog, moto_stack: MotoStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from baton.channels.email.config import cached_link_key, email_config
    from baton.channels.email.mail import EmailLinks
    from baton.runtime.settings import get_settings
    from baton.runtime.wiring import services

    monkeypatch.setenv("BATON_LOCAL_API_TOKEN", "local-token-for-the-link-key")
    monkeypatch.setenv("BATON_EMAIL_RECIPIENTS", "ops@example.com")
    for cached in (get_settings, services, email_config, cached_link_key):
        cached.cache_clear()
    try:
        asked = services().questions.ask(
            "r1", AskRequest(node="draft", question="Ship?", options=["yes", "no"]), caller="agent"
        )
        iid = asked["interaction_id"]
        link = EmailLinks(key=cached_link_key, base_url="http://local").link_for("r1", iid, "ops@example.com")[0]
        path = link.removeprefix("http://local")

        def call(method: str, form: dict[str, str] | None = None) -> dict[str, Any]:
            event = {
                "httpMethod": method,
                "path": path,
                "headers": {"Content-Type": "application/x-www-form-urlencoded"},
                "requestContext": {},
                "body": urlencode(form) if form else None,
            }
            payload, errored = moto_stack.dispatcher.invoke("api", event)
            assert not errored, payload
            result: dict[str, Any] = payload
            return result

        call("GET")  # the first request builds the clients; the counted ones below reuse them
        shown, get_calls = call_log.measure(lambda: call("GET"))
        answered, post_calls = call_log.measure(lambda: call("POST", {"option": "yes"}))
        replayed, replay_calls = call_log.measure(lambda: call("POST", {"option": "no"}))
        assert (shown["statusCode"], answered["statusCode"], replayed["statusCode"]) == (200, 200, 410)
        # AWS calls (counts): the page reads the question and the link; the answer adds the claim, the
        # answer path's Query and transaction, and the completion; a replay stops at the claim.
        assert get_calls == ["dynamodb.GetItem", "dynamodb.GetItem"]
        assert post_calls == [
            "dynamodb.GetItem",
            "dynamodb.PutItem",
            "dynamodb.Query",
            "dynamodb.TransactWriteItems",
            "dynamodb.UpdateItem",
        ]
        assert replay_calls == ["dynamodb.GetItem", "dynamodb.PutItem", "dynamodb.GetItem"]
        stored = services().core.store.get_interaction("r1", iid)
        assert stored is not None and stored.state.answer == "yes" and stored.state.answered_by == "ops@example.com"
        assert json.dumps(stored.state.answer) == '"yes"'
    finally:
        for cached in (get_settings, services, email_config, cached_link_key):
            cached.cache_clear()


def test_per_recipient_marks_on_the_table_make_a_retry_mail_only_the_failed_recipient(
    moto_stack: MotoStack,
) -> None:
    """SES on moto, the marks on the table: bob's first send fails, so the event is retried; alice is
    mailed exactly once, bob once after the retry, and the marks carry a TTL."""
    from baton.adapters.mail_marks import DynamoMailMarks
    from baton.channels.email.links import local_link_key
    from baton.channels.email.mail import EmailLinks, EmailNotifier
    from baton.notify.model import Notification
    from baton.notify.transport import NotificationDeliveryError

    ses = boto3.client("sesv2")
    ses.create_email_identity(EmailIdentity=SENDER)
    real = SesMailSender(ses, SENDER)
    attempts: list[str] = []

    class FlakySes:
        def send(self, mail: Mail) -> str:
            attempts.append(mail.to)
            if mail.to == "bob@example.com" and attempts.count(mail.to) == 1:
                raise RuntimeError("Throttling: Maximum sending rate exceeded")
            return real.send(mail)

    table, db = moto_stack.provisioned.table_name, moto_stack.clients["dynamodb"]
    links = EmailLinks(key=lambda: local_link_key("t" * 20), base_url="https://api.example/")
    notifier = EmailNotifier(
        FlakySes(), ["alice@example.com", "bob@example.com"], links, ledger=DynamoMailMarks(table, db)
    )
    message = Notification(
        event="human_input_requested", kind="question", run_id="r1", interaction_id="q1", prompt="Ship?"
    ).to_message()
    with pytest.raises(NotificationDeliveryError):
        notifier.deliver(Notification.from_message(message))
    notifier.deliver(Notification.from_message(message))
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ses.models import ses_backends

    sent = ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages
    assert sorted(m.destinations["ToAddresses"][0] for m in sent) == ["alice@example.com", "bob@example.com"]
    assert attempts == ["alice@example.com", "bob@example.com", "bob@example.com"]
    marks = db.query(
        TableName=table,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :m)",
        ExpressionAttributeValues={":pk": {"S": "RUN#r1"}, ":m": {"S": "MAILED#q1#"}},
    )["Items"]
    assert len(marks) == 2 and all(int(m[TTL_ATTRIBUTE]["N"]) > 0 for m in marks)
