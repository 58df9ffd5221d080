"""Unit tests of baton.notify: no sockets, no moto; boto3 clients are stubbed with botocore Stubber."""

from __future__ import annotations

import email.message
import hashlib
import hmac
import io
import json
import urllib.error
import urllib.request
from typing import Any, get_args

import boto3
import pytest
from botocore.stub import Stubber
from pydantic import ValidationError

from baton.errors import BadRequestError
from baton.notify import (
    CHANNELS,
    SIGNATURE_HEADER,
    Notification,
    NotificationDeliveryError,
    SecretsManagerUrl,
    SlackPoster,
    SnsNotifier,
    SsmParameterUrl,
    StaticUrl,
    WebhookPoster,
    build_blocks,
    build_publish_request,
    filter_policy_for,
    render_console,
    render_email,
    sign,
    subscription_attributes_for,
    verify,
)
from baton.notify.config import SlackConfig, WebhookConfig
from baton.notify.model import Kind
from baton.notify.subscriber import deliver_sns_event
from tests.fakes import RecordingNotifier

pytestmark = pytest.mark.disable_socket

SECRET = "whsec_test"
NOW = 1_780_000_000
TOPIC = "arn:aws:sns:us-east-1:123456789012:baton-notifications"


def _client(service: Any) -> Any:
    return boto3.client(service, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


def make(**overrides: Any) -> Notification:
    fields: dict[str, Any] = {
        "event": "interrupt_created",
        "kind": "interrupt",
        "run_id": "run-01",
        "interaction_id": "int-7",
        "node": "gate",
        "prompt": "Choose deployment target",
        "options": ["staging", "production"],
        "channels": ["console", "webhook", "slack"],
        "review_url": None,
        "created_at": "2026-05-28T07:12:01.234Z",
    }
    fields.update(overrides)
    return Notification(**fields)


def sns_event(*notifications: Notification | str) -> dict[str, Any]:
    return {
        "Records": [
            {
                "EventSource": "aws:sns",
                "Sns": {"Message": n if isinstance(n, str) else n.to_message(), "Subject": "x"},
            }
            for n in notifications
        ]
    }


# --- model ----------------------------------------------------------------------------------------


def test_defaults_and_round_trip() -> None:
    n = Notification(event="human_input_requested", kind="question", run_id="r1", prompt="Which DB?")
    assert n.channels == ["console"]
    assert n.title == "Question: Which DB?"
    assert "baton runs answer r1 <interaction-id>" in n.how_to_answer
    assert n.created_at.endswith("Z")
    assert Notification.from_message(n.to_message()) == n


def test_channels_deduplicated_and_validated() -> None:
    assert make(channels=["slack", "console", "slack"]).channels == ["slack", "console"]
    with pytest.raises(ValidationError):
        make(channels=[])
    with pytest.raises(ValidationError):
        make(channels=["pager"])
    with pytest.raises(ValidationError):
        make(kind="poll")
    with pytest.raises(ValidationError):
        make(created_at="yesterday")
    assert set(CHANNELS) == {"console", "email", "webhook", "slack"}


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("question", "POST /api/runs/run-01/interactions/int-7/answer"),
        ("ask", "baton resume --run-id run-01"),
        ("interrupt", "baton workflow resume-interrupt run-01 --interrupt-id int-7"),
        ("review", "POST /api/runs/run-01/resume"),
        ("await", "GET /api/runs/run-01/interactions/pending"),
    ],
)
def test_how_to_answer_per_kind(kind: str, expected: str) -> None:
    assert expected in make(kind=kind).how_to_answer


def test_explicit_title_and_how_to_answer_kept() -> None:
    n = make(title="Deploy?", how_to_answer="reply in #ops")
    assert (n.title, n.how_to_answer) == ("Deploy?", "reply in #ops")


# --- webhook signatures ---------------------------------------------------------------------------


def test_sign_matches_documented_scheme() -> None:
    body = b'{"a":1}'
    expected = hmac.new(SECRET.encode(), f"{NOW}.".encode() + body, hashlib.sha256).hexdigest()
    assert sign(body, SECRET, NOW) == f"t={NOW},v1={expected}"


