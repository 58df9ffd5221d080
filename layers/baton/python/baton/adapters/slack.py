"""The Slack app's AWS side: the replay guard (a signature seen once, by a conditional write in the
table, kept until its timestamp leaves Slack's 5-minute window) and the hand-off to the worker after the
ack (an asynchronous Lambda invoke deployed; locally the same worker function invoked in a background
thread, since the local stack runs every invoke in the caller's thread)."""

from __future__ import annotations

import json
import logging
import threading
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from baton.adapters.clients import CLIENT_CONFIG
from baton.workflows.table import PK, SK, TTL_ATTRIBUTE

if TYPE_CHECKING:
    from baton.channels.slack.payloads import SlackJob

log = logging.getLogger("baton")


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
        self._lambda.invoke(FunctionName=self._function, InvocationType="Event", Payload=job.model_dump_json().encode())


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
            response = self._lambda.invoke(FunctionName=self._function, Payload=job.model_dump_json().encode())
            if response.get("FunctionError"):
                log.warning("slack worker failed: %s", json.loads(response["Payload"].read() or b"{}"))
        except Exception:
            log.exception("slack worker invoke failed")


def lambda_client() -> Any:
    import boto3

    return boto3.session.Session().client("lambda", config=CLIENT_CONFIG)
