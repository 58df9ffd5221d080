"""An AWS error that says "busy, try later" once botocore's retries (and Baton's own, for cancelled
transactions: `dynamo_transactions.py`) are spent: throttling, or DynamoDB contention on an item."""

from __future__ import annotations

from baton.adapters.dynamo_transactions import cancellation_codes, cancelled_for_contention
from baton.errors import ServiceBusyError

# What DynamoDB, Step Functions and Lambda answer when throttling a call (botocore's standard mode
# retries these), and DynamoDB's refusal of a single write to an item a transaction holds.
BUSY_CODES = frozenset(
    {
        "ThrottlingException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "TransactionConflictException",
    }
)


def busy_error(err: BaseException) -> ServiceBusyError | None:
    """The 503 for an AWS call still refused as busy after its retries, else None."""
    from botocore.exceptions import ClientError

    if not isinstance(err, ClientError):
        return None
    code = err.response.get("Error", {}).get("Code", "")
    codes = cancellation_codes(err)
    if code not in BUSY_CODES and not (codes and cancelled_for_contention(codes)):
        return None
    return ServiceBusyError(
        f"AWS is busy ({code} on {err.operation_name}); send the request again shortly",
        details={"reason": code, "operation": err.operation_name},
    )
