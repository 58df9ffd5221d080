"""Powertools Idempotency for the operator actions that resume gates (answer, resume, interrupt resume).

A client that retries the same request (same caller, same target, same payload) after a timeout gets
the first response back instead of a 409; a different payload still meets the conditional write and
its 409. Errors are not remembered (Powertools deletes the record when the call raises), so a failed
attempt can be retried. Records live in Baton's table under PK=IDEMPOTENCY and expire with its TTL."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError

from baton.workflows.table import PK, SK, TTL_ATTRIBUTE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

Action = Callable[[], dict[str, Any]]


class Idempotency:
    def __init__(self, table_name: str, client: DynamoDBClient, *, expires_after_seconds: int = 3600) -> None:
        self.config = IdempotencyConfig(expires_after_seconds=expires_after_seconds, raise_on_no_idempotency_key=True)
        persistence = DynamoDBPersistenceLayer(
            table_name=table_name,
            key_attr=PK,
            sort_key_attr=SK,
            static_pk_value="IDEMPOTENCY",
            expiry_attr=TTL_ATTRIBUTE,
            boto3_client=client,
        )

        @idempotent_function(data_keyword_argument="request", persistence_store=persistence, config=self.config)
        def once(request: dict[str, Any], action: Action) -> dict[str, Any]:
            return action()

        self._once = once

    def register_lambda_context(self, context: Any) -> None:
        if context is not None and hasattr(context, "get_remaining_time_in_millis"):
            self.config.register_lambda_context(context)

    def run(self, operation: str, request: dict[str, Any], action: Action) -> dict[str, Any]:
        """Run `action` once per distinct (operation, request); a repeat returns the stored result."""
        try:
            result: dict[str, Any] = self._once(request={"operation": operation, **request}, action=action)
        except IdempotencyAlreadyInProgressError:
            # A twin is running right now: let the domain's conditional write decide, so the loser
            # gets the usual 409 carrying the winner rather than a bare "in progress".
            return action()
        return result


class NoIdempotency:
    """For in-memory wiring (unit tests): every call runs."""

    def register_lambda_context(self, context: Any) -> None:
        pass

    def run(self, operation: str, request: dict[str, Any], action: Action) -> dict[str, Any]:
        return action()
