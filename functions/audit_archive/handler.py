"""The decision log's archive (deployed only with the `audit_bucket` option, infra/capabilities/audit.py):
the table's DynamoDB stream delivers each new decision record; it is copied to the Object Lock bucket
(baton.services.audit.archive). A failed put fails the batch, which the stream delivers again."""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import audit_archive


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    from baton.adapters.audit_archive import decision_records  # boto3 on the first call, not at import
    from baton.services.audit import archive  # and the decision records and events with it

    return {"archived": archive(decision_records(event), audit_archive(os.environ["BATON_AUDIT_BUCKET"]))}
