"""Step Functions adapters: task-token callbacks and hosted-run executions."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from baton.errors import ConflictError, GoneError, TaskTokenError

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions import SFNClient

# Step Functions' refusals of a token, and what each means for the caller.
_TOKEN_ERRORS = {
    "TaskTimedOut": "the gate already timed out",
    "InvalidToken": "the gate is no longer waiting for this token (already resumed or never parked)",
    "TaskDoesNotExist": "the gate's task no longer exists (the execution ended)",
}


def _token_error(err: ClientError) -> TaskTokenError | None:
    code = err.response.get("Error", {}).get("Code", "")
    if code in _TOKEN_ERRORS:
        return TaskTokenError(f"Step Functions refused the resume: {_TOKEN_ERRORS[code]}", reason=code)
    return None


class SfnTaskTokens:
    def __init__(self, client: SFNClient) -> None:
        self._sfn = client

    def _call(self, fn: Any, **kwargs: Any) -> None:
        try:
            fn(**kwargs)
        except ClientError as err:
            mapped = _token_error(err)
            if mapped:
                raise mapped from err
            raise

    def send_success(self, token: str, output: dict[str, Any]) -> None:
        self._call(self._sfn.send_task_success, taskToken=token, output=json.dumps(output))

    def send_failure(self, token: str, error: str, cause: str) -> None:
        self._call(self._sfn.send_task_failure, taskToken=token, error=error, cause=cause[:32768])


class SfnWorkflows:
    def __init__(self, client: SFNClient) -> None:
        self._sfn = client

    def start(self, state_machine_arn: str, run_id: str, payload: dict[str, Any]) -> str:
        try:
            resp = self._sfn.start_execution(stateMachineArn=state_machine_arn, name=run_id, input=json.dumps(payload))
        except ClientError as err:
            code = err.response.get("Error", {}).get("Code", "")
            if code == "ExecutionAlreadyExists":
                raise ConflictError(f"an execution named {run_id} already exists") from err
            if code in ("StateMachineDoesNotExist", "StateMachineDeleting"):
                raise GoneError(f"the workflow's state machine is not available: {code}") from err
            raise
        return resp["executionArn"]

    def stop(self, execution_arn: str, *, error: str, cause: str) -> None:
        self._sfn.stop_execution(executionArn=execution_arn, error=error[:256], cause=cause[:32768])

    def describe(self, execution_arn: str) -> dict[str, Any]:
        resp = self._sfn.describe_execution(executionArn=execution_arn)
        out: dict[str, Any] = {"status": resp["status"]}
        if resp.get("output"):
            out["output"] = json.loads(resp["output"])
        if resp.get("stopDate"):
            out["stopped_at"] = resp["stopDate"].isoformat()
        if resp.get("input"):
            out["input"] = json.loads(resp["input"])
        for key in ("error", "cause"):
            if resp.get(key):
                out[key] = resp[key]  # type: ignore[literal-required,unused-ignore]
        return out
