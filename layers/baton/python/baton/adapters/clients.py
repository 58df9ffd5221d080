"""The one boto3 client configuration (retries, timeouts) every Baton client is built with:
`baton/runtime/wiring.py` for the Lambdas, `dynamodb_client` for the review gate's build report
(`baton/merge/build.py`), which runs outside any Lambda, and `secret_store_client` for the notify
Lambdas' webhook URLs and secrets."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Literal

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# botocore's client-side parameter validation stays on here (deployed, and in the tests on moto, where it
# catches a malformed request moto might accept) and in the local stack.
RETRIES = 3  # botocore's `max_attempts` counts the retries after the first attempt
MAX_ATTEMPTS = RETRIES + 1  # every call's attempts, its first included
CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": RETRIES}, connect_timeout=5, read_timeout=30)
# DynamoDB refuses a single-item write to an item a transaction is writing (TransactionConflictException):
# nothing was written, so the same request again is safe. botocore's standard mode retries throttling but
# not this; `retry_transaction_conflicts` does, with the same attempts and DynamoDB's own backoff base.
TRANSACTION_CONFLICT = "TransactionConflictException"
_CONFLICT_BACKOFF_SECONDS = 0.025


def _conflict_retry_delay(response: Any = None, attempts: int = 1, **_: Any) -> float | None:
    """botocore's `needs-retry` hook: a delay (retry) for a TransactionConflictException under the
    attempt limit, else None (botocore's own retry handler decides)."""
    if response is None or attempts >= MAX_ATTEMPTS:
        return None
    _, parsed = response
    if parsed.get("Error", {}).get("Code") != TRANSACTION_CONFLICT:
        return None
    return random.uniform(0, _CONFLICT_BACKOFF_SECONDS * 2 ** (attempts - 1))


def retry_transaction_conflicts(client: DynamoDBClient) -> DynamoDBClient:
    """The client, its single-item writes retried on TransactionConflictException."""
    # botocore's stubs type every handler as returning None; a needs-retry handler returns its delay
    client.meta.events.register(
        "needs-retry.dynamodb",
        _conflict_retry_delay,  # type: ignore[arg-type]
        unique_id="baton-transaction-conflict",
    )
    return client


def dynamodb_client(session: boto3.session.Session | None = None) -> DynamoDBClient:
    """A DynamoDB client from the environment (AWS_ENDPOINT_URL / AWS_REGION are honoured)."""
    client = (session or boto3.session.Session()).client("dynamodb", config=CLIENT_CONFIG)
    return retry_transaction_conflicts(client)


def secret_store_client(service: Literal["ssm", "secretsmanager"]) -> Any:
    """An SSM or Secrets Manager client for the notify Lambdas' secrets (`baton/notify/config.py`)."""
    return boto3.session.Session().client(service, config=CLIENT_CONFIG)
