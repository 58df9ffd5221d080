"""An async question's own timeout default holds even when its timer never started (on moto, the real
adapters): the deadline timer's start is broken, the question's stored deadline passes (an injected
clock), and the reconciler's pass (baton/services/reconciler.py `take_question_defaults`) takes the
declared default through the timer's own path (`QuestionService.take_default`): answered as
`timed_out_default` by nobody, its event recorded and its message queued for the node, exactly once;
before the deadline, and for a question with no default, it does nothing."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts import AskRequest
from baton.domain.deadline import TIMER_STATE_MACHINE
from baton.domain.ladder import TimeoutDefault
from baton.services.reconciler import Settled
from tests.conftest import FixedClock

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

RUN = "defaults-sweep"


class BrokenTimers:
    """The deadline timer port failing as a throttled StartExecution would."""

    def __init__(self) -> None:
        self.tried = 0

    def start(self, name: str, payload: Any, wait_seconds: int) -> None:
        self.tried += 1
        raise RuntimeError("ThrottlingException: Rate exceeded")

    def stop(self, name: str) -> None:
        raise AssertionError(f"no timer started, none to stop: {name}")


@pytest.fixture
def clock(moto_stack: MotoStack) -> FixedClock:
    clock = FixedClock(datetime.now(UTC).replace(microsecond=0))
    moto_stack.services.core.clock = clock
    return clock


def _calls(stack: MotoStack) -> Counter[str]:
    seen: Counter[str] = Counter()
    db: Any = stack.services.core.store._db  # the store's own client
    db.meta.events.register("before-call.dynamodb", lambda model, **_: seen.update([model.name]))
    return seen


def test_a_question_whose_timer_failed_to_start_still_takes_its_default_at_its_deadline(
    moto_stack: MotoStack, clock: FixedClock
) -> None:
    core, questions = moto_stack.services.core, moto_stack.services.questions
    broken = BrokenTimers()
    core.timers = broken
    core.ensure_run(RUN)
    posted = questions.ask(
        RUN,
        AskRequest(
            node="planner",
            question="Which database?",
            options=["postgres", "dynamodb"],
            timeout_seconds=60,
            on_timeout=TimeoutDefault(default="postgres"),
        ),
        caller="agent",
    )
    open_one = questions.ask(
        RUN, AskRequest(node="planner", question="Release name?", timeout_seconds=60), caller="agent"
    )
    iid = posted["interaction_id"]
    assert broken.tried == 1  # the ask went through although its timer did not start
    sfn = moto_stack.clients["stepfunctions"]
    timer_arn = moto_stack.provisioned.state_machine_arns[TIMER_STATE_MACHINE]
    assert sfn.list_executions(stateMachineArn=timer_arn)["executions"] == []

    clock.advance(59)  # before the stored deadline: nothing is taken
    assert moto_stack.services.reconciler.reconcile()["defaults"] == []
    pending = core.store.get_interaction(RUN, iid)
    assert pending is not None and pending.state.status == "pending"

    clock.advance(2)  # past it
    seen = _calls(moto_stack)
    assert moto_stack.services.reconciler.take_question_defaults() == [Settled(run_id=RUN, interaction_id=iid)]
    assert seen["Scan"] == 0 and seen["Query"] >= 1  # the pending questions by their index, never a Scan
    taken = core.store.get_interaction(RUN, iid)
    assert taken is not None
    assert (taken.state.status, taken.state.answer, taken.state.answered_by) == ("answered", "postgres", None)
    assert taken.state.outcome == "timed_out_default"
    types = [e.type for e in core.store.list_events(RUN, limit=500)]
    assert types.count("timed_out_default") == 1 and "interaction_answered" not in types
    messages = questions.drain(RUN, "planner")
    assert len(messages) == 1 and "postgres" in messages[0].text and "timed_out_default" in messages[0].text

    # Exactly once: the next pass finds nothing, and the question without a default stays open.
    assert moto_stack.services.reconciler.reconcile()["defaults"] == []
    assert [e.type for e in core.store.list_events(RUN, limit=500)].count("timed_out_default") == 1
    still = core.store.get_interaction(RUN, open_one["interaction_id"])
    assert still is not None and still.state.status == "pending"


def test_the_sweep_and_a_late_timer_take_the_default_once(moto_stack: MotoStack, clock: FixedClock) -> None:
    """The timer that did start, firing after the sweep took the default, finds nothing to take."""
    core, questions = moto_stack.services.core, moto_stack.services.questions
    core.ensure_run(RUN)
    posted = questions.ask(
        RUN,
        AskRequest(node="planner", question="Go?", timeout_seconds=30, on_timeout=TimeoutDefault(default="no")),
        caller="agent",
    )
    clock.advance(31)
    assert len(moto_stack.services.reconciler.take_question_defaults()) == 1
    assert questions.take_default(RUN, posted["interaction_id"]) is False  # the timer's own call, late
    types = [e.type for e in core.store.list_events(RUN, limit=500)]
    assert types.count("timed_out_default") == 1
