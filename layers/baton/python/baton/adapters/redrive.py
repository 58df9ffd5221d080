"""`baton redrive`'s AWS side (the command: baton/cli/redrive.py): invoke a function again with the events
its dead-letter queue kept.

Every function Lambda invokes asynchronously (notify_*, slack_worker, the schedules, run_lifecycle,
build_finished) has a queue `baton-<team>-<function>-dlq` as its on-failure destination
(infra/capabilities/dead_letters.py). A message there is Lambda's invocation record: `requestPayload` is
the original event, `requestContext.functionArn` the function, `responsePayload` the error. A plain
Lambda dead-letter queue's message is the event itself (the function then follows from the queue's name).

SQS's own redrive (`StartMessageMoveTask`) moves messages between SQS queues only, not back to a Lambda:
so each event is re-invoked asynchronously (`InvocationType=Event`, what its first delivery was), and its
message deleted only once Lambda accepted the invoke (202). A failed invoke leaves the message in its
queue (visible again at the end of the run); an event that fails again lands there again.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel, computed_field

from baton.domain.dead_letters import QUEUE_SUFFIX, dead_letter_queue_name, function_of_queue, team_prefix

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from mypy_boto3_lambda import LambdaClient

# What a call to SQS or Lambda raises (the command turns it into one readable line).
AWS_ERRORS: Final = (ClientError, BotoCoreError)
RECEIVE_BATCH = 10  # SQS's most per ReceiveMessage
# Long polling asks every SQS server (a short poll samples some, and may answer "empty" too soon).
RECEIVE_WAIT_SECONDS = 1
# Long enough for a batch's invokes; a message this run could not redrive is made visible again at its end.
VISIBILITY_SECONDS = 120


class SqsClient(Protocol):
    """The SQS calls the redrive makes (a boto3 `sqs` client; the project has no SQS stubs)."""

    def list_queues(self, **kwargs: Any) -> Mapping[str, Any]: ...
    def get_queue_url(self, **kwargs: Any) -> Mapping[str, Any]: ...
    def receive_message(self, **kwargs: Any) -> Mapping[str, Any]: ...
    def delete_message(self, **kwargs: Any) -> Mapping[str, Any]: ...
    def change_message_visibility(self, **kwargs: Any) -> Mapping[str, Any]: ...


class DeadLetter(BaseModel):
    """One kept event: what to invoke with what, and why it failed (as far as the message says)."""

    message_id: str
    function: str | None  # None: the message names no function and its queue none either
    payload: str | None  # the event, as the JSON the function was first invoked with
    error: str = ""


class Redriven(BaseModel):
    queue: str
    message_id: str
    function: str | None
    outcome: Literal["redriven", "would_redrive", "failed"]
    error: str = ""  # why it was in the queue (redriven), or why this run could not redrive it (failed)


class RedriveReport(BaseModel):
    team: str
    dry_run: bool
    queues: list[str]
    messages: list[Redriven]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def redriven(self) -> int:
        return sum(m.outcome == "redriven" for m in self.messages)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def failed(self) -> int:
        """Left in their queues: not an event, or the invoke was not accepted."""
        return sum(m.outcome == "failed" for m in self.messages)


def read_dead_letter(queue_name: str, message: Mapping[str, Any]) -> DeadLetter:
    """An SQS message of a dead-letter queue -> the event to invoke again and its function."""
    message_id = str(message["MessageId"])
    body = str(message.get("Body", ""))
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and "requestPayload" in parsed and isinstance(parsed.get("requestContext"), dict):
        context = parsed["requestContext"]
        response = parsed.get("responsePayload")
        reason = response.get("errorMessage") if isinstance(response, dict) else None
        return DeadLetter(
            message_id=message_id,
            function=context.get("functionArn") or function_of_queue(queue_name),
            payload=json.dumps(parsed["requestPayload"], separators=(",", ":")),
            error=" ".join(str(part) for part in (context.get("condition"), reason) if part),
        )
    attributes = message.get("MessageAttributes") or {}
    # A Lambda DLQ's error attribute, or EventBridge's for an event it could not deliver to the function.
    error = attributes.get("ErrorMessage") or attributes.get("ERROR_MESSAGE") or {}
    reason = error.get("StringValue", "")
    if isinstance(parsed, dict) and parsed.get("Type") == "Notification" and "TopicArn" in parsed:
        # A message the SNS subscription could not hand to Lambda: its JSON envelope, as Lambda's SNS event.
        return DeadLetter(
            message_id=message_id,
            function=function_of_queue(queue_name),
            payload=json.dumps(sns_event(parsed), separators=(",", ":")),
            error=str(reason) or "SNS could not deliver it",
        )
    # A Lambda DLQ's message is the event itself (or a raw SNS message, the notification, which the
    # notify_* handlers take as is); a body that is not JSON cannot have been one.
    return DeadLetter(
        message_id=message_id,
        function=function_of_queue(queue_name),
        payload=body if parsed is not None else None,
        error=str(reason),
    )


# The SNS envelope's keys that Lambda's SNS event spells differently.
_SNS_EVENT_KEYS = {"SigningCertURL": "SigningCertUrl", "UnsubscribeURL": "UnsubscribeUrl"}


def sns_event(envelope: Mapping[str, Any]) -> dict[str, Any]:
    """An SNS message's JSON envelope -> the event SNS would have invoked the function with."""
    record = {_SNS_EVENT_KEYS.get(key, key): value for key, value in envelope.items()}
    return {"Records": [{"EventSource": "aws:sns", "EventVersion": "1.0", "Sns": record}]}


