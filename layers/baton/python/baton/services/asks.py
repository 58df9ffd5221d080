"""The blocking ask (`ask_user`) for agents that are not workflows: the hard stop before a destructive
decision. It is the same `ask` interaction a hosted pause stores (`PauseRequest`), answered the same way
(`POST /api/runs/{run}/resume`: one answer wins, a late one is a 410), but with no task token: the agent's
waiter is what resumes. `get` long-polls (<= 20 s) and ends a pending ask past its deadline; the reconciler's
pass (`end_due`, every minute) ends one nobody reads (its agent died), so every ask ends.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, ClassVar

from baton.contracts.deadline_tasks import Settled
from baton.domain.ladder import AnswerCheck
from baton.domain.pause_rules import timed_out
from baton.errors import ConflictError
from baton.ids import parse_iso
from baton.models import Interaction, PauseRequest, status_of
from baton.services.deadlines import answer_with_default, arm_interaction
from baton.services.pause_answers import resume_asking_run
from baton.services.pauses import open_pause

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.contracts.questions import BlockingAskRequest
    from baton.services.core import Core

log = logging.getLogger("baton")

MAX_WAIT_SECONDS = 20  # API Gateway's integration limit is 29 s
POLL_INTERVAL_SECONDS = 0.5
MAX_POLL_INTERVAL_SECONDS = 2.0


class StoreDeadline:
    """A pause whose deadline is the store's, no token to time it out (the blocking ask, the tool approval,
    the SDK waiter's interrupt): a read past `expires_at` ends it by a conditional write, its declared
    default (baton.domain.ladder) else the kind's `_time_out`; an answer accepted first wins, and a write
    that lost reads again. A claim past its lease is nobody's."""

    core: Core

    def _seen(self, i: Interaction) -> Interaction:
        state = i.state.without_lapsed_claim(self.core.now())
        return i if state is i.state else i.model_copy(update={"state": state})

    def _expire_if_due(self, i: Interaction) -> Interaction:
        i = self._seen(i)
        while i.state.status == "pending" and self.core.is_past(i.expires_at):
            try:
                ended = self._at_deadline(i)
            except ConflictError:  # answered (or ended) first: what is stored now
                i = self._seen(self.core.interaction_of(i.run_id, i.interaction_id, i.request.kind))
                continue
            return i if ended is i else self._after_deadline(ended)
        return i

    def _at_deadline(self, i: Interaction) -> Interaction:
        """The pause as it was when it is not this read's to end."""
        return answer_with_default(self.core, i, i.expires_at) or self._time_out(i)

    def _time_out(self, i: Interaction) -> Interaction:
        return i  # a kind that always declares a default never times out

    def _after_deadline(self, ended: Interaction) -> Interaction:
        """What follows the end once it is written (the run's status, its waiter)."""
        return ended


