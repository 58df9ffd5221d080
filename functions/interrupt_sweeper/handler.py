"""Scheduled sweep: time out SDK interrupts past their deadline that nobody is reading.

Reads are already store-backed (any read after the deadline times an interrupt out); this makes the
`interrupt_timed_out` event and the cancelled status appear on time even with no waiter left.
Queries the sparse `pending` index (PENDING#interrupt), never a Scan.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    expired = services().interrupts.sweep()
    if expired:
        logger.info("interrupts timed out by the sweeper", extra={"interrupt_ids": expired})
    return {"timed_out": expired}
