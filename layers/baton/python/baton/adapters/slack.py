"""The Slack app's AWS side: the replay guard (a signature seen once, by a conditional write in the
table, kept until its timestamp leaves Slack's 5-minute window) and the hand-off to the worker after the
ack (an asynchronous Lambda invoke deployed; locally the same worker function invoked in a background
thread, since the local stack runs every invoke in the caller's thread).

It is on the interaction function's cold path (`baton/channels/slack/ack.py`), so its clients come from
botocore itself (`botocore_client`): `boto3` adds s3transfer and the resource layer, which an ack never
uses."""

from __future__ import annotations

import json
import logging
import threading
from typing import TYPE_CHECKING, Any

from botocore.config import Config
from botocore.exceptions import ClientError

from baton.workflows.table import PK, SK, TTL_ATTRIBUTE

if TYPE_CHECKING:
    from baton.channels.slack.payloads import SlackJob

log = logging.getLogger("baton")

# The values of `baton/adapters/clients.py` CLIENT_CONFIG (not imported from there: it imports boto3).
ACK_CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=5, read_timeout=30)


class DynamoReplayGuard:
    """`SLACKSIG#<signature>` written once (`attribute_not_exists`): a second write of the same
    signature loses, so a replayed request is refused whichever container it reaches."""

    def __init__(self, table_name: str, client: Any) -> None:
        self._table = table_name
        self._db = client

    def first_use(self, signature: str, *, expires_at: int) -> bool:
        try:
            self._db.put_item(
                TableName=self._table,
                Item={
                    PK: {"S": f"SLACKSIG#{signature}"},
                    SK: {"S": "SLACKSIG"},
                    TTL_ATTRIBUTE: {"N": str(expires_at)},
                },
                ConditionExpression=f"attribute_not_exists({PK})",
            )
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True


class LambdaJobs:
    """Deployed: each job is an asynchronous invoke (`InvocationType=Event`) of the worker function;
    Lambda queues it and retries it, and the interaction function has already answered Slack."""

    def __init__(self, client: Any, function_name: str) -> None:
        self._lambda = client
        self._function = function_name

    def submit(self, job: SlackJob) -> None:
        self._lambda.invoke(FunctionName=self._function, InvocationType="Event", Payload=job.to_json())


class ThreadedLambdaJobs:
    """Locally: the same worker function, invoked in a daemon thread (the local stack runs an invoke in
    the caller's thread, which would hold the ack until the answer is done)."""

    def __init__(self, client: Any, function_name: str) -> None:
        self._lambda = client
        self._function = function_name

    def submit(self, job: SlackJob) -> None:
        threading.Thread(target=self._invoke, args=(job,), name="slack-worker", daemon=True).start()

    def _invoke(self, job: SlackJob) -> None:
        try:
            response = self._lambda.invoke(FunctionName=self._function, Payload=job.to_json())
            if response.get("FunctionError"):
                log.warning("slack worker failed: %s", json.loads(response["Payload"].read() or b"{}"))
        except Exception:
            log.exception("slack worker invoke failed")


def botocore_client(service: str) -> Any:
    """A client from the environment (AWS_ENDPOINT_URL / AWS_REGION honoured, as boto3's are), with the
    shared client configuration; one botocore session per container."""
    return _session().create_client(service, config=ACK_CLIENT_CONFIG)


_SESSIONS: list[Any] = []


def _session() -> Any:
    if not _SESSIONS:
        import botocore.session

        _SESSIONS.append(botocore.session.get_session())
    return _SESSIONS[0]


def lambda_client() -> Any:
    return botocore_client("lambda")
