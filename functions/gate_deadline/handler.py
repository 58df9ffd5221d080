"""A gate's timer fired (statemachines/gate_deadline.asl.json): a step of the pause's ladder, or its
deadline, where the pause ends as the reconciler would end it (see baton.services.deadlines).
Idempotent: a wait already released or ended is left."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.gate_payloads import GateDeadlinePayload
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    from baton.services.deadline_timers import (
        Deadlines,  # with the records and events: the first call's, not the import's
    )

    timer = parse(event=event, model=GateDeadlinePayload)
    reconciler = services().reconciler
    deadlines = Deadlines(reconciler)
    result = deadlines.fire(timer).model_dump(mode="json", exclude_unset=True)
    logger.info("gate deadline", extra={"run_id": timer.run_id, "gate": timer.gate, "step": timer.step, **result})
    # The timer's Choice reads `next` (always present: null ends the timer; a ladder step sets it).
    return {"next": None, **result}