def test_verify_accepts_valid_signature() -> None:
    body = make().to_message().encode()
    header = sign(body, SECRET, NOW)
    assert verify(body, header, SECRET, now=NOW)
    assert verify(body, header, SECRET, now=NOW + 299)


def test_verify_rejects_tampered_body() -> None:
    body = make().to_message().encode()
    header = sign(body, SECRET, NOW)
    assert not verify(body.replace(b"staging", b"stagin9"), header, SECRET, now=NOW)


def test_verify_rejects_wrong_secret() -> None:
    body = b"{}"
    assert not verify(body, sign(body, "other", NOW), SECRET, now=NOW)
    assert not verify(body, sign(body, SECRET, NOW), "", now=NOW)


def test_verify_rejects_stale_and_future_timestamps() -> None:
    body = b"{}"
    header = sign(body, SECRET, NOW)
    assert not verify(body, header, SECRET, now=NOW + 301)
    assert not verify(body, header, SECRET, now=NOW - 301)
    assert verify(body, header, SECRET, now=NOW + 3000, tolerance_seconds=3600)


def test_verify_rejects_timestamp_swapped_into_header() -> None:
    body = b"{}"
    digest = sign(body, SECRET, NOW).split("v1=")[1]
    assert not verify(body, f"t={NOW + 5},v1={digest}", SECRET, now=NOW)


@pytest.mark.parametrize("header", [None, "", "garbage", "t=abc,v1=00", "v1=00", f"t={NOW}", "t=1;v1=2"])
def test_verify_rejects_malformed_headers(header: str | None) -> None:
    assert not verify(b"{}", header, SECRET, now=NOW)


def test_verify_accepts_any_v1_during_rotation() -> None:
    body = b"{}"
    old = sign(body, "old-secret", NOW).split("v1=")[1]
    new = sign(body, SECRET, NOW).split("v1=")[1]
    assert verify(body, f"t={NOW},v1={old},v1={new}", SECRET, now=NOW)


def test_sign_refuses_empty_secret() -> None:
    with pytest.raises(ValueError):
        sign(b"{}", "", NOW)


class FakeResponse:
    def __init__(self, status: int, body: bytes = b"ok") -> None:
        self.status = status
        self._body = body

    def __enter__(self) -> FakeResponse:
        return self

    def __exit__(self, *args: object) -> None:
        return None

    def getcode(self) -> int:
        return self.status

    def read(self) -> bytes:
        return self._body


class FakeOpener:
    def __init__(self, status: int = 200, error: Exception | None = None) -> None:
        self.requests: list[tuple[urllib.request.Request, float]] = []
        self.status = status
        self.error = error

    def __call__(self, request: urllib.request.Request, timeout: float) -> FakeResponse:
        self.requests.append((request, timeout))
        if self.error is not None:
            raise self.error
        return FakeResponse(self.status)


def test_webhook_poster_sends_signed_json() -> None:
    opener = FakeOpener()
    poster = WebhookPoster("https://hooks.example/baton", SECRET, opener, timeout=3, clock=lambda: NOW)
    assert poster.post(make()) == 200
    request, timeout = opener.requests[0]
    assert timeout == 3
    assert request.get_method() == "POST"
    assert request.full_url == "https://hooks.example/baton"
    body = request.data
    assert isinstance(body, bytes)
    headers = {k.lower(): v for k, v in request.header_items()}
    assert headers["content-type"] == "application/json"
    assert headers["x-baton-event"] == "interrupt_created"
    assert verify(body, headers[SIGNATURE_HEADER.lower()], SECRET, now=NOW)
    assert Notification.from_message(body) == make()


