"""The pause protocol, declared once: how a kind of pause takes an answer (`AnswerPolicy`) and how it
ends at its deadline (`DeadlinePolicy`, walked by `end_at_deadline` for every kind; the reconciler's
re-send of a lost send is the same policy's `deliver_stored`). The deadline never fails an accepted
answer (its send may be slow or lost): only an unanswered pause defaults or times out."""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel

from baton.domain.deadline import OPEN_WAIT_STATUSES
from baton.errors import ConflictError, GoneError
from baton.services.approvals import ApprovalService
from baton.services.deadlines import answer_with_default, interactions_of, time_out_if_pending

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from baton.contracts.questions import ApprovalView
    from baton.domain.approval import ApprovalPolicy
    from baton.domain.audit import AuditHead
    from baton.domain.ballot import Ballot, Decided
    from baton.models import Event, Interaction, Message, ParkedWait
    from baton.ports import Guard
    from baton.services.approvals import Entry
    from baton.services.core import Core

# What the deadline did: delivered a stored answer, took the declared default, or timed the pause out.
DeadlineEnd = Literal["released", "defaulted", "timed_out"]
Stored = TypeVar("Stored")
Answer = TypeVar("Answer")
View = TypeVar("View", bound=BaseModel)
Outcome = TypeVar("Outcome")  # what a kind's quorum `settle` returns


@dataclass(frozen=True)
class Write(Generic[View]):
    """A kind's deciding write: the answer's time, what is written with it, what guards it, and its
    release once stored (the send, and what the answerer is told)."""

    at: str
    records: Sequence[Message | Event]
    release: Callable[[Interaction], View]
    guards: Sequence[Guard] = field(default_factory=list)
    audit_head: AuditHead | None = None  # the run's decision-log head as the snapshot read it
    stored: Any = None  # what is stored when it is not the answer as given (an interrupt's: its edited state)
    status: Literal["answered", "cancelled"] = "answered"  # an interrupt's cancel: cancelled, nothing stored
    reason: str | None = None  # the cancel's reason


