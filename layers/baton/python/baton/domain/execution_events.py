"""The end of a Step Functions execution, as Baton reads it.

Deployed, an EventBridge rule on "Step Functions Execution Status Change" (infra/capabilities/lifecycle.py)
delivers `ExecutionStatusChange`; locally the stack builds the same event when moto's execution ends
(baton/local/moto_fixes.py). Both feed `functions/run_lifecycle/handler.py`. The read path
(`RunService.refresh`, a fallback when the event is missing) builds the same `ExecutionEnd` from
DescribeExecution, so one service records the end either way, stamped with the execution's stop time.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from baton.domain.deadline import TIMER_STATE_MACHINE
from baton.ids import parse_iso

ExecutionStatus = Literal["RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE"]
EndedStatus = Literal["SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"]
ENDED_STATUSES: Final[tuple[str, ...]] = ("SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED")
RUN_STATUS_OF: Final[dict[str, str]] = {
    "SUCCEEDED": "succeeded",
    "FAILED": "failed",
    "TIMED_OUT": "timed_out",
    "ABORTED": "aborted",
}
SOURCE: Final = "aws.states"
DETAIL_TYPE: Final = "Step Functions Execution Status Change"


class ExecutionDetail(BaseModel):
    """The `detail` of a Step Functions status-change event (dates are epoch milliseconds)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    execution_arn: str = Field(alias="executionArn", min_length=1)
    state_machine_arn: str = Field(alias="stateMachineArn", min_length=1)
    name: str = Field(min_length=1)
    status: ExecutionStatus
    start_date: int | None = Field(default=None, alias="startDate")
    stop_date: int | None = Field(default=None, alias="stopDate")
    input: str | None = None  # JSON text; null when over EventBridge's size limit
    output: str | None = None
    error: str | None = None
    cause: str | None = None


class ExecutionStatusChange(BaseModel):
    """The EventBridge event (only the parts Baton reads)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    source: Literal["aws.states"]
    detail_type: Literal["Step Functions Execution Status Change"] = Field(alias="detail-type")
    detail: ExecutionDetail


def _json_or_none(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


class ExecutionEnd(BaseModel):
    """An execution that ended: what the lifecycle service records on its run."""

    model_config = ConfigDict(frozen=True)

    execution_arn: str
    name: str
    status: EndedStatus
    stopped_at: datetime
    input: Any = None
    output: Any = None
    error: str | None = None
    cause: str | None = None

    @property
    def run_status(self) -> str:
        return RUN_STATUS_OF[self.status]

    @property
    def run_id_hint(self) -> str | None:
        """The run id the execution's input names (`{"run_id": ..., "input": ...}`), if any."""
        if isinstance(self.input, dict) and isinstance(self.input.get("run_id"), str):
            return str(self.input["run_id"])
        return None

    @property
    def notify_channels(self) -> list[str]:
        """The channels the run asked for (`input.notify`), where its input says."""
        inner = self.input.get("input") if isinstance(self.input, dict) else None
        channels = inner.get("notify") if isinstance(inner, dict) else None
        if isinstance(channels, list) and channels and all(isinstance(c, str) for c in channels):
            return [str(c) for c in channels]
        return ["console"]

    @classmethod
    def from_event(cls, change: ExecutionStatusChange) -> ExecutionEnd | None:
        """None for a status that is not an end (RUNNING, PENDING_REDRIVE), and for a gate's timer
        (statemachines/gate_deadline.asl.json): its input names the run it times, yet it is no run."""
        d = change.detail
        if d.status not in ENDED_STATUSES or d.state_machine_arn.rsplit(":", 1)[-1].endswith(TIMER_STATE_MACHINE):
            return None
        stopped = (
            datetime.fromtimestamp(d.stop_date / 1000, tz=UTC) if d.stop_date is not None else datetime.now(tz=UTC)
        )
        return cls(
            execution_arn=d.execution_arn,
            name=d.name,
            status=d.status,  # narrowed by ENDED_STATUSES above
            stopped_at=stopped,
            input=_json_or_none(d.input),
            output=_json_or_none(d.output),
            error=d.error,
            cause=d.cause,
        )

    @classmethod
    def from_described(
        cls, execution_arn: str, name: str, described: dict[str, Any], now: datetime
    ) -> ExecutionEnd | None:
        """The end DescribeExecution reports (its stop time; `now` if it gave none); None while it runs."""
        if described["status"] not in ENDED_STATUSES:
            return None
        stopped = described.get("stopped_at")
        return cls(
            execution_arn=execution_arn,
            name=name,
            status=described["status"],
            stopped_at=parse_iso(stopped) if isinstance(stopped, str) else now,
            input=described.get("input"),
            output=described.get("output"),
            error=described.get("error"),
            cause=described.get("cause"),
        )