def test_webhook_poster_non_2xx_is_a_clear_error() -> None:
    poster = WebhookPoster("https://hooks.example/x", SECRET, FakeOpener(status=302))
    with pytest.raises(NotificationDeliveryError, match="HTTP 302"):
        poster.post(make())
    http_error = urllib.error.HTTPError(
        "https://hooks.example/x",
        500,
        "Internal Server Error",
        email.message.Message(),
        io.BytesIO(b"boom"),
    )
    poster = WebhookPoster("https://hooks.example/x", SECRET, FakeOpener(error=http_error))
    with pytest.raises(NotificationDeliveryError, match="HTTP 500: boom") as info:
        poster.post(make())
    assert info.value.details["status"] == 500
    assert info.value.http_status == 502
    poster = WebhookPoster("https://hooks.example/x", SECRET, FakeOpener(error=urllib.error.URLError("refused")))
    with pytest.raises(NotificationDeliveryError, match="refused"):
        poster.post(make())


# --- slack ----------------------------------------------------------------------------------------


def test_block_kit_shape() -> None:
    payload = build_blocks(make(review_url="https://baton.example/runs/run-01/review", kind="review"))
    assert payload["text"].startswith("Review requested")
    types = [block["type"] for block in payload["blocks"]]
    assert types == ["header", "section", "section", "context", "actions"]
    header, prompt, options, context, actions = payload["blocks"]
    assert header["text"]["type"] == "plain_text"
    assert len(header["text"]["text"]) <= 150
    assert prompt["text"] == {"type": "mrkdwn", "text": "Choose deployment target"}
    assert options["text"]["text"] == "*Options*\n• staging\n• production"
    context_text = " ".join(element["text"] for element in context["elements"])
    assert "`run-01`" in context_text
    assert "`int-7`" in context_text
    assert "baton resume --run-id run-01" in context_text
    button = actions["elements"][0]
    assert button["type"] == "button"
    assert button["url"] == "https://baton.example/runs/run-01/review"


def test_block_kit_minimal_and_escaped() -> None:
    payload = build_blocks(make(options=None, prompt="Use <b> & <i>?", title="x" * 300))
    types = [block["type"] for block in payload["blocks"]]
    assert types == ["header", "section", "context"]
    assert payload["blocks"][1]["text"]["text"] == "Use &lt;b&gt; &amp; &lt;i&gt;?"
    assert len(payload["blocks"][0]["text"]["text"]) == 150
    json.dumps(payload)


def test_slack_poster_posts_blocks_and_redacts_url_in_errors() -> None:
    opener = FakeOpener()
    poster = SlackPoster(StaticUrl("https://hooks.slack.com/services/T/B/secret"), opener)
    assert poster.post(make()) == 200
    request, _ = opener.requests[0]
    assert isinstance(request.data, bytes)
    assert json.loads(request.data) == build_blocks(make())
    failing = SlackPoster(StaticUrl("https://hooks.slack.com/services/T/B/secret"), FakeOpener(status=404))
    with pytest.raises(NotificationDeliveryError) as info:
        failing.post(make())
    assert "secret" not in info.value.message
    assert "hooks.slack.com" in info.value.message


def test_ssm_url_provider_reads_once_with_decryption() -> None:
    ssm = _client("ssm")
    with Stubber(ssm) as stub:
        stub.add_response(
            "get_parameter",
            {"Parameter": {"Name": "/baton/slack", "Type": "SecureString", "Value": "https://hooks/x\n"}},
            {"Name": "/baton/slack", "WithDecryption": True},
        )
        provider = SsmParameterUrl(ssm, "/baton/slack")
        assert provider() == "https://hooks/x"
        assert provider() == "https://hooks/x"  # cached: a second call would fail the stubber
        stub.assert_no_pending_responses()


@pytest.mark.parametrize(
    "secret_string", ["https://hooks/y", '{"url": "https://hooks/y"}', '{"webhook_url": "https://hooks/y"}']
)
def test_secrets_manager_url_provider(secret_string: str) -> None:
    sm = _client("secretsmanager")
    with Stubber(sm) as stub:
        stub.add_response("get_secret_value", {"SecretString": secret_string}, {"SecretId": "arn:secret:slack"})
        provider = SecretsManagerUrl(sm, "arn:secret:slack")
        assert provider() == "https://hooks/y"
        assert provider() == "https://hooks/y"