def find_queues(sqs: SqsClient, team: str, names: Sequence[str] = ()) -> dict[str, str]:
    """name -> URL of the team's dead-letter queues (all of them, or those `names` give: a function's name,
    `notify_slack`, or the queue's, `baton-<team>-notify_slack-dlq`)."""
    prefix = team_prefix(team)
    if names:
        found: dict[str, str] = {}
        for name in names:
            queue = name if name.endswith(QUEUE_SUFFIX) else dead_letter_queue_name(prefix, name)
            found[queue] = str(sqs.get_queue_url(QueueName=queue)["QueueUrl"])
        return found
    urls: list[str] = []
    request: dict[str, Any] = {"QueueNamePrefix": f"{prefix}-", "MaxResults": 1000}
    while True:
        page = sqs.list_queues(**request)
        urls.extend(page.get("QueueUrls", []))
        if not page.get("NextToken"):
            break
        request["NextToken"] = page["NextToken"]
    by_name = {url.rsplit("/", 1)[-1]: url for url in urls}
    return {name: url for name, url in sorted(by_name.items()) if function_of_queue(name) is not None}


def redrive(
    sqs: SqsClient,
    lambda_client: LambdaClient,
    *,
    team: str,
    queues: Mapping[str, str],
    dry_run: bool = False,
    wait_seconds: int | None = None,
    progress: Callable[[Redriven], None] = lambda _: None,
) -> RedriveReport:
    """Every message of `queues` (name -> URL): its event invoked again asynchronously, then deleted."""
    report = RedriveReport(team=team, dry_run=dry_run, queues=list(queues), messages=[])
    for queue, url in queues.items():
        kept: list[str] = []  # receipt handles to make visible again: dry run, or not redriven
        seen: set[str] = set()
        while True:
            batch = sqs.receive_message(
                QueueUrl=url,
                MaxNumberOfMessages=RECEIVE_BATCH,
                VisibilityTimeout=VISIBILITY_SECONDS,
                WaitTimeSeconds=RECEIVE_WAIT_SECONDS if wait_seconds is None else wait_seconds,
                MessageAttributeNames=["All"],
            ).get("Messages", [])
            fresh = [m for m in batch if m["MessageId"] not in seen]
            kept.extend(m["ReceiptHandle"] for m in batch if m["MessageId"] in seen)  # one this run left
            if not fresh:
                break
            for message in fresh:
                seen.add(message["MessageId"])
                entry = _redrive_message(sqs, lambda_client, queue, url, message, dry_run=dry_run)
                if entry.outcome != "redriven":
                    kept.append(message["ReceiptHandle"])
                report.messages.append(entry)
                progress(entry)
        for handle in kept:  # visible again now, not after VISIBILITY_SECONDS
            # a handle superseded by a later receive fails: that message reappears at its timeout anyway
            with contextlib.suppress(ClientError, BotoCoreError):
                sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=0)
    return report


def _redrive_message(
    sqs: SqsClient, lambda_client: LambdaClient, queue: str, url: str, message: Mapping[str, Any], *, dry_run: bool
) -> Redriven:
    letter = read_dead_letter(queue, message)
    entry = Redriven(queue=queue, message_id=letter.message_id, function=letter.function, outcome="failed")
    if letter.function is None or letter.payload is None:
        entry.error = "not an invocation record or an event: left in the queue"
        return entry
    if dry_run:
        entry.outcome, entry.error = "would_redrive", letter.error
        return entry
    try:
        status = lambda_client.invoke(
            FunctionName=letter.function, InvocationType="Event", Payload=letter.payload.encode()
        ).get("StatusCode")
        if status != 202:  # Lambda accepted an asynchronous invoke: 202, nothing else
            entry.error = f"the invoke answered {status}, not 202: left in the queue"
            return entry
        # Accepted: Lambda has queued the event; only now may its message go.
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    except (ClientError, BotoCoreError) as err:
        entry.error = f"{err}: left in the queue"
        return entry
    entry.outcome, entry.error = "redriven", letter.error
    return entry


def aws_clients(region: str | None) -> tuple[SqsClient, LambdaClient]:
    """The SQS and Lambda clients of the caller's AWS credentials (tests replace this)."""
    import boto3

    session = boto3.session.Session(region_name=region)
    return session.client("sqs"), session.client("lambda")
