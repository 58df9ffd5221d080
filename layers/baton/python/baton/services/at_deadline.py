"""One deadline path for every kind of parked pause (issue 28 item 2).

At a parked wait's deadline (its timer, `baton.services.deadlines.Deadlines.fire`, or the reconciler's
sweep) `end_at_deadline` takes the same steps for every kind; each kind says how through its
`DeadlinePolicy` (ask and review: `InteractionPauseDeadline` here; hosted interrupt:
`baton.services.interrupts.InterruptDeadline`; await gate: `baton.services.questions.AwaitDeadline`):

1. `close`: the pause stops taking answers (an await gate's wait moves to "expiring"; an ask, a review
   or an interrupt is closed by the conditional write of step 4, which an answer accepted first beats);
2. `stored`: what was accepted before that, if anything (an answer, or an interrupt's cancel);
3. `release`: what was stored is delivered, as the answer's own send would deliver it (that send may be
   slow, throttled or lost: the deadline never fails a pause whose answer was accepted);
4. only an unanswered pause ends: `take_default` (its declared default, answered as nobody, then
   released as an answer would be), else `time_out` (the task fails with DEADLINE_ERROR and its cause:
   a conditional write, and an answer that lands first is released instead).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from baton.errors import ConflictError
from baton.models import status_of
from baton.services.deadlines import answer_with_default

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.models import Interaction, ParkedWait
    from baton.services.core import Core

# What the deadline did: delivered a stored answer, took the declared default, or timed the pause out.
DeadlineEnd = Literal["released", "defaulted", "timed_out"]
OPEN = ("parked", "expiring")
Stored = TypeVar("Stored")


class DeadlinePolicy(Protocol[Stored]):
    """How one kind of parked pause ends at its deadline (the steps of `end_at_deadline`)."""

    def close(self, wait: ParkedWait) -> ParkedWait | None:
        """Stop taking answers; the wait as closed, or None when it was already released or ended."""
        ...

    def stored(self, wait: ParkedWait) -> Stored | None:
        """What was accepted before the pause closed (None: nothing, it is unanswered)."""
        ...

    def release(self, wait: ParkedWait, stored: Stored) -> bool:
        """Deliver `stored` to the parked task. True if delivered (by this call or an earlier send)."""
        ...

    def take_default(self, wait: ParkedWait) -> bool:
        """Answer what is still pending with its declared default. True if one was taken."""
        ...

    def time_out(self, wait: ParkedWait) -> bool:
        """Time out what is still pending and fail the task with DEADLINE_ERROR. False if an answer got
        in first (its conditional write won) or someone else ended the pause."""
        ...


def end_at_deadline(policy: DeadlinePolicy[Stored], wait: ParkedWait) -> DeadlineEnd | None:
    """The one deadline path: a stored answer is delivered; only an unanswered pause takes its default
    or times out. None: nothing was done here (released or ended by someone else)."""
    closed = policy.close(wait)
    if closed is None:
        return None
    stored = policy.stored(closed)
    if stored is not None:
        return "released" if policy.release(closed, stored) else None
    if policy.take_default(closed) and (stored := policy.stored(closed)) is not None:
        return "defaulted" if policy.release(closed, stored) else None
    if policy.time_out(closed):
        return "timed_out"
    stored = policy.stored(closed)  # an answer accepted just before the time-out's conditional write
    return "released" if stored is not None and policy.release(closed, stored) else None


class InteractionPauseDeadline:
    """The policy of a pause that parks one interaction (a plain pause `ask`, a review gate): closed by
    the conditional write that times out its interaction; its stored answer sent as `output` makes it
    (None: not an answer this gate delivers, e.g. a review answer without a review action)."""

    def __init__(self, core: Core, output: Callable[[Interaction], dict[str, Any] | None]) -> None:
        self.core = core
        self._output = output

    def close(self, wait: ParkedWait) -> ParkedWait | None:
        return wait if wait.status in OPEN else None

    def _interactions(self, wait: ParkedWait) -> list[Interaction]:
        found = (self.core.store.get_interaction(wait.run_id, iid) for iid in wait.interaction_ids)
        return [i for i in found if i is not None]

    def stored(self, wait: ParkedWait) -> Interaction | None:
        answered = (i for i in self._interactions(wait) if i.state.status == "answered")
        return next((i for i in answered if self._output(i) is not None), None)

    def release(self, wait: ParkedWait, stored: Interaction) -> bool:
        output = self._output(stored)
        return output is not None and self.core.release_gate(wait.run_id, wait.gate, output, token=wait.task_token)

    def take_default(self, wait: ParkedWait) -> bool:
        taken = False
        for i in self._interactions(wait):
            try:
                taken = answer_with_default(self.core, i, wait.deadline) is not None or taken
            except ConflictError:
                continue  # answered (or ended) just in time: `stored` finds it
        return taken

    def time_out(self, wait: ParkedWait) -> bool:
        unanswered = []
        for i in self._interactions(wait):
            if i.state.status != "pending":
                continue
            try:
                self.core.store.transition_interaction(i, status_of(i.state, "timed_out", reason="timeout"))
            except ConflictError:
                return False  # answered just in time: `end_at_deadline` releases it
            unanswered.append(i.interaction_id)
        cause = f"the pause at node '{wait.gate}' passed its deadline {wait.deadline}; " + (
            f"unanswered: {', '.join(unanswered)}" if unanswered else "no answer it can deliver was stored"
        )
        return self.core.fail_at_deadline(wait, cause)
