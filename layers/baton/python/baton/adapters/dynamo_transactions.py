"""One TransactWriteItems, sent again when DynamoDB cancelled it for contention alone.

DynamoDB cancels a transaction (TransactionCanceledException) when another transaction or write is
under way on one of its items (reason `TransactionConflict`) or an item's partition is throttled
(`ThrottlingError`); botocore retries neither, since the error is the cancellation, not throttling.
A cancelled transaction wrote nothing, so the same request again can neither double a write nor lose
one: it commits, is cancelled again, or fails a condition that the caller reads as it always has (a
decision already taken, a chain head another decision advanced). Any other cancellation reason
(ConditionalCheckFailed, ValidationError, ...) goes to the caller at once."""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mypy_boto3_dynamodb import DynamoDBClient

CONTENTION_REASONS = frozenset({"TransactionConflict", "ThrottlingError"})
# Attempts at one transaction cancelled for contention only (the first included), as botocore's
# standard mode bounds a throttled call.
CONTENTION_ATTEMPTS = 3
_BACKOFF_SECONDS = 0.025  # botocore's base for DynamoDB's non-throttling retries


def cancellation_codes(err: ClientError) -> list[str] | None:
    """The per-item codes of a cancelled transaction ("None", "ConditionalCheckFailed",
    "TransactionConflict", ...), or None when `err` is not a cancelled transaction."""
    if err.response.get("Error", {}).get("Code") != "TransactionCanceledException":
        return None
    reasons = err.response.get("CancellationReasons") or []  # type: ignore[typeddict-item,unused-ignore]
    return [str(r.get("Code") or "None") for r in reasons]


def cancelled_for_contention(codes: Sequence[str]) -> bool:
    """Cancelled for contention on some item and nothing else (every other item's code is "None")."""
    return any(c in CONTENTION_REASONS for c in codes) and all(c == "None" or c in CONTENTION_REASONS for c in codes)


def transact_write(db: DynamoDBClient, items: Sequence[Any]) -> None:
    """`TransactWriteItems` of `items`, retried (bounded, with jittered backoff) while cancelled for
    contention only; the last cancellation, or any other error, is raised."""
    for attempt in range(1, CONTENTION_ATTEMPTS + 1):
        try:
            db.transact_write_items(TransactItems=items)
        except ClientError as err:
            codes = cancellation_codes(err)
            if attempt == CONTENTION_ATTEMPTS or not codes or not cancelled_for_contention(codes):
                raise
            time.sleep(random.uniform(0, _BACKOFF_SECONDS * 2 ** (attempt - 1)))
            continue
        return