# --- email & console ------------------------------------------------------------------------------


def test_email_rendering() -> None:
    subject, body = render_email(make(review_url="https://baton.example/r"))
    assert subject == "[Baton] Interrupt: Choose deployment target (run run-01)"
    assert "Choose deployment target" in body
    assert "  - staging\n  - production" in body
    assert "How to answer:" in body
    assert "baton workflow resume-interrupt run-01 --interrupt-id int-7 --input '<json>'" in body
    assert "POST /api/v1/interrupts/int-7/resume" in body
    assert "Review: https://baton.example/r" in body


def test_email_subject_is_sns_safe() -> None:
    long = make(prompt="line one\nline two\t" + "word " * 60, run_id="r" * 40)
    subject, _ = render_email(long)
    assert len(subject) < 100
    assert "\n" not in subject and "\t" not in subject
    subject, _ = render_email(make(title="Tab\there\r\nand\x07bell"))
    assert subject.startswith("[Baton] Tab here and bell")


def test_console_rendering() -> None:
    text = render_console(make(prompt="first\nsecond"))
    lines = text.splitlines()
    assert lines[0] == "[baton] interrupt_created (interrupt) run=run-01 interaction=int-7 node=gate"
    assert "  > first" in lines and "  > second" in lines
    assert "  options: staging | production" in lines
    assert any("resume-interrupt" in line for line in lines)


# --- SNS ------------------------------------------------------------------------------------------


def test_sns_publish_is_one_call_with_attributes_and_subject() -> None:
    sns = _client("sns")
    n = make(channels=["email", "slack"])
    subject, email_body = render_email(n)
    expected = {
        "TopicArn": TOPIC,
        "Message": json.dumps({"default": n.to_message(), "email": email_body}),
        "MessageStructure": "json",
        "Subject": subject,
        "MessageAttributes": {
            "event": {"DataType": "String", "StringValue": "interrupt_created"},
            "kind": {"DataType": "String", "StringValue": "interrupt"},
            "run_id": {"DataType": "String", "StringValue": "run-01"},
            "channel": {"DataType": "String.Array", "StringValue": '["email", "slack"]'},
            "interaction_id": {"DataType": "String", "StringValue": "int-7"},
        },
    }
    with Stubber(sns) as stub:
        stub.add_response("publish", {"MessageId": "m-1"}, expected)
        assert SnsNotifier(sns, TOPIC).publish(n) == "m-1"
        stub.assert_no_pending_responses()
    message = json.loads(expected["Message"])  # type: ignore[arg-type]
    assert Notification.from_message(message["default"]) == n


def test_sns_attributes_without_interaction_id() -> None:
    request = build_publish_request(make(interaction_id=None, kind="await", event="await_started"), TOPIC)
    assert set(request["MessageAttributes"]) == {"event", "kind", "run_id", "channel"}
    assert len(request["MessageAttributes"]) <= 10


def test_filter_policies() -> None:
    for channel in CHANNELS:
        assert filter_policy_for(channel) == {"channel": [channel]}
        attrs = subscription_attributes_for(channel)
        assert json.loads(attrs["FilterPolicy"]) == {"channel": [channel]}
        assert attrs["FilterPolicyScope"] == "MessageAttributes"
    with pytest.raises(ValueError):
        filter_policy_for("pager")


def test_recording_notifier() -> None:
    recorder = RecordingNotifier()
    first = recorder.publish(make(channels=["slack"]))
    recorder.publish(make(channels=["console"], interaction_id="int-8"))
    assert first == "recorded-1"
    assert [n.interaction_id for n in recorder.for_channel("slack")] == ["int-7"]
    assert recorder.requests[1]["MessageAttributes"]["channel"]["StringValue"] == '["console"]'
    recorder.clear()
    assert recorder.notifications == []


# --- subscribers ----------------------------------------------------------------------------------


