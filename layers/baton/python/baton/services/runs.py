"""Hosted runs: start, read, record their end; the plain human pause is `PauseService` (pauses.py)."""

from __future__ import annotations

from collections import Counter
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

from baton.contracts.runs import RunView
from baton.domain.execution_events import ExecutionEnd
from baton.domain.fields import check_run_input
from baton.errors import NotFoundError, ValidationFailedError
from baton.events import RunStarted
from baton.models import TERMINAL_RUN_STATES, Event, RunSummary
from baton.services import lifecycle
from baton.services.pauses import PauseService
from baton.workflows.input_schema import check_input, review_config_of

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from baton.services.core import Core


@dataclass(eq=False)
class RunService(PauseService):
    core: Core
    # Merged under the caller's input so ASL paths such as TimeoutSecondsPath resolve (WORKFLOW_DEFAULTS).
    input_defaults: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    _: KW_ONLY
    # Checked before the execution starts (statemachines/<stem>.input.schema.json), as is the review config.
    input_schemas: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    check_review: Callable[[Any], object] | None = None

    def start(self, workflow: str, payload: dict[str, Any], *, run_id: str | None, caller: str) -> RunSummary:
        arn = self.core.workflow_arns.get(workflow)
        if arn is None:
            raise NotFoundError(
                f"unknown workflow '{workflow}'",
                details={"workflow": workflow, "known": sorted(self.core.workflow_arns)},
            )
        run_id = run_id or self.core.ids.new_id()  # a given one was checked by the request model
        payload = {**self.input_defaults.get(workflow, {}), **payload}
        check_run_input(payload)
        self._check_declared_input(workflow, payload)
        notify = payload.get("notify")
        self.core.check_notify(notify if isinstance(notify, list) else None, field="input.notify")
        now = self.core.now()
        started = {"workflow": workflow, "hosted": True, "started_by": caller}  # the starter cannot approve
        run = RunSummary(run_id=run_id, status="running", created_at=now, updated_at=now, **started)
        self.core.store.create_run(run)  # ConflictError if the run id is taken
        try:
            arn_exec = self.core.workflows.start(arn, run_id, {"run_id": run_id, "input": payload})
        except Exception as err:
            self.core.store.update_run(
                run_id,
                {"status": "failed", "reason": f"could not start: {err}", "updated_at": self.core.now()},
            )
            raise
        run = self.core.store.update_run(run_id, {"execution_arn": arn_exec})
        self.core.record(run_id, RunStarted(hosted=True, workflow=workflow, by=caller))
        return run

    def _check_declared_input(self, workflow: str, payload: dict[str, Any]) -> None:
        """422 naming the field when the input breaks the workflow's schema or its review gate's
        configuration would make the gate refuse to start (after questions were already posted)."""
        schema = self.input_schemas.get(workflow)
        check_input(workflow, payload, schema)
        found = review_config_of(payload, schema)
        if found is None or self.check_review is None:
            return
        where, config = found
        try:
            self.check_review(config)
        except ValidationFailedError as err:
            inner = err.details.get("path")
            raise ValidationFailedError(
                f"{where}: {err.message}", details={**err.details, "path": f"{where}.{inner}" if inner else where}
            ) from None

    def get(self, run_id: str) -> RunView:
        run = self.refresh(self.core.require_run(run_id))
        counts = Counter(i.state.outcome or i.state.status for i in self.core.store.list_run_interactions(run_id))
        return RunView.model_validate({**run.model_dump(exclude={"version"}), "interactions": dict(counts)})

    def refresh(self, run: RunSummary) -> RunSummary:
        """The fallback for a missing end event: an open hosted run whose execution ended gets its end
        recorded as `functions/run_lifecycle` would (lifecycle.record_end), with the execution's stop time."""
        if not run.hosted or not run.execution_arn or run.status in TERMINAL_RUN_STATES:
            return run
        described = self.core.workflows.describe(run.execution_arn)
        end = ExecutionEnd.from_described(run.execution_arn, run.run_id, described, self.core.clock.now())
        if end is None:
            return run
        lifecycle.record_end(self.core, end, run)
        return self.core.require_run(run.run_id)

    def events(self, run_id: str, *, after: str | None, limit: int) -> list[Event]:
        self.core.require_run(run_id)
        return self.core.store.list_events(run_id, after=after, limit=limit)
