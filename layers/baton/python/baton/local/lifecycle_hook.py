"""The local stand-in for the deployment's EventBridge rule on Step Functions execution status changes
(infra/capabilities/lifecycle.py): when a moto execution ends, the same event goes to the same handler.
The hook is moto's `BaseExecutionWorkerCommunication.terminated`, the one call every execution makes
when it ends (status, stop date, output, error and cause set), in the execution's worker thread."""

from __future__ import annotations

import json
import logging
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

from baton.domain.execution_events import DETAIL_TYPE, SOURCE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

log = logging.getLogger("baton")


def _millis(value: Any) -> int | None:
    return int(value.timestamp() * 1000) if value is not None else None


def status_change_event(execution: Any) -> dict[str, Any]:
    """The EventBridge event Step Functions sends for this (moto) execution's status."""
    status = execution.exec_status.value if execution.exec_status is not None else "RUNNING"
    return {
        "version": "0",
        "source": SOURCE,
        "detail-type": DETAIL_TYPE,
        "account": execution.account_id,
        "region": execution.region_name,
        "resources": [execution.exec_arn],
        "detail": {
            "executionArn": execution.exec_arn,
            "stateMachineArn": execution.state_machine_arn,
            "name": execution.name,
            "status": status,
            "startDate": _millis(execution.start_date),
            "stopDate": _millis(execution.stop_date),
            "input": json.dumps(execution.input_data),
            "output": json.dumps(execution.output) if execution.output is not None else None,
            "error": execution.error,
            "cause": execution.cause,
        },
    }


@contextmanager
def execution_end_events(deliver: Callable[[dict[str, Any]], object]) -> Iterator[None]:
    """While open, every ended moto execution's status-change event goes to `deliver`."""
    from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication

    original = BaseExecutionWorkerCommunication.terminated

    def terminated(self: Any) -> None:
        original(self)
        try:
            deliver(status_change_event(self.execution))
        except Exception:  # like a failed rule target: logged, and the read path still records the end
            log.exception("run lifecycle delivery failed")

    with patch.object(BaseExecutionWorkerCommunication, "terminated", terminated):
        yield
