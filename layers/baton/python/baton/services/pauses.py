"""The plain human pause of a hosted run: park its token, resume it with the operator's answers, time
it out. `RunService` (baton/services/runs.py) carries these moves."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.domain.ladder import AnswerCheck
from baton.errors import ConflictError, NotFoundError, winner
from baton.events import HumanInputRequested, HumanInputTimedOut, InteractionAnswered, RunPaused
from baton.models import Interaction, ParkedWait, PauseRequest, status_of
from baton.ports import GuardFailedError, WaitStillOpen
from baton.services.answer_outcomes import SendFailedError, closed_error, delivery_of
from baton.services.approvals import Voter
from baton.services.at_deadline import InteractionPauseDeadline, end_at_deadline
from baton.services.deadlines import park_wait
from baton.services.pause_quorum import NO_GROUPS, Groups, PauseQuorum, deliver, pause_output

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from baton.domain.approval import ApprovalPolicy
    from baton.domain.ladder import Ladder
    from baton.ports import Guard, RunSnapshot
    from baton.services.core import Core

RESUMABLE_KINDS = ("ask", "review")


def _check_answers(pause: Interaction, answers: dict[str, Any]) -> None:
    """A blocking ask with options takes only its options (a 422 naming the key and the options), by
    the rule its declared default is checked with; a pause without options takes any answers."""
    req = pause.request
    if req.kind == "ask":
        AnswerCheck(kind="answers", options=req.options, allow_free_text=req.allow_free_text).check_answers(
            answers, path="answers"
        )


def _is_repeat(current: Interaction, answers: dict[str, Any], caller: str) -> bool:
    """The stored answer is this very request's: the same caller sent the same answers."""
    st = current.state
    return st.status == "answered" and st.answer == answers and st.answered_by == caller


