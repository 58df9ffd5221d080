"""Notify channels over real HTTP on 127.0.0.1, the subscriber Lambdas, and SNS filter policies in moto."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from moto import mock_aws

from baton.notify import (
    CHANNELS,
    SIGNATURE_HEADER,
    Notification,
    NotificationDeliveryError,
    SlackPoster,
    SnsNotifier,
    StaticUrl,
    WebhookPoster,
    build_blocks,
    subscription_attributes_for,
    verify,
)
from functions.notify_slack import handler as slack_handler
from functions.notify_webhook import handler as webhook_handler

pytestmark = [pytest.mark.allow_hosts(["127.0.0.1"]), pytest.mark.timeout(30)]

SECRET = "whsec_integration"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    requests: list[Received] = field(default_factory=list)

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.requests


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A local HTTP server: 200 on any path, except /fail → 500 (like a broken webhook)."""
    state = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            state.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            status = 500 if self.path == "/fail" else 200
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"ok" if status == 200 else b"boom")

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def make(**overrides: Any) -> Notification:
    fields: dict[str, Any] = {
        "event": "human_input_requested",
        "kind": "question",
        "run_id": "run-42",
        "interaction_id": "q-1",
        "node": "draft",
        "prompt": "Which license should the new repo use?",
        "options": ["MIT", "Apache-2.0"],
        "channels": ["console", "webhook", "slack"],
        "review_url": "http://127.0.0.1:9/review/run-42",
    }
    fields.update(overrides)
    return Notification(**fields)


def sns_event(notification: Notification) -> dict[str, Any]:
    return {"Records": [{"EventSource": "aws:sns", "Sns": {"Message": notification.to_message()}}]}


def test_webhook_post_is_signed(receiver: Receiver) -> None:
    notification = make()
    assert WebhookPoster(f"{receiver.url}/hooks/baton", SECRET, timeout=5).post(notification) == 200
    [request] = receiver.wait_for(1)
    assert request.path == "/hooks/baton"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-baton-event"] == "human_input_requested"
    assert verify(request.body, request.headers[SIGNATURE_HEADER.lower()], SECRET, now=time.time())
    assert not verify(request.body, request.headers[SIGNATURE_HEADER.lower()], "wrong", now=time.time())
    assert Notification.from_message(request.body) == notification


def test_webhook_non_2xx_raises(receiver: Receiver) -> None:
    with pytest.raises(NotificationDeliveryError, match="HTTP 500: boom"):
        WebhookPoster(f"{receiver.url}/fail", SECRET, timeout=5).post(make())


def test_unreachable_webhook_raises() -> None:
    with pytest.raises(NotificationDeliveryError):
        WebhookPoster("http://127.0.0.1:9/nothing", SECRET, timeout=2).post(make())


def test_slack_post_carries_blocks(receiver: Receiver) -> None:
    notification = make(kind="review", event="review_turn")
    assert SlackPoster(StaticUrl(f"{receiver.url}/services/T/B/X"), timeout=5).post(notification) == 200
    [request] = receiver.wait_for(1)
    payload = json.loads(request.body)
    assert payload == build_blocks(notification)
    assert [b["type"] for b in payload["blocks"]] == ["header", "section", "section", "context", "actions"]
    assert payload["blocks"][-1]["elements"][0]["url"] == "http://127.0.0.1:9/review/run-42"


def test_handlers_deliver_sns_events(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOOK_URL", f"{receiver.url}/webhook")
    monkeypatch.setenv("WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("SLACK_WEBHOOK_URL", f"{receiver.url}/slack")
    webhook_handler._poster.cache_clear()
    slack_handler._poster.cache_clear()
    try:
        notification = make()
        assert webhook_handler.lambda_handler(sns_event(notification), None)["delivered"] == 1
        assert slack_handler.lambda_handler(sns_event(notification), None)["delivered"] == 1
        # Not addressed to slack: the handler skips it even without a filter policy in front.
        skipped = slack_handler.lambda_handler(sns_event(make(channels=["webhook"])), None)
        assert (skipped["delivered"], skipped["skipped"]) == (0, 1)
        requests = receiver.wait_for(2)
        assert len(requests) == 2
        by_path = {r.path: r for r in requests}
        hook = by_path["/webhook"]
        assert verify(hook.body, hook.headers[SIGNATURE_HEADER.lower()], SECRET)
        assert Notification.from_message(hook.body) == notification
        assert json.loads(by_path["/slack"].body) == build_blocks(notification)
    finally:
        webhook_handler._poster.cache_clear()
        slack_handler._poster.cache_clear()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)


@pytest.mark.usefixtures("aws_env")
def test_filter_policies_route_only_to_chosen_channels() -> None:
    with mock_aws():
        sns = boto3.client("sns", region_name="us-east-1")
        sqs = boto3.client("sqs", region_name="us-east-1")
        topic_arn = sns.create_topic(Name="baton-notifications")["TopicArn"]
        queues: dict[str, str] = {}
        for channel in CHANNELS:
            url = sqs.create_queue(QueueName=f"notify-{channel}")["QueueUrl"]
            attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
            arn = attributes["QueueArn"]
            sns.subscribe(
                TopicArn=topic_arn,
                Protocol="sqs",
                Endpoint=arn,
                Attributes={**subscription_attributes_for(channel), "RawMessageDelivery": "true"},
            )
            queues[channel] = url

        notifier = SnsNotifier(sns, topic_arn)
        first = make(channels=["console", "webhook"])
        second = make(channels=["slack"], interaction_id="q-2", kind="interrupt", event="interrupt_created")
        notifier.publish(first)
        notifier.publish(second)

        received: dict[str, list[Notification]] = {}
        for name, queue_url in queues.items():
            messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
            received[name] = [Notification.from_message(m["Body"]) for m in messages]

        assert received["console"] == [first]
        assert received["webhook"] == [first]
        assert received["slack"] == [second]
        assert received["email"] == []
