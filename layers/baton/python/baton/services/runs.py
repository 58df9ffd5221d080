"""Hosted runs and the plain human pause: start, read, park, resume, time out."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from baton.domain.execution_events import ENDED_STATUSES, ExecutionEnd
from baton.domain.fields import MAX_TIMEOUT_SECONDS
from baton.domain.fields import check_run_id as check_run_id  # where the routes import it from
from baton.errors import ConflictError, GoneError, NotFoundError, PayloadTooLargeError, ValidationFailedError, winner
from baton.events import (
    HumanInputRequested,
    HumanInputTimedOut,
    InteractionAnswered,
    RunPaused,
    RunStarted,
)
from baton.ids import parse_iso
from baton.models import (
    TERMINAL_RUN_STATES,
    Event,
    Interaction,
    ParkedWait,
    PauseRequest,
    RunSummary,
    status_of,
)
from baton.services import lifecycle
from baton.services.approvals import Voter
from baton.services.deadlines import park_wait
from baton.services.pause_quorum import NO_GROUPS, Groups, PauseQuorum, deliver, pause_output
from baton.workflows.input_schema import check_input, review_config_of

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from datetime import datetime

    from baton.domain.approval import ApprovalPolicy
    from baton.domain.ladder import Ladder
    from baton.services.core import Core

MAX_INPUT_BYTES = 32 * 1024
RESUMABLE_KINDS = ("ask", "review")


def _check_timeouts(value: Any, path: str = "input") -> None:
    """Every `*timeout_seconds` in a run's input feeds a TimeoutSecondsPath: refuse what Step Functions
    would refuse at run time (0, negative, not an integer) or what would never end in practice."""
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}"
            if key.endswith("timeout_seconds") and (
                isinstance(item, bool) or not isinstance(item, int) or not 0 < item <= MAX_TIMEOUT_SECONDS
            ):
                raise ValidationFailedError(
                    f"{where} must be a whole number of seconds in 1..{MAX_TIMEOUT_SECONDS}, got {item!r}",
                    details={"path": where},
                )
            _check_timeouts(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_timeouts(item, f"{path}[{index}]")


class RunService:
    def __init__(
        self,
        core: Core,
        input_defaults: Mapping[str, Mapping[str, object]] | None = None,
        *,
        input_schemas: Mapping[str, Mapping[str, Any]] | None = None,
        check_review: Callable[[Any], object] | None = None,
    ) -> None:
        self.core = core
        # Per-workflow input merged under the caller's (the deployment declares them: wiring passes
        # baton.workflows.resources.WORKFLOW_DEFAULTS), so ASL paths such as TimeoutSecondsPath resolve.
        self.input_defaults: Mapping[str, Mapping[str, object]] = input_defaults or {}
        # Each workflow's input schema (statemachines/<stem>.input.schema.json; baton.workflows.input_schema)
        # and the review gate's own configuration check, both before the execution starts.
        self.input_schemas: Mapping[str, Mapping[str, Any]] = input_schemas or {}
        self.check_review = check_review

    # ---- hosted runs ---------------------------------------------------------------------------
    def start(self, workflow: str, payload: dict[str, Any], *, run_id: str | None, caller: str) -> RunSummary:
        arn = self.core.workflow_arns.get(workflow)
        if arn is None:
            raise NotFoundError(
                f"unknown workflow '{workflow}'",
                details={"workflow": workflow, "known": sorted(self.core.workflow_arns)},
            )
        run_id = run_id or self.core.ids.new_id()  # a given one was checked by the request model
        payload = {**self.input_defaults.get(workflow, {}), **payload}
        _check_timeouts(payload)
        size = len(json.dumps(payload))
        if size > MAX_INPUT_BYTES:
            raise PayloadTooLargeError(
                f"run input is {size} bytes; the limit is {MAX_INPUT_BYTES}",
                details={"size": size, "limit": MAX_INPUT_BYTES},
            )
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
        field, config = found
        try:
            self.check_review(config)
        except ValidationFailedError as err:
            inner = err.details.get("path")
            raise ValidationFailedError(
                f"{field}: {err.message}", details={**err.details, "path": f"{field}.{inner}" if inner else field}
            ) from None

    def get(self, run_id: str) -> dict[str, Any]:
        run = self.refresh(self.core.require_run(run_id))
        counts: dict[str, int] = {}
        for i in self.core.store.list_run_interactions(run_id):
            counts[i.state.outcome or i.state.status] = counts.get(i.state.outcome or i.state.status, 0) + 1
        return {**run.model_dump(exclude={"version"}), "interactions": counts}

    def refresh(self, run: RunSummary) -> RunSummary:
        """The fallback for a missing end event: a hosted run still open whose execution ended gets its
        end recorded here, the same way and with the same stop time as `functions/run_lifecycle` would
        (baton.services.lifecycle), never stamped with the reading time."""
        if not run.hosted or not run.execution_arn or run.status in TERMINAL_RUN_STATES:
            return run
        described = self.core.workflows.describe(run.execution_arn)
        if described["status"] not in ENDED_STATUSES:
            return run
        stopped = described.get("stopped_at")
        end = ExecutionEnd(
            execution_arn=run.execution_arn,
            name=run.run_id,
            status=described["status"],
            stopped_at=parse_iso(stopped) if isinstance(stopped, str) else self.core.clock.now(),
            input=described.get("input"),
            output=described.get("output"),
            error=described.get("error"),
            cause=described.get("cause"),
        )
        lifecycle.record_end(self.core, end)
        return self.core.require_run(run.run_id)

    def record_execution_end(self, end: ExecutionEnd) -> bool:
        """`functions/run_lifecycle`: an execution ended; record its run's end once (True if this did)."""
        return lifecycle.record_end(self.core, end)

    def events(self, run_id: str, *, after: str | None, limit: int) -> list[Event]:
        self.core.require_run(run_id)
        return self.core.store.list_events(run_id, after=after, limit=limit)

    # ---- the human pause -----------------------------------------------------------------------
    def park(  # noqa: PLR0913 - the ParkPayload, field by field (the quorum policy made it nine)
        self,
        *,
        run_id: str,
        node: str,
        token: str,
        prompt: str,
        timeout_seconds: int,
        notify: list[str] | None = None,
        entered_at: datetime | None = None,
        ladder: Ladder | None = None,
        approval: ApprovalPolicy | None = None,
    ) -> Interaction:
        """Called by the gate's Lambda (its payload validated) with the task token: record what is asked,
        park the token. Idempotent: a retried invoke (same token) returns the same interaction and wait,
        and records and notifies nothing again. With `approval` the pause needs a quorum and the run's
        starter may not vote (baton/services/pause_quorum.py)."""
        core = self.core
        core.ensure_run(run_id)
        again = core.parked_again(run_id, node, token)
        if again is not None and again.interaction_ids:
            found = core.store.get_interaction(run_id, again.interaction_ids[0])
            if found is not None:
                return found
        now = core.now()
        deadline = core.deadline_of(timeout_seconds, entered_at)
        interaction = Interaction(
            interaction_id=core.park_id(token, entered_at),
            run_id=run_id,
            created_at=now,
            expires_at=deadline,
            request=PauseRequest(
                node=node, prompt=prompt, timeout_seconds=timeout_seconds, notify=notify or ["console"], ladder=ladder
            ).with_quorum(approval, requested_by=core.require_run(run_id).started_by),
        )
        try:
            core.store.put_interaction(interaction)
        except ConflictError:
            # A concurrent or earlier attempt of this park stored it: park its wait (a no-op if parked).
            existing = core.store.get_interaction(run_id, interaction.interaction_id)
            if existing is None:
                raise
            self._park_wait(existing, token, deadline)
            return existing
        self._park_wait(interaction, token, deadline)
        core.set_run_status(run_id, "paused_waiting_human", allowed_from={"created", "running", "paused_waiting_human"})
        core.record(
            run_id,
            HumanInputRequested(
                interaction_id=interaction.interaction_id,
                node=node,
                kind=interaction.kind,
                prompt=prompt,
                timeout_seconds=timeout_seconds,
            ),
        )
        core.record(run_id, RunPaused(gate=node, kind=interaction.kind))
        core.notify(interaction, "human_input_requested")
        return interaction

    def _park_wait(self, interaction: Interaction, token: str, deadline: str) -> None:
        if self.core.parked_again(interaction.run_id, interaction.request.node, token) is not None:
            return  # never re-park a token an earlier attempt parked (it may be released by now)
        park_wait(
            self.core,
            ParkedWait(
                run_id=interaction.run_id,
                gate=interaction.request.node,
                task_token=token,
                kind=interaction.request.kind,
                interaction_ids=[interaction.interaction_id],
                parked_at=interaction.created_at,
                deadline=deadline,
            ),
            pause=interaction.request,
        )

    def resume(
        self, run_id: str, answers: dict[str, Any], *, caller: str, node: str | None = None, groups: Groups = NO_GROUPS
    ) -> dict[str, Any]:
        """Store the answers on the run's pending human interaction, then send its parked token."""
        core = self.core
        hosted = core.require_run(run_id).hosted
        mine = [
            i
            for i in core.store.list_run_interactions(run_id)
            if i.request.kind in RESUMABLE_KINDS and (node is None or i.request.node == node)
        ]
        pending = [i for i in mine if i.state.status == "pending"]
        if not pending:
            latest = mine[-1] if mine else None
            if latest is None:
                raise ConflictError(
                    f"run {run_id} is not waiting for input" + (f" at node '{node}'" if node else ""),
                    details={"run_id": run_id},
                )
            if latest.state.status == "answered" and latest.state.answer == answers:
                # A retry of a resume whose token send failed: the stored answer is resent.
                resumed = core.release_gate(run_id, latest.request.node, self._output(latest))
                if resumed:
                    return self._result(latest, resumed)
            if latest.state.status == "timed_out" or latest.state.outcome:  # a default taken: also late
                core.refuse_if_late(latest, answers, caller=caller, deadline=latest.expires_at or core.now())
                raise GoneError(
                    f"the pause at node '{latest.request.node}' timed out",
                    details={"interaction": latest.public()},
                )
            st = latest.state
            raise ConflictError(
                f"run {run_id} was already resumed at node '{latest.request.node}'",
                details={
                    "interaction": latest.public(),
                    "winner": winner(status=st.status, value=st.answer, by=st.answered_by, at=st.answered_at),
                },
            )
        target = pending[-1]
        core.refuse_if_late(target, answers, caller=caller, deadline=target.expires_at)
        policy = target.request_as(PauseRequest).approval if target.request.kind == "ask" else None
        if policy is not None:  # a quorum pause: this resume is one vote
            return PauseQuorum(core).vote(target, policy, answers, Voter(caller, groups))
        answered_event = core.new_event(
            run_id,
            InteractionAnswered(
                interaction_id=target.interaction_id, node=target.request.node, answer=answers, by=caller
            ),
        )
        try:  # the answer and its event (a decision: it extends the run's chain) in one write
            answered = core.store.transition_interaction(
                target,
                status_of(target.state, "answered", answer=answers, by=caller, at=core.now()),
                with_records=[answered_event],
            )
        except ConflictError:  # lost the race: the 409 names the winner, from a consistent read
            current = core.store.get_interaction(run_id, target.interaction_id) or target
            st = current.state
            raise ConflictError(
                f"run {run_id} was already resumed at node '{current.request.node}' by {st.answered_by}",
                details={
                    "interaction": current.public(),
                    "winner": winner(status=st.status, value=st.answer, by=st.answered_by, at=st.answered_at),
                },
            ) from None
        return self._result(answered, deliver(core, answered, hosted=hosted))

    def reconcile_wait(self, wait: ParkedWait) -> bool:
        """The reconciler: a parked pause whose interaction is answered gets the resume a failed send
        lost (the same output `resume` sends). True if this call resumed it."""
        for iid in wait.interaction_ids:
            i = self.core.store.get_interaction(wait.run_id, iid)
            if i is not None and i.state.status == "answered":
                return self.core.release_gate(wait.run_id, wait.gate, self._output(i), token=wait.task_token)
        return False

    def end_at_deadline(self, wait: ParkedWait) -> bool:
        """The reconciler, at a parked pause's deadline: time out what is still pending (a conditional
        write: an answer accepted first wins and is released instead) and fail the task with
        DEADLINE_ERROR, so the gate's Catch records the timeout. True if this call ended it."""
        pending = []
        for iid in wait.interaction_ids:
            i = self.core.store.get_interaction(wait.run_id, iid)
            if i is None or i.state.status != "pending":
                continue
            try:
                self.core.store.transition_interaction(i, status_of(i.state, "timed_out", reason="timeout"))
            except ConflictError:
                return False  # answered just in time: the answer's release delivers it
            pending.append(i.interaction_id)
        cause = f"the pause at node '{wait.gate}' passed its deadline {wait.deadline}; unanswered: " + (
            ", ".join(pending) or "none"
        )
        return self.core.fail_at_deadline(wait, cause)

    _output = staticmethod(pause_output)

    @staticmethod
    def _result(i: Interaction, resumed: bool) -> dict[str, Any]:
        return {
            "interaction_id": i.interaction_id,
            "node": i.request.node,
            "queued": True,
            "resumed": resumed,
        }

    def record_timeout(self, run_id: str, node: str) -> dict[str, Any]:
        """The gate's Catch on States.Timeout lands here: mark what timed out and say so."""
        core = self.core
        unanswered = []
        wait = core.store.get_wait(run_id, node)
        ended_by_baton = set(wait.interaction_ids) if wait is not None else set()
        for i in core.store.list_run_interactions(run_id):
            if i.request.node != node:
                continue
            if i.state.status == "timed_out" and i.interaction_id in ended_by_baton:
                unanswered.append(i)  # Baton ended it at its deadline (`end_at_deadline`)
                continue
            if i.state.status != "pending":
                continue
            try:
                core.store.transition_interaction(i, status_of(i.state, "timed_out", reason="timeout"))
            except ConflictError:
                continue  # answered at the last moment: not part of what timed out
            unanswered.append(i)
        if wait is not None and wait.status == "parked":
            core.store.release_wait(wait, "timed_out")
        listed = "; ".join(f"{i.interaction_id} ({i.request.prompt!r})" for i in unanswered) or "none"
        seconds = unanswered[0].request.timeout_seconds if unanswered else None
        cause = (
            f"timed out after {seconds}s waiting for human input at node '{node}'; unanswered: {listed}"
            if seconds
            else f"timed out waiting for human input at node '{node}'; unanswered: {listed}"
        )
        core.record(
            run_id, HumanInputTimedOut(node=node, unanswered=[i.interaction_id for i in unanswered], cause=cause)
        )
        core.set_run_status(run_id, "failed", allowed_from={"created", "running", "paused_waiting_human"}, reason=cause)
        return {"cause": cause, "unanswered": [i.interaction_id for i in unanswered]}
