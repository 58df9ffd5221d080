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

# No client-side parameter validation: every request is built by Baton's adapters from models already
# validated, and the service validates it again; botocore's walk of each request against its shape was
# the largest part of the client's own CPU on the answer path (scripts/profile_answer_path.py).
CLIENT_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 3}, connect_timeout=5, read_timeout=30, parameter_validation=False
)


def dynamodb_client() -> DynamoDBClient:
    """A DynamoDB client from the environment (AWS_ENDPOINT_URL / AWS_REGION are honoured)."""
    return boto3.session.Session().client("dynamodb", config=CLIENT_CONFIG)


def secret_store_client(service: Literal["ssm", "secretsmanager"]) -> Any:
    """An SSM or Secrets Manager client for the notify Lambdas' secrets (`baton/notify/config.py`)."""
    return boto3.session.Session().client(service, config=CLIENT_CONFIG)
