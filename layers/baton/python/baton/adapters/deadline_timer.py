"""The gates' timers on Step Functions: one execution of the `gate_deadline` state machine
(`statemachines/gate_deadline.asl.json`: a Wait of `wait_seconds`, then the `gate_deadline` Lambda)
per parked wait, named after the wait so a retried park starts nothing new, and stopped when its wait is
released before the deadline (a Wait costs nothing, but the firing it would end in costs transitions and
a Lambda invocation that find nothing to do)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions import SFNClient

    from baton.domain.gate_payloads import GateDeadlinePayload


class SfnDeadlineTimers:
    def __init__(self, client: SFNClient, state_machine_arn: str) -> None:
        self._sfn = client
        self._arn = state_machine_arn

    def start(self, name: str, payload: GateDeadlinePayload, wait_seconds: int) -> None:
        timer = {**payload.model_dump(mode="json"), "wait_seconds": wait_seconds}
        try:
            self._sfn.start_execution(stateMachineArn=self._arn, name=name, input=json.dumps(timer))
        except ClientError as err:
            # The same name again: this wait's timer is already running (or has fired).
            if err.response.get("Error", {}).get("Code") != "ExecutionAlreadyExists":
                raise

    def stop(self, name: str) -> None:
        execution = self._arn.replace(":stateMachine:", ":execution:", 1) + f":{name}"
        try:
            self._sfn.stop_execution(executionArn=execution, cause="its wait was released")
        except ClientError as err:
            # Never started (the park's start failed: the reconciler owns that wait), or already ended.
            if err.response.get("Error", {}).get("Code") != "ExecutionDoesNotExist":
                raise