class AnswerPolicy(ABC, Generic[Answer, View, Outcome]):
    """How one kind of pause takes an answer: the steps `baton.services.decide` walks, in its order, and the
    parts of its quorum vote (`decide.vote`). The defaults are most kinds'; a kind overrides what differs."""

    core: Core
    repeats_a_decider: ClassVar[bool] = False  # True: a quorum's decider's same answer again is a repeat too

    def check(self, pause: Interaction, answer: Answer) -> None:
        """422 when `answer` does not fit the pause (its options, its schema)."""

    def refuse_if_late(self, pause: Interaction, answer: Answer, caller: str) -> None:
        """410 (the answer kept as `answer_late`) past the pause's deadline, or once nothing waits for it."""
        self.core.refuse_if_late(pause, answer, caller=caller, deadline=pause.expires_at)

    def refuse_if_ended(self, pause: Interaction, answer: Answer, caller: str) -> None:
        """410 (kept as `answer_late`) for a pause no longer pending that its deadline ended."""
        self.core.refuse_if_ended(pause, answer, caller=caller, interaction=pause.public())

    def is_repeat(self, current: Interaction, answer: Answer, caller: str) -> bool:
        """The stored answer is this request's (the same caller, the same answer; a quorum's only when the
        kind `repeats_a_decider`)."""
        st = current.state
        same = st.status == "answered" and st.answer == answer and st.answered_by == caller
        return same and (self.repeats_a_decider or self.quorum(current) is None)

    def repeat(self, current: Interaction, answer: Answer, caller: str) -> View | None:
        """A repeat answered as the first was (its send retried if it failed); None: not this request's."""
        return self.view(current, True) if self.is_repeat(current, answer, caller) else None

    @abstractmethod
    def quorum(self, pause: Interaction) -> ApprovalPolicy | None:
        """The quorum the pause needs; None when one answer decides it."""

    @abstractmethod
    def write(self, pause: Interaction, answer: Answer, caller: str, decided: Decided | None) -> Write[View]:
        """The deciding write's records and guards, and its release once stored."""

    @abstractmethod
    def already(self, current: Interaction, *, racing: bool) -> ConflictError | GoneError:
        """The 409 naming the winner (`racing`: this request's write lost to it; to a cancel: a 410)."""

    @abstractmethod
    def view(self, answered: Interaction, resumed: bool, *, pending: bool = False) -> View:
        """What the answerer is told: stored, and delivered (or its send pending)."""

    @abstractmethod
    def entry(self, pause: Interaction, policy: ApprovalPolicy, answer: Answer) -> Entry:
        """The answer as a vote: its text, its side (None: the options decide) and who may not vote."""

    @abstractmethod
    def settle(self, pause: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> Outcome:
        """A met tally decided and released, exactly once (SendFailedError: stored, its send pending)."""

    @abstractmethod
    def not_counted(self, pause: Interaction) -> ConflictError:
        """The 409 to a vote cast after the decision, naming it."""

    @abstractmethod
    def counted(self, pause: Interaction, approval: ApprovalView, settled: Outcome | None, *, pending: bool) -> View:
        """What the voter is told: the count and what `settle` did (None: not met, or its send pending)."""

    def settle_standing(self, pause: Interaction) -> bool:
        """The reconciler's settle of a met tally (`ApprovalService.settle_standing`)."""
        return ApprovalService(self.core).settle_standing(pause, self.quorum(pause), partial(self.settle, pause))


class DeadlinePolicy(Protocol[Stored]):
    """How one kind of parked pause ends at its deadline (the steps of `end_at_deadline`); before it,
    `stored` and `release` are also the reconciler's re-send of what a lost send owed it."""

    def close(self, wait: ParkedWait) -> ParkedWait | None:
        """Stop taking answers; the wait as closed, or None when it was already released or ended."""

    def stored(self, wait: ParkedWait) -> Stored | None:
        """What was accepted before the pause closed (None: nothing, it is unanswered)."""

    def release(self, wait: ParkedWait, stored: Stored) -> bool:
        """Deliver `stored` to the parked task. True if delivered (by this call or an earlier send)."""

    def take_default(self, wait: ParkedWait) -> bool:
        """Answer what is still pending with its declared default. True if one was taken."""

    def time_out(self, wait: ParkedWait) -> bool:
        """Time out what is still pending and fail the task with DEADLINE_ERROR. False if an answer got
        in first (its conditional write won) or someone else ended the pause."""


def end_at_deadline(policy: DeadlinePolicy[Stored], wait: ParkedWait) -> DeadlineEnd | None:
    """The one deadline path: a stored answer is delivered; only an unanswered pause takes its default
    or times out. None: nothing was done here (released or ended by someone else)."""
    closed = policy.close(wait)
    if closed is None:
        return None
    if (delivered := deliver_stored(policy, closed)) is not None:
        return "released" if delivered else None
    if policy.take_default(closed) and (delivered := deliver_stored(policy, closed)) is not None:
        return "defaulted" if delivered else None
    if policy.time_out(closed):
        return "timed_out"
    # an answer accepted just before the time-out's conditional write
    return "released" if deliver_stored(policy, closed) else None


def deliver_stored(policy: DeadlinePolicy[Stored], wait: ParkedWait) -> bool | None:
    """Deliver what the pause stored: True if delivered, False if not by this call, None if nothing is."""
    stored = policy.stored(wait)
    return None if stored is None else policy.release(wait, stored)


class ParkedInteractions:
    """The deadline steps every pause parking interactions shares: closed while its wait is open, and what
    is still pending answered with its declared default. A kind adds how it finds, delivers and times out
    what it stored (`InteractionPauseDeadline`; an interrupt's delivers through its own service)."""

    def __init__(self, core: Core) -> None:
        self.core = core

    def close(self, wait: ParkedWait) -> ParkedWait | None:
        return wait if wait.status in OPEN_WAIT_STATUSES else None

    def take_default(self, wait: ParkedWait) -> bool:
        taken = False
        for i in interactions_of(self.core, wait):
            with contextlib.suppress(ConflictError):  # answered (or ended) just in time: `stored` finds it
                taken = answer_with_default(self.core, i, wait.deadline) is not None or taken
        return taken


class InteractionPauseDeadline(ParkedInteractions):
    """A pause parking one interaction (an ask, a review gate): its stored answer, when it `delivers` one
    (a review's: an action), sent as `output` makes it."""

    def __init__(
        self,
        core: Core,
        output: Callable[[Interaction], BaseModel],
        delivers: Callable[[Interaction], bool] = lambda _: True,
    ) -> None:
        super().__init__(core)
        self._output, self._delivers = output, delivers

    def stored(self, wait: ParkedWait) -> Interaction | None:
        answered = (i for i in interactions_of(self.core, wait) if i.state.status == "answered")
        return next((i for i in answered if self._delivers(i)), None)

    def release(self, wait: ParkedWait, stored: Interaction) -> bool:
        return self.core.release_gate(wait.run_id, wait.gate, self._output(stored), token=wait.task_token)

    def time_out(self, wait: ParkedWait) -> bool:
        pending = [i for i in interactions_of(self.core, wait) if i.state.status == "pending"]
        if not all(time_out_if_pending(self.core, i) for i in pending):
            return False  # answered just in time: `end_at_deadline` releases it
        unanswered = [i.interaction_id for i in pending]
        return fail_unanswered(self.core, wait, f"the pause at node '{wait.gate}'", unanswered)


def end_at_catch(
    core: Core,
    wait: ParkedWait | None,
    pending: Iterable[Interaction],
    time_out: Callable[[Interaction], bool],
    released_as: Literal["timed_out", "released"] = "timed_out",
) -> list[Interaction]:
    """A gate's Catch (Step Functions ended its task: States.Timeout, an interrupt's cancel), one path for
    every kind: what is still pending timed out by the kind's `time_out` (a conditional write: one answered
    at the last moment stays answered), then the wait released. Returns what this call timed out."""
    timed_out = [i for i in pending if i.state.status == "pending" and time_out(i)]
    if wait is not None and wait.status in OPEN_WAIT_STATUSES:
        core.store.release_wait(wait, released_as)
    return timed_out


def fail_unanswered(core: Core, wait: ParkedWait, what: str, unanswered: Sequence[str], note: str = "") -> bool:
    """A deadline's time-out (`DeadlinePolicy.time_out`): the parked task failed with DEADLINE_ERROR, its
    cause naming what went unanswered. False if the wait was no longer open to mark."""
    listed = f"unanswered: {', '.join(unanswered)}{note}" if unanswered else "no answer it can deliver was stored"
    return core.fail_at_deadline(wait, f"{what} passed its deadline {wait.deadline}; {listed}")
