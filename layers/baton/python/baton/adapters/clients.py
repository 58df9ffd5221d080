"""The one boto3 client configuration (retries, timeouts) every Baton client is built with:
`baton/runtime/wiring.py` for the Lambdas, `dynamodb_client` for the review gate's build report
(`baton/merge/build.py`), which runs outside any Lambda, and `secret_store_client` for the notify
Lambdas' webhook URLs and secrets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# botocore's client-side parameter validation stays on here (deployed, and in the tests on moto, where it
# catches a malformed request moto might accept); the local stack turns it off for its own in-process calls
# (`baton/local/in_process.py` `unvalidated_in_process`), where it was the largest part of the client's own
# CPU on the answer path (scripts/profile_answer_path.py).
CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=5, read_timeout=30)


def dynamodb_client() -> DynamoDBClient:
    """A DynamoDB client from the environment (AWS_ENDPOINT_URL / AWS_REGION are honoured)."""
    return boto3.session.Session().client("dynamodb", config=CLIENT_CONFIG)


def secret_store_client(service: Literal["ssm", "secretsmanager"]) -> Any:
    """An SSM or Secrets Manager client for the notify Lambdas' secrets (`baton/notify/config.py`)."""
    return boto3.session.Session().client(service, config=CLIENT_CONFIG)
