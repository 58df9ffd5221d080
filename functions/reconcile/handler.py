"""The reconciler (scheduled; also callable locally): re-send every parked wait's lost resume or cancel
(ask, interrupt, review and await gates; see baton.services.reconciler), and time out tool-form awaits
past their expiry. Idempotent.

After each pass it publishes how many gates are still parked and the age of the oldest one
(`baton.runtime.parked_age`: `ParkedGates`, `OldestParkedGateAgeSeconds`), which the "oldest parked gate"
alarm watches; then, per kind of pause, the count pending and the age of the oldest pending item
(`PendingItems`, `OldestPendingAgeSeconds`, dimension kind), which the per-kind pending-age alarms watch."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.runtime.observability import logger, tracer
from baton.runtime.parked_age import parked_age, pending_ages, publish, publish_pending
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    svc = services()
    result = svc.reconciler.reconcile().model_dump()
    if result["released"] or result["timed_out"] or result["quorums"]:
        logger.info("reconciled", extra=result)
    age = parked_age(svc.core.store, svc.core.clock.now())
    publish(age)
    if age.count:
        logger.info(
            "parked gates",
            extra={"parked": age.count, "oldest_age_seconds": age.oldest_age_seconds, "run_id": age.oldest_run_id},
        )
    pending = pending_ages(svc.core.store, svc.core.clock.now())
    publish_pending(pending)
    oldest_pending = {p.kind: p.oldest_age_seconds for p in pending if p.count}
    return {
        **result,
        "parked": age.count,
        "oldest_parked_age_seconds": age.oldest_age_seconds,
        "oldest_pending_age_seconds": oldest_pending,
    }
