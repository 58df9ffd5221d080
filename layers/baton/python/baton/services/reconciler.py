"""The reconciler (the `reconcile` Lambda, scheduled every minute): a failed resume is not lost.
Every parked wait (the sparse `pending` index, GSI1PK=PARKED: a Query, never a Scan) whose
interaction is no longer pending gets what a failed send lost, exactly as the live path sends it:

* `ask` (RunService.park): answered → the resume output of `RunService.resume`;
* `interrupt` (hosted): answered → `{input, state, ...}` as on resume; cancelled (incl. timed out by the
  store deadline) → the task failure `InterruptCancelled` as on cancel (`DEADLINE_ERROR` when timed out);
* `review`: an operator action stored → the review output (as `act` / a re-`park` deliver it);
* `await` gates: released once their scope is answered (and tool-form awaits completed or timed out).

At a parked wait's deadline (`ParkedWait.deadline`, `Core.deadline_of`) Baton ends the pause itself
before looking for a lost resume, on the one deadline path of every kind (`baton.services.at_deadline`):
an answer stored in time is delivered; what is still pending takes its declared default or is timed
out (a conditional write an answer accepted in time beats) and the task fails with `DEADLINE_ERROR` and
its cause, so the gate's Catch runs as on Step Functions' own timeout, which is only the backstop.

A release whose sender died after the send (token sent, wait still parked) is completed here too: the
re-send finds the token closed before its deadline, and `Core.release_gate` records what the sender did
not (the wait released, `run_resumed`), exactly once.

A quorum met but not released (its decider died between the vote and the release) is released here
too, exactly once (`baton/services/quorum_release.py`).

An async question's own deadline (`expires_at`, the one clock its timer waits for) with a declared
default (`on_timeout: {"default": ...}`) is kept here too: a pending question past it has the default
taken through the timer's own path (`QuestionService.take_default`: a conditional write, so the timer
and this sweep never both take it), so a timer that failed to start loses nothing. One Query of the
questions that declared a default and are past their deadline (the sparse `due` index, `DUE#question`:
O(due), never every pending question), never a Scan.

Each send goes through a conditional release bound to the parked token it examined (a gate re-parked
for a later round is left alone), so a concurrent API retry and the reconciler never both resume it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from baton.errors import GoneError
from baton.services.at_deadline import end_at_deadline
from baton.services.interrupts import InterruptDeadline, InterruptService
from baton.services.questions import AwaitDeadline, QuestionService
from baton.services.quorum_release import settle_met_quorums
from baton.services.runs import RunService

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.models import ParkedWait
    from baton.ports import WaitStore
    from baton.services.at_deadline import DeadlineEnd, DeadlinePolicy
    from baton.services.core import Core
    from baton.services.review import ReviewService

log = logging.getLogger("baton")


class Reconciler:
    def __init__(
        self,
        core: Core,
        *,
        runs: RunService | None = None,
        questions: QuestionService | None = None,
        interrupts: InterruptService | None = None,
        review: Callable[[], ReviewService] | None = None,
    ) -> None:
        self.core = core
        self.waits: WaitStore = core.store  # the only part of the store read here: the parked waits
        self.runs = runs or RunService(core)
        self.questions = questions or QuestionService(core)
        self.interrupts = interrupts or InterruptService(core)
        self._review = review

    def _handler(self, wait: ParkedWait) -> Callable[[ParkedWait], bool] | None:
        if wait.kind == "await":
            return self.questions.reconcile_wait
        if wait.kind == "interrupt":
            return self.interrupts.reconcile_wait
        if wait.kind == "review":
            return self._review().reconcile_wait if self._review is not None else None
        return self.runs.reconcile_wait  # ask (and any other RunService.park kind)

    def _deadline_policy(self, wait: ParkedWait) -> DeadlinePolicy[Any] | None:
        """Each kind's steps of the one deadline path (baton.services.at_deadline)."""
        if wait.kind == "await":
            return AwaitDeadline(self.questions)
        if wait.kind == "interrupt":
            return InterruptDeadline(self.interrupts)
        if wait.kind == "review":
            return self._review().deadline_policy() if self._review is not None else None
        return self.runs.deadline_policy()  # ask (and any other RunService.park kind)

    def _end_if_due(self, wait: ParkedWait) -> DeadlineEnd | None:
        """What Baton did at this pause's deadline now (then there is nothing left to resend): its stored
        answer delivered, its declared default taken, or the pause timed out. None: not due, or nothing."""
        if not self.core.is_past(wait.deadline):
            return None
        policy = self._deadline_policy(wait)
        try:
            return end_at_deadline(policy, wait) if policy is not None else None
        except GoneError:
            return None  # Step Functions' own timeout closed the task first: its Catch reports it
        except Exception:
            log.exception("reconcile: ending at the deadline failed", extra={"run_id": wait.run_id, "gate": wait.gate})
            return None

    def reconcile(self) -> dict[str, Any]:
        checked = 0
        released: list[dict[str, str]] = []
        ended: list[dict[str, str]] = []
        for wait in self.waits.list_parked():
            handler = self._handler(wait)
            if handler is None:
                continue
            checked += 1
            if (at_deadline := self._end_if_due(wait)) is not None:
                done = {"run_id": wait.run_id, "gate": wait.gate, "kind": wait.kind}
                (released if at_deadline == "released" else ended).append(done)
                continue
            try:
                if handler(wait):
                    released.append({"run_id": wait.run_id, "gate": wait.gate, "kind": wait.kind})
            except GoneError:
                pass  # the gate timed out first: its timeout handler reports it
            except Exception:
                log.exception("reconcile: re-send failed", extra={"run_id": wait.run_id, "gate": wait.gate})
        tools, timed_out = self.questions.reconcile_tool_awaits()
        # a met quorum never waits: one whose decider died before its release is released here
        quorums = settle_met_quorums(self.core, self.questions, self.interrupts, self._review)
        return {
            "checked": checked,
            "released": released + tools,
            "timed_out": timed_out,
            "ended": ended,
            "quorums": quorums,
            "defaults": self.take_question_defaults(),
        }

    def take_question_defaults(self) -> list[dict[str, str]]:
        """Pending async questions past their stored deadline that declared a default: the default taken
        (`timed_out_default`, nobody's answer), as their timer would have. Returns those taken here."""
        taken: list[dict[str, str]] = []
        for question in self.core.store.list_due("question", self.core.now()):
            ladder = question.request.ladder
            if ladder is None or ladder.default is None or not self.core.is_past(question.expires_at):
                continue
            try:
                if self.questions.take_default(question.run_id, question.interaction_id):
                    taken.append({"run_id": question.run_id, "interaction_id": question.interaction_id})
            except Exception:
                log.exception("reconcile: taking a question's default failed", extra={"run_id": question.run_id})
        return taken

    def reconcile_one(self, wait: ParkedWait) -> dict[str, bool]:
        """One parked wait, as a pass treats it (a gate's timer at its deadline, baton.services.deadlines):
        ended at its deadline, or else the resume a lost send owes it."""
        if (at_deadline := self._end_if_due(wait)) is not None:
            return {"ended": at_deadline != "released", "released": at_deadline == "released"}
        handler = self._handler(wait)
        try:
            return {"ended": False, "released": handler is not None and handler(wait)}
        except GoneError:
            return {"ended": False, "released": False}  # the gate timed out first
