"""Powertools Idempotency for the operator actions that resume gates (answer, resume, interrupt resume).

A client that retries the same request (same caller, same target, same payload) after a timeout gets
the first response back instead of a 409; a different payload still meets the conditional write and
its 409. Whether the twin came after the first finished or while it ran makes no difference: an
identical request that finds the first one in progress waits for its result (`IN_PROGRESS_WAIT_SECONDS`)
and answers with it. Errors are not remembered (Powertools deletes the record when the call raises), so a failed
attempt can be retried. Records live in Baton's table under PK=IDEMPOTENCY and expire with its TTL."""

from __future__ import annotations

import contextvars
import time
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
IN_PROGRESS_WAIT_SECONDS = 10.0  # how long an identical request waits for the first one's result
IN_PROGRESS_POLL_SECONDS = 0.05  # first re-read of the record; then x1.5 per read up to 0.5 s
MAX_IN_PROGRESS_POLL_SECONDS = 0.5

_lambda_context: contextvars.ContextVar[Any] = contextvars.ContextVar("baton_idempotency_context", default=None)


class _RequestScopedConfig(IdempotencyConfig):
    """The Lambda context Powertools reads (remaining time) belongs to the request, not to the shared
    config: the local stack serves concurrent requests with one `Services` in one process."""

    @property
    def lambda_context(self) -> Any:
        return _lambda_context.get()

    @lambda_context.setter
    def lambda_context(self, value: Any) -> None:
        _lambda_context.set(value)


class Idempotency:
    def __init__(
        self,
        table_name: str,
        client: DynamoDBClient,
        *,
        expires_after_seconds: int = 3600,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = _RequestScopedConfig(
            expires_after_seconds=expires_after_seconds, raise_on_no_idempotency_key=True
        )
        self._sleep = sleep
        self._monotonic = monotonic
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
        keyed = {"operation": operation, **request}
        deadline = self._monotonic() + IN_PROGRESS_WAIT_SECONDS
        interval = IN_PROGRESS_POLL_SECONDS
        while True:
            try:
                result: dict[str, Any] = self._once(request=keyed, action=action)
            except IdempotencyAlreadyInProgressError:
                # An identical request is running right now: its result is ours too. If it failed,
                # its record is gone and the next try runs the action here.
                if self._monotonic() >= deadline:
                    # Still running (or its process died holding the record): the domain's
                    # conditional write decides, and a loser's 409 carries the winner.
                    return action()
                self._sleep(interval)
                interval = min(interval * 1.5, MAX_IN_PROGRESS_POLL_SECONDS)
                continue
            return result


class NoIdempotency:
    """For in-memory wiring (unit tests): every call runs."""

    def register_lambda_context(self, context: Any) -> None:
        pass

    def run(self, operation: str, request: dict[str, Any], action: Action) -> dict[str, Any]:
        return action()
