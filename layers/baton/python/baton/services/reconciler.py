"""The reconciler (the `reconcile` Lambda, every minute): a failed resume is not lost. Every parked wait
(a Query of the sparse `pending` index) is its kind's `DeadlinePolicy` (`baton.services.at_deadline`): past
its deadline it ends on the one deadline path; else a pause no longer pending gets what a lost send owed it
(`deliver_stored`), bound to the token it examined (a gate parked again is left alone). Then tool-form
awaits past their expiry, quorums met but not released, due defaults and due blocking asks (the `due` index).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from baton.contracts.deadline_tasks import ReconcileReport, Settled, WaitReconciled
from baton.errors import GoneError
from baton.services.asks import AskService
from baton.services.at_deadline import deliver_stored, end_at_deadline
from baton.services.interrupts import InterruptDeadline, InterruptService
from baton.services.questions import AwaitDeadline, QuestionService
from baton.services.runs import RunService
from baton.services.tool_approval_answers import ToolApprovalAnswers
from baton.services.tool_approvals import ToolApprovalService

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.models import Interaction, ParkedWait
    from baton.services.at_deadline import DeadlinePolicy
    from baton.services.core import Core
    from baton.services.review import ReviewService

log = logging.getLogger("baton")


class Reconciler:
    def __init__(
        self,
        core: Core,
        *,
        runs: RunService | None = None,
        review: Callable[[], ReviewService] | None = None,
    ) -> None:
        self.core = core
        self.runs = runs or RunService(core)
        self.questions = QuestionService(core)
        self.interrupts = InterruptService(core)
        self._review = review
        # each kind's answer side settles a met tally as its deciding vote would have (every kind that votes)
        self._settle_standing: dict[str, Callable[[Interaction], bool]] = {
            "question": self.questions.settle_standing,
            "interrupt": self.interrupts.settle_standing,
            "ask": self.runs.answers.settle_standing,  # a hosted park or a blocking ask
            "tool_approval": ToolApprovalAnswers(core).settle_standing,
            "review": lambda pause: review is not None and review().settle_standing(pause),
        }

    def _policy(self, wait: ParkedWait) -> DeadlinePolicy[Any] | None:
        if wait.kind == "await":
            return AwaitDeadline(self.questions)
        if wait.kind == "interrupt":
            return InterruptDeadline(self.interrupts)
        if wait.kind == "review":
            return self._review().deadline_policy() if self._review is not None else None
        return self.runs.deadline_policy()  # ask (any other RunService.park kind)

    def reconcile_one(self, wait: ParkedWait, policy: DeadlinePolicy[Any] | None = None) -> WaitReconciled:
        """One parked wait (also a gate's timer at its deadline): before its deadline, the resume a lost send
        owes it; past it, the deadline path alone (a re-send must not follow: the path may have just closed
        it). GoneError: Step Functions' own timeout closed the task first (its Catch reports it)."""
        policy = policy or self._policy(wait)
        if policy is None:
            return WaitReconciled()
        past = self.core.is_past(wait.deadline)
        try:
            if not past:
                return WaitReconciled(released=bool(deliver_stored(policy, wait)))
            at_deadline = end_at_deadline(policy, wait)
        except GoneError:
            return WaitReconciled()
        except Exception:
            if not past:
                raise  # a failed re-send: the pass logs it and goes on
            log.exception("reconcile: ending at the deadline failed", extra={"run_id": wait.run_id, "gate": wait.gate})
            return WaitReconciled()
        return WaitReconciled(ended=at_deadline in ("defaulted", "timed_out"), released=at_deadline == "released")

    def reconcile(self) -> ReconcileReport:
        checked = 0
        released: list[Settled] = []
        ended: list[Settled] = []
        for wait in self.core.store.list_parked():
            policy = self._policy(wait)
            if policy is None:
                continue
            checked += 1
            try:
                outcome = self.reconcile_one(wait, policy)
            except Exception:
                log.exception("reconcile: re-send failed", extra={"run_id": wait.run_id, "gate": wait.gate})
                continue
            if outcome.ended or outcome.released:
                done = Settled(run_id=wait.run_id, gate=wait.gate, kind=wait.kind)
                (ended if outcome.ended else released).append(done)
        tools, timed_out = self.questions.reconcile_tool_awaits()
        return ReconcileReport(
            checked=checked,
            released=released + [Settled.model_validate(tool) for tool in tools],
            timed_out=timed_out,
            ended=ended + AskService(self.core).end_due(),  # blocking asks nobody reads (the due index)
            quorums=self.settle_met_quorums(),
            defaults=self.take_question_defaults() + ToolApprovalService(self.core).take_due_defaults(),
        )

    def settle_met_quorums(self) -> list[Settled]:
        """Tallies met but not released (a decider died first; one Query of the sparse index the release
        removes): each settled by its pause's kind, or taken off the list if its pause ended otherwise."""
        store = self.core.store
        released: list[Settled] = []
        for met in store.list_met_tallies():
            try:
                pause = store.get_interaction(met.run_id, met.interaction_id)
                if pause is None or pause.state.status != "pending":
                    store.close_tally(met.run_id, met.interaction_id)  # ended another way (or a stale read)
                elif self._settle_standing[pause.request.kind](pause):
                    released.append(Settled(run_id=met.run_id, interaction_id=met.interaction_id, kind="quorum"))
            except GoneError:  # its run or gate ended first: nothing waits for the decision
                store.close_tally(met.run_id, met.interaction_id)
            except Exception:
                log.exception("reconcile: releasing a met quorum failed", extra=met.model_dump())
        return released

    def take_question_defaults(self) -> list[Settled]:
        """The defaults of questions past their stored deadline, taken as their timer would have (the due
        index holds a question only when it declared a default)."""
        taken: list[Settled] = []
        for question in self.core.store.list_due("question", self.core.now()):
            try:
                if self.questions.take_default(question.run_id, question.interaction_id):
                    taken.append(Settled(run_id=question.run_id, interaction_id=question.interaction_id))
            except Exception:
                log.exception("reconcile: taking a question's default failed", extra={"run_id": question.run_id})
        return taken