class LongPolled(StoreDeadline):
    """A pause whose waiter long-polls `get` (<= 20 s): the clock it waits on and its re-reads' pace."""

    backoff: ClassVar[tuple[float, float]] = (2.0, MAX_POLL_INTERVAL_SECONDS)  # (factor, cap)

    def __init__(
        self,
        core: Core,
        *,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.core, self._sleep, self._monotonic = core, sleep, monotonic

    def _long_poll(self, read: Callable[[Interaction | None], Interaction], wait_seconds: float) -> Interaction:
        """`read` (given the item as last read) until it is no longer pending or `wait_seconds` pass: re-read
        after 0.5 s, then `backoff` longer each time, and just past its deadline, so a read ends it on time.
        One still pending past it (a hosted pause its token's deadline ends) is read at the backoff's pace."""
        until = self._monotonic() + max(0.0, min(float(wait_seconds), MAX_WAIT_SECONDS))
        interval, current = POLL_INTERVAL_SECONDS, read(None)
        while current.state.status == "pending" and (remaining := until - self._monotonic()) > 0:
            expires_at = current.expires_at
            due = (parse_iso(expires_at) - self.core.clock.now()).total_seconds() if expires_at else -1.0
            self._sleep(min(interval, remaining, interval if due < 0 else due + 0.001))
            interval = min(interval * self.backoff[0], self.backoff[1])
            current = read(current)
        return current


class BlockingPause(LongPolled):
    """A pause with no task token, its waiter long-polling `get` (the blocking ask, the tool approval)."""

    kind: ClassVar[str]
    noun: ClassVar[str]  # what a 404 calls it

    def get(self, run_id: str, interaction_id: str, *, wait_seconds: float = 0) -> Interaction:
        return self._long_poll(lambda _: self.current(run_id, interaction_id), wait_seconds)

    def _load(self, run_id: str, interaction_id: str) -> Interaction:
        return self._seen(self.core.interaction_of(run_id, interaction_id, self.kind, self.noun))

    def current(self, run_id: str, interaction_id: str) -> Interaction:
        """As stored now, its deadline applied."""
        return self._expire_if_due(self._load(run_id, interaction_id))


class AskService(BlockingPause):
    kind = noun = "ask"

    def ask(self, run_id: str, request: BlockingAskRequest, *, caller: str) -> Interaction:
        """Store the blocking ask, pause the run, publish it; the caller then waits with `get`. Its ladder's
        steps are walked by its own timer, its default taken by the waiter's read at the deadline
        (`_expire_if_due`), or by the reconciler's pass (`end_due`) when nobody reads it. With `approval`
        the asking agent may not vote."""
        core, ladder, options = self.core, request.ladder(), request.options
        if ladder is not None:
            answer_is = AnswerCheck(kind="answers", options=options, allow_free_text=not options)
            ladder.check_for(request.timeout_seconds, answer_is=answer_is)
        if request.approval is not None:
            request.approval.check_options(options)
        core.check_notify(request.notify)
        core.ensure_run(run_id)
        asked = PauseRequest(
            node=request.node,
            prompt=request.question,
            options=options,
            allow_free_text=not options,
            timeout_seconds=request.timeout_seconds,
            notify=request.notify or ["console"],
            ladder=ladder,
        ).with_quorum(request.approval, requested_by=caller)
        interaction = core.new_interaction(run_id, asked, expires_at=core.deadline_of(request.timeout_seconds))
        open_pause(core, interaction, by=caller)
        arm_interaction(core, interaction)
        return interaction

    def pending(self, run_id: str) -> list[Interaction]:
        """The run's pending asks (agents' and hosted pauses'), oldest first; past-deadline ones end first."""
        self.core.require_run(run_id)
        found = self.core.store.list_run_interactions(run_id, kind="ask", status="pending")
        settled = [self._expire_if_due(i) for i in found]
        return sorted((i for i in settled if i.state.status == "pending"), key=lambda i: i.interaction_id)

    def end_due(self) -> list[Settled]:
        """The reconciler's pass: a pending ask past its deadline (a Query of the sparse due index) ends as
        its waiter's read would have, even if nobody reads it; a hosted pause is left (`_at_deadline`)."""
        ended: list[Settled] = []
        for due in self.core.store.list_due(self.kind, self.core.now()):
            try:
                state = self._expire_if_due(due).state
            except Exception:
                log.exception("reconcile: ending an ask at its deadline failed", extra={"run_id": due.run_id})
                continue
            if state.status == "timed_out" or state.outcome is not None:  # not a person's answer meanwhile
                ended.append(Settled(run_id=due.run_id, interaction_id=due.interaction_id, kind=self.kind))
        return ended

    def _at_deadline(self, i: Interaction) -> Interaction:
        """A pending ask past its deadline takes its declared default (never a timeout), else times out; a
        hosted pause is left to its token's deadline (the reconciler, the gate's Catch)."""
        return i if self.core.store.get_wait(i.run_id, i.request.node) is not None else super()._at_deadline(i)

    def _time_out(self, i: Interaction) -> Interaction:
        """Timed out with its `human_input_timed_out` in one conditional write (a loser writes neither)."""
        event = self.core.new_event(i.run_id, timed_out(i.request.node, [i]))
        return self.core.store.transition_interaction(
            i, status_of(i.state, "timed_out", reason="timeout"), with_records=[event]
        )

    def _after_deadline(self, ended: Interaction) -> Interaction:
        run_id, node = ended.run_id, ended.request.node
        if ended.state.status == "timed_out":  # its event went in with the time-out (`_time_out`)
            self.core.set_run_status(run_id, "running", allowed_from={"paused_waiting_human"})
        else:
            resume_asking_run(self.core, run_id, node)
        return ended
