"""`baton redrive` (baton/cli/redrive.py, baton/adapters/redrive.py) on moto's SQS, with Lambda's invoke
stubbed through the same boto3 client (botocore's Stubber: moto would run the function in Docker): each kept
event is invoked again asynchronously with the original event and its message deleted; a failed invoke keeps
its message; a dry run changes nothing; other teams' queues and the audit archive's failure queue are not
touched."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws
from typer.testing import CliRunner

from baton.adapters import redrive as redrive_adapter
from baton.cli.main import app

REGION = "eu-west-1"
ACCOUNT = "123456789012"
NOTIFY = "baton-ci-notify_slack"
WORKER = "baton-ci-slack_worker"
NOTIFY_ARN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{NOTIFY}:$LATEST"
SNS_EVENT = {"Records": [{"EventSource": "aws:sns", "Sns": {"Message": '{"event":"human_input_requested"}'}}]}
SLACK_JOB = {"kind": "block_actions", "run_id": "r1", "interaction_id": "i1"}


def on_failure_record(event: dict[str, Any]) -> str:
    """What Lambda sends an SQS on-failure destination after the retries (its documented invocation record)."""
    return json.dumps(
        {
            "version": "1.0",
            "timestamp": "2026-12-04T18:00:00.000Z",
            "requestContext": {
                "requestId": "e4b46cbf-b738-xmpl-8880-a18cdf61200e",
                "functionArn": NOTIFY_ARN,
                "condition": "RetriesExhausted",
                "approximateInvokeCount": 3,
            },
            "requestPayload": event,
            "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
            "responsePayload": {"errorMessage": "slack answered 500", "errorType": "SlackApiError"},
        }
    )


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Stubber]]:
    """moto's SQS and a stubbed Lambda client, handed to the command in place of the caller's credentials."""
    for var, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}.items():
        monkeypatch.setenv(var, value)
    with mock_aws():
        sqs = boto3.client("sqs", region_name=REGION)
        lambda_client = boto3.client("lambda", region_name=REGION)
        stubber = Stubber(lambda_client)
        monkeypatch.setattr(redrive_adapter, "aws_clients", lambda region: (sqs, lambda_client))
        monkeypatch.setattr(redrive_adapter, "RECEIVE_WAIT_SECONDS", 0)  # moto holds an empty long poll
        with stubber:
            yield sqs, stubber


def _queue(sqs: Any, name: str, *bodies: str) -> str:
    url: str = sqs.create_queue(QueueName=name)["QueueUrl"]
    for body in bodies:
        sqs.send_message(QueueUrl=url, MessageBody=body)
    return url


def _visible(sqs: Any, url: str) -> int:
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])


def _invoke(stubber: Stubber, function: str, payload: str, status: int = 202) -> None:
    expected = {"FunctionName": function, "InvocationType": "Event", "Payload": payload.encode()}
    stubber.add_response("invoke", {"StatusCode": status}, expected)


def _compact(event: dict[str, Any]) -> str:
    return json.dumps(event, separators=(",", ":"))


def test_each_kept_event_is_invoked_again_and_its_queue_emptied(aws: tuple[Any, Stubber]) -> None:
    sqs, stubber = aws
    notify = _queue(sqs, f"{NOTIFY}-dlq", on_failure_record(SNS_EVENT))
    worker = _queue(sqs, f"{WORKER}-dlq", json.dumps(SLACK_JOB))  # a plain Lambda DLQ: the event itself
    audit = _queue(sqs, "baton-ci-audit_archive-failed", '{"DDBStreamBatchInfo": {}}')  # a stream's, not ours
    other_team = _queue(sqs, "baton-other-notify_slack-dlq", on_failure_record(SNS_EVENT))
    _invoke(stubber, NOTIFY_ARN, _compact(SNS_EVENT))  # the function the record names, with the original event
    _invoke(stubber, WORKER, json.dumps(SLACK_JOB))  # the queue's function, the body as it is

    result = CliRunner().invoke(app, ["redrive", "--team", "ci", "--json"])

    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["redriven"], report["failed"]) == (2, 0)
    assert report["queues"] == [f"{NOTIFY}-dlq", f"{WORKER}-dlq"]
    by_queue = {m["queue"]: m for m in report["messages"]}
    assert by_queue[f"{NOTIFY}-dlq"]["error"] == "RetriesExhausted slack answered 500"
    stubber.assert_no_pending_responses()  # both invokes made, with exactly those parameters
    assert (_visible(sqs, notify), _visible(sqs, worker)) == (0, 0)
    assert (_visible(sqs, audit), _visible(sqs, other_team)) == (1, 1)
    assert f"{NOTIFY}-dlq: redriven" in result.stderr  # progress lines, off standard output


def test_a_failed_invoke_keeps_its_message_visible_and_exits_1(aws: tuple[Any, Stubber]) -> None:
    sqs, stubber = aws
    notify = _queue(sqs, f"{NOTIFY}-dlq", on_failure_record(SNS_EVENT), on_failure_record({"second": True}))
    stubber.add_client_error("invoke", "TooManyRequestsException", "Rate exceeded", http_status_code=429)
    _invoke(stubber, NOTIFY_ARN, _compact({"second": True}))

    result = CliRunner().invoke(app, ["redrive", "--team", "ci", "--queue", "notify_slack", "--json"])

    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert (report["redriven"], report["failed"]) == (1, 1)
    (failed,) = [m for m in report["messages"] if m["outcome"] == "failed"]
    assert "TooManyRequestsException" in failed["error"]
    stubber.assert_no_pending_responses()
    # The failed one is still there, and visible again now (not after the receive's visibility timeout).
    kept = sqs.receive_message(QueueUrl=notify, MaxNumberOfMessages=10)["Messages"]
    assert [json.loads(m["Body"])["requestPayload"] for m in kept] == [SNS_EVENT]


def test_an_invoke_not_accepted_keeps_its_message(aws: tuple[Any, Stubber]) -> None:
    sqs, stubber = aws
    worker = _queue(sqs, f"{WORKER}-dlq", json.dumps(SLACK_JOB))
    _invoke(stubber, WORKER, json.dumps(SLACK_JOB), status=200)  # not 202: Lambda did not queue it

    result = CliRunner().invoke(app, ["redrive", "--team", "ci"])

    assert result.exit_code == 1
    assert "not 202" in result.stderr
    assert _visible(sqs, worker) == 1


def test_a_dry_run_invokes_and_deletes_nothing(aws: tuple[Any, Stubber]) -> None:
    sqs, _ = aws  # no stubbed response: an invoke would raise
    notify = _queue(sqs, f"{NOTIFY}-dlq", on_failure_record(SNS_EVENT))

    result = CliRunner().invoke(app, ["redrive", "--team", "ci", "--dry-run"])

    assert result.exit_code == 0, result.output
    assert f"{NOTIFY}-dlq: would redrive" in result.stderr
    assert "1 would be redriven, 0 left in their queues" in result.stderr
    assert len(sqs.receive_message(QueueUrl=notify)["Messages"]) == 1  # visible at once


def test_a_message_that_is_no_event_stays(aws: tuple[Any, Stubber]) -> None:
    sqs, _ = aws
    notify = _queue(sqs, f"{NOTIFY}-dlq", "not json")

    result = CliRunner().invoke(app, ["redrive", "--team", "ci", "--json"])

    assert result.exit_code == 1
    assert json.loads(result.stdout)["failed"] == 1
    assert _visible(sqs, notify) == 1


def test_an_unknown_queue_is_one_readable_error(aws: tuple[Any, Stubber]) -> None:
    result = CliRunner().invoke(app, ["redrive", "--team", "ci", "--queue", "nope"])

    assert result.exit_code == 1
    assert "error" in result.stderr and "Traceback" not in result.output


def test_a_message_the_subscription_could_not_deliver_goes_back_as_an_sns_event(aws: tuple[Any, Stubber]) -> None:
    """The subscription's own dead letter (its JSON envelope) is invoked as the SNS event Lambda would have
    had, which the notify_* handlers read (baton/notify/subscriber.py)."""
    from baton.notify.subscriber import iter_sns_messages

    sqs, stubber = aws
    notification = '{"event":"human_input_requested","run_id":"r1"}'
    topic = f"arn:aws:sns:{REGION}:{ACCOUNT}:baton-ci-notifications"
    envelope = {"Type": "Notification", "MessageId": "m1", "TopicArn": topic, "Message": notification}
    envelope |= {"SigningCertURL": "https://sns/cert.pem", "UnsubscribeURL": "https://sns/unsubscribe"}
    notify = _queue(sqs, f"{NOTIFY}-dlq", json.dumps(envelope))
    record = {"Type": "Notification", "MessageId": "m1", "TopicArn": topic, "Message": notification}
    record |= {"SigningCertUrl": "https://sns/cert.pem", "UnsubscribeUrl": "https://sns/unsubscribe"}
    event = {"Records": [{"EventSource": "aws:sns", "EventVersion": "1.0", "Sns": record}]}
    _invoke(stubber, NOTIFY, _compact(event))

    result = CliRunner().invoke(app, ["redrive", "--team", "ci", "--json"])

    assert result.exit_code == 0, result.output
    stubber.assert_no_pending_responses()
    assert list(iter_sns_messages(event)) == [notification]
    assert _visible(sqs, notify) == 0


def test_an_event_eventbridge_could_not_deliver_is_invoked_with_the_event_itself(aws: tuple[Any, Stubber]) -> None:
    """A rule target's dead letter (build_finished's, run_lifecycle's) is the event, its error an attribute."""
    sqs, stubber = aws
    build_end = {"source": "aws.codebuild", "detail-type": "CodeBuild Build State Change", "detail": {}}
    url = sqs.create_queue(QueueName="baton-ci-build_finished-dlq")["QueueUrl"]
    error = {"ERROR_MESSAGE": {"DataType": "String", "StringValue": "Lambda throttled the invoke"}}
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps(build_end), MessageAttributes=error)
    _invoke(stubber, "baton-ci-build_finished", json.dumps(build_end))

    result = CliRunner().invoke(app, ["redrive", "--team", "ci", "--json"])

    assert result.exit_code == 0, result.output
    (entry,) = json.loads(result.stdout)["messages"]
    assert (entry["outcome"], entry["error"]) == ("redriven", "Lambda throttled the invoke")
    stubber.assert_no_pending_responses()
    assert _visible(sqs, url) == 0