class PauseService:
    core: Core

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

    @staticmethod
    def parked_pause(snapshot: RunSnapshot, node: str | None = None) -> ParkedWait | None:
        """The plain pause a resume is for, known from what is parked (`snapshot`, one read of the run's
        open part): the one parked wait of a resumable kind at `node` (or anywhere), when it is a pause.
        None: a review gate, several pauses, or none parked (a blocking ask, a retry): `resume` reads
        the run's interactions instead."""
        found = [
            w
            for w in snapshot.waits
            if w.status == "parked" and w.kind in RESUMABLE_KINDS and (node is None or w.gate == node)
        ]
        if len(found) == 1 and found[0].kind == "ask" and found[0].interaction_ids:
            return found[0]
        return None

    @staticmethod
    def _pending_pause(snapshot: RunSnapshot, wait: ParkedWait) -> Interaction | None:
        """The parked pause's interaction as the snapshot read it (its pending marker: the whole item,
        version and request included, so the resume makes no read of its own). None: not pending, or
        stored before pauses had markers (`_resume_read` finds it)."""
        iid = wait.interaction_ids[0]
        found = next((i for i in snapshot.pending if i.interaction_id == iid and i.request.kind == "ask"), None)
        # The park wrote its gate on the item (`blocks`, after the marker was copied): kept as stored.
        return found.model_copy(update={"blocks": wait.gate}) if found is not None else None

    def resume(
        self,
        run_id: str,
        answers: dict[str, Any],
        *,
        caller: str,
        node: str | None = None,
        snapshot: RunSnapshot | None = None,
        groups: Groups = NO_GROUPS,
    ) -> dict[str, Any]:
        """Store the answers on the run's pending human interaction, then send its parked token.

        The critical path (tests/integration/test_call_budgets.py): the run's snapshot (`snapshot`, when
        the route already read it) names the parked pause and holds its interaction (its marker); one
        transaction that decides the answer (the answer and its chained event, guarded by the wait still parked
        before its deadline); the send; the release recorded in one write. A repeat of an accepted
        resume (the same caller, the same answers: a client's retry, a twin request) is answered as the
        first was, from the stored answer (re-sending it when the first one's send failed)."""
        core = self.core
        snapshot = snapshot if snapshot is not None else core.store.snapshot_run(run_id)
        if snapshot.run is None:
            raise NotFoundError(f"run {run_id} not found", details={"run_id": run_id})
        wait = self.parked_pause(snapshot, node)
        target = self._pending_pause(snapshot, wait) if wait is not None else None
        if wait is None or target is None:
            return self._resume_read(
                run_id, answers, caller=caller, node=node, hosted=snapshot.run.hosted, groups=groups
            )
        _check_answers(target, answers)
        core.refuse_if_late(target, answers, caller=caller, deadline=target.expires_at)
        if (voted := self._vote(target, answers, caller, groups)) is not None:
            return voted
        try:
            answered, repeat = self._decide(
                target, answers, caller, guards=[WaitStillOpen(wait, core.now())], snapshot=snapshot
            )
        except GuardFailedError:  # the wait closed under us (its deadline): decided on a fresh read
            return self._resume_read(
                run_id, answers, caller=caller, node=node, hosted=snapshot.run.hosted, groups=groups
            )
        try:
            resumed = core.release_gate(run_id, wait.gate, self._output(answered), wait=wait, siblings=snapshot.waits)
        except SendFailedError:  # stored: the reconciler sends it
            return self._result(answered, False, pending=True)
        return self._result(answered, resumed or (repeat and self._delivered(answered)))

    def _resume_read(
        self, run_id: str, answers: dict[str, Any], *, caller: str, node: str | None, hosted: bool, groups: Groups
    ) -> dict[str, Any]:
        """`resume` from the run's interactions: a blocking ask, a review, several pauses, a repeat."""
        core = self.core
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
            _check_answers(latest, answers)
            return self._settled(latest, answers, caller, groups)
        target = pending[-1]
        _check_answers(target, answers)
        core.refuse_if_late(target, answers, caller=caller, deadline=target.expires_at)
        if (voted := self._vote(target, answers, caller, groups)) is not None:
            return voted
        answered, repeat = self._decide(target, answers, caller)
        try:
            if repeat:  # the first request decided it: resend if its send failed, else say what it did
                resumed = core.release_gate(run_id, target.request.node, self._output(answered))
                return self._result(answered, resumed or self._delivered(answered))
            return self._result(answered, deliver(core, answered, hosted=hosted))
        except SendFailedError:  # stored: the reconciler sends it
            return self._result(answered, False, pending=True)

    def _vote(self, target: Interaction, answers: dict[str, Any], caller: str, groups: Groups) -> dict[str, Any] | None:
        """A quorum pause: this resume is one vote (baton/services/pause_quorum.py). None: no quorum."""
        policy = _approval_policy(target)
        if policy is None:
            return None
        return PauseQuorum(self.core).vote(target, policy, answers, Voter(caller, groups))

    def _decide(
        self,
        target: Interaction,
        answers: dict[str, Any],
        caller: str,
        *,
        guards: Sequence[Guard] = (),
        snapshot: RunSnapshot | None = None,
    ) -> tuple[Interaction, bool]:
        """The deciding write: the answer and its event (a decision: it extends the run's chain, from the
        head `snapshot` read) in one transaction. Lost to a twin of this request: its stored answer is
        ours (returned with True); lost to another answer: the 409 names the winner, from a consistent read."""
        core = self.core
        answered_event = core.new_event(
            target.run_id,
            InteractionAnswered(
                interaction_id=target.interaction_id, node=target.request.node, answer=answers, by=caller
            ),
        )
        try:
            answered = core.store.transition_interaction(
                target,
                status_of(target.state, "answered", answer=answers, by=caller, at=core.now()),
                with_records=[answered_event],
                guards=guards,
                audit_head=snapshot.audit_head if snapshot is not None else None,
            )
        except ConflictError:
            current = core.store.get_interaction(target.run_id, target.interaction_id) or target
            if _is_repeat(current, answers, caller):
                return current, True
            st = current.state
            raise ConflictError(
                f"run {target.run_id} was already resumed at node '{current.request.node}' by {st.answered_by}",
                details={
                    "interaction": current.public(),
                    "winner": winner(status=st.status, value=st.answer, by=st.answered_by, at=st.answered_at),
                },
            ) from None
        return answered, False

    def _settled(self, latest: Interaction, answers: dict[str, Any], caller: str, groups: Groups) -> dict[str, Any]:
        """A resume that finds the pause no longer pending: a repeat of the accepted one, late, a counted
        voter's repeat on a quorum pause (200: counted once), or a 409."""
        core = self.core
        st = latest.state
        if st.status == "cancelled":  # its run was stopped
            raise closed_error(latest)
        quorum = _approval_policy(latest) is not None
        if st.status == "answered" and st.answer == answers:
            # A retry of a resume whose token send failed: the stored answer is resent. The same caller's
            # repeat is answered as the first was, even once the gate is resumed; another caller's same
            # answer lost the race (the 409 below), whoever made the send. On a quorum pause the same
            # answer is a vote: the vote path below says whether it was counted (never the 200 of the
            # deciders' resume, which it is not), after this request made the deciders' send if still due.
            try:
                resumed = core.release_gate(latest.run_id, latest.request.node, self._output(latest))
            except SendFailedError:  # still stored, still unsent: the reconciler sends it
                if not quorum and st.answered_by == caller:
                    return self._result(latest, False, pending=True)
                resumed = False
            if not quorum and st.answered_by == caller:
                return self._result(latest, resumed or self._delivered(latest))
        core.refuse_if_ended(latest, answers, caller=caller, interaction=latest.public())  # timed out, or defaulted
        if (voted := self._vote(latest, answers, caller, groups)) is not None:
            return voted  # the vote path tells a counted voter so and gives anyone else the 409
        raise ConflictError(
            f"run {latest.run_id} was already resumed at node '{latest.request.node}'",
            details={
                "interaction": latest.public(),
                "winner": winner(status=st.status, value=st.answer, by=st.answered_by, at=st.answered_at),
            },
        )

    def _delivered(self, answered: Interaction) -> bool:
        """Was the answer delivered (its gate's wait released), or is there no token to send (an agent's
        blocking ask, whose waiter reads the answer)?"""
        wait = self.core.store.get_wait(answered.run_id, answered.request.node)
        if wait is None:
            return True
        return wait.status == "released" and answered.interaction_id in wait.interaction_ids

    def reconcile_wait(self, wait: ParkedWait) -> bool:
        """The reconciler: a parked pause whose interaction is answered gets the resume a failed send
        lost (the same output `resume` sends). True if this call resumed it."""
        for iid in wait.interaction_ids:
            i = self.core.store.get_interaction(wait.run_id, iid)
            if i is not None and i.state.status == "answered":
                return self.core.release_gate(wait.run_id, wait.gate, self._output(i), token=wait.task_token)
        return False

    def end_at_deadline(self, wait: ParkedWait) -> bool:
        """At a parked pause's deadline, the one deadline path (baton.services.at_deadline): an answer
        stored in time is delivered, never failed (its own send may still be under way); only an
        unanswered pause takes its declared default or fails with DEADLINE_ERROR, so the gate's Catch
        records the timeout. True if this call ended (or released) it."""
        return end_at_deadline(self.deadline_policy(), wait) is not None

    def deadline_policy(self) -> InteractionPauseDeadline:
        """The plain pause's `DeadlinePolicy`: its stored answer is sent as `resume` sends it."""
        return InteractionPauseDeadline(self.core, pause_output)

    _output = staticmethod(pause_output)

    @staticmethod
    def _result(i: Interaction, resumed: bool, *, pending: bool = False) -> dict[str, Any]:
        return {
            "interaction_id": i.interaction_id,
            "node": i.request.node,
            "queued": True,
            "resumed": resumed,
            "delivery": delivery_of(resumed, pending=pending),
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


def _approval_policy(pause: Interaction) -> ApprovalPolicy | None:
    """The quorum a pause needs (a plain pause's `approval`), None when one answer decides it."""
    return pause.request_as(PauseRequest).approval if pause.request.kind == "ask" else None