def test_deliver_sns_event_filters_on_body_channels() -> None:
    delivered: list[Notification] = []
    invalid: list[str] = []
    event = sns_event(make(channels=["slack"]), make(channels=["console"]), '{"nope": 1}')
    result = deliver_sns_event(event, "slack", delivered.append, on_invalid=lambda m, e: invalid.append(m))
    assert (result.delivered, result.skipped, result.invalid) == (1, 1, 1)
    assert result.interaction_ids == ["int-7"]
    assert invalid == ['{"nope": 1}']
    with pytest.raises(BadRequestError):
        deliver_sns_event({"foo": 1}, "slack", delivered.append)


def test_deliver_accepts_direct_notification_payload() -> None:
    delivered: list[Notification] = []
    result = deliver_sns_event(make().model_dump(mode="json"), "console", delivered.append)
    assert result.delivered == 1 and delivered == [make()]


def test_console_handler_prints(capsys: pytest.CaptureFixture[str]) -> None:
    from functions.notify_console.handler import lambda_handler

    result = lambda_handler(sns_event(make(channels=["console"])), None)
    assert result["delivered"] == 1
    assert "[baton] interrupt_created (interrupt) run=run-01" in capsys.readouterr().out


# --- config ---------------------------------------------------------------------------------------


def test_slack_config_sources() -> None:
    with pytest.raises(ValidationError):
        SlackConfig.from_env({})
    assert isinstance(SlackConfig.from_env({"SLACK_WEBHOOK_URL": "http://x"}).url_provider(), StaticUrl)
    ssm = _client("ssm")
    provider = SlackConfig.from_env({"SLACK_WEBHOOK_PARAMETER": "/p"}).url_provider(ssm_client=ssm)
    assert isinstance(provider, SsmParameterUrl) and provider.name == "/p"
    sm = _client("secretsmanager")
    provider = SlackConfig.from_env({"SLACK_WEBHOOK_SECRET_ARN": "arn:s"}).url_provider(secretsmanager_client=sm)
    assert isinstance(provider, SecretsManagerUrl) and provider.secret_id == "arn:s"


def test_webhook_config_secret_from_ssm() -> None:
    with pytest.raises(ValidationError):
        WebhookConfig.from_env({"WEBHOOK_URL": "http://x"})
    with pytest.raises(ValidationError):
        WebhookConfig.from_env({"WEBHOOK_SECRET": "s"})
    config = WebhookConfig.from_env({"WEBHOOK_URL": "http://x", "WEBHOOK_SECRET_PARAMETER": "/secret"})
    assert "zz" not in repr(WebhookConfig.from_env({"WEBHOOK_URL": "http://x", "WEBHOOK_SECRET": "zz"}))
    ssm = _client("ssm")
    with Stubber(ssm) as stub:
        stub.add_response(
            "get_parameter",
            {"Parameter": {"Value": SECRET}},
            {"Name": "/secret", "WithDecryption": True},
        )
        poster = config.build_poster(ssm_client=ssm, opener=FakeOpener())
    assert poster.url == "http://x"
    body, headers = poster.build_request(make())
    assert verify(body, headers[SIGNATURE_HEADER], SECRET)


@pytest.mark.parametrize(
    ("environment", "variable"),
    [
        ({"BATON_TABLE_NAME": "t"}, "BATON_TOPIC_ARN"),
        ({"BATON_TABLE_NAME": "", "BATON_TOPIC_ARN": "arn"}, "BATON_TABLE_NAME"),
    ],
)
def test_wiring_fails_loudly_without_the_topic_or_the_table(environment: dict[str, str], variable: str) -> None:
    """No silent fallback to recording notifications: the cold start names the missing variable."""
    from baton.runtime.settings import MissingResourceError, Settings
    from baton.runtime.wiring import build_services

    with pytest.raises(MissingResourceError, match=variable):
        build_services(Settings.from_env(environment))


def test_every_kind_has_a_title() -> None:
    # A kind without one raised KeyError inside notify, so its notification was lost (a tool approval's was).
    for kind in get_args(Kind):
        assert make(kind=kind, options=None).title.endswith(": Choose deployment target")
    assert make(kind="tool_approval", options=None).title.startswith("Tool call needs approval")
