"""Issue 33 items 1 and 4: every settled pause stops its deadline timer at its settlement, not at its
deadline (on AWS a timer that runs to its deadline costs transitions and a `gate_deadline` invocation that
finds nothing to do; locally it holds a thread). On in-memory ports with the timers recorded:

* an answered question, an answered blocking ask, a resumed or cancelled SDK interrupt stop their own
  (ladder/default) timer, once, by the settling write's winner: a repeat stops nothing again;
* a pause with no timer (no ladder, no default) stops none (a stop would be a call for nothing);
* a pause its own timer (or its waiter's read past the deadline) settles leaves the timer to end itself;
* a cancelled hosted interrupt stops its wait's timer; a run's stop stops the timers of what it closed;
  an agent's withdrawal (MCP tasks/cancel) stops its question's.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import pytest

from baton.contracts import AskRequest, BlockingAskRequest, CancelInterrupt, ResumeInterrupt
from baton.domain.approval import ApprovalPolicy
from baton.domain.deadline import INTERACTION_GATE
from baton.domain.interrupt_spec import InterruptSpec
from baton.domain.ladder import Ladder
from baton.errors import ConflictError, GoneError
from baton.services.asks import AskService
from baton.services.deadline_timers import Deadlines
from baton.services.interrupts import InterruptService
from baton.services.pauses import Resume
from baton.services.questions import QuestionService
from baton.services.reconciler import Reconciler
from baton.services.run_stop import close_pauses
from baton.services.withdrawals import withdraw
from tests.fakes import RecordingDeadlineTimers

if TYPE_CHECKING:
    from baton.services.core import Core
    from baton.services.runs import RunService
    from tests.conftest import FixedClock

LADDER = Ladder(remind_after=10, on_timeout={"default": "no"})


@pytest.fixture
def timers(core: Core) -> RecordingDeadlineTimers:
    core.timers = RecordingDeadlineTimers()
    core.ensure_run("r1")
    return core.timers


def _ask(questions: QuestionService, ladder: Ladder | None = LADDER, node: str = "planner") -> str:
    extra = ladder.model_dump(exclude_defaults=True) if ladder is not None else {}
    request = AskRequest(node=node, question="Ship?", options=["yes", "no"], timeout_seconds=60, **extra)
    return str(questions.ask("r1", request, caller="agent")["interaction_id"])


def _blocking_ask(core: Core, ladder: Ladder | None = LADDER) -> str:
    extra = ladder.model_dump(exclude_defaults=True, exclude={"on_timeout"}) if ladder is not None else {}
    request = BlockingAskRequest(node="agent", question="Drop it?", timeout_seconds=60, **extra)
    return AskService(core).ask("r1", request, caller="agent").interaction_id


def _interrupt(core: Core, key: str = "deploy-1") -> str:
    spec = InterruptSpec(session_id="r1", prompt="Deploy?", key=key, timeout_ms=60_000, ladder=Ladder(remind_after=5))
    created, _ = InterruptService(core).create(spec, caller="agent")
    return created.interaction_id


def _only_name(timers: RecordingDeadlineTimers) -> str:
    (timer,) = timers.started
    return timer.name


# ---- a person's answer: its winner stops the timer, once ---------------------------------------------
def test_an_answered_question_stops_its_own_timer_once(core: Core, timers: RecordingDeadlineTimers) -> None:
    questions = QuestionService(core)
    iid = _ask(questions)
    questions.answer("r1", iid, "yes", caller="alice")
    assert timers.stopped == [_only_name(timers)]
    questions.answer("r1", iid, "yes", caller="alice")  # a retry: answered as the first, nothing stopped again
    assert timers.stopped == [_only_name(timers)]


def test_a_quorum_question_stops_its_timer_once_at_the_vote_that_decides_it(
    core: Core, timers: RecordingDeadlineTimers
) -> None:
    questions = QuestionService(core)
    policy = ApprovalPolicy(approvals=2, approvers=["alice", "bob", "carol"])
    request = AskRequest(
        node="planner",
        question="Ship?",
        options=["approve", "reject"],
        timeout_seconds=60,
        approval=policy,
        remind_after=10,
    )
    iid = str(questions.ask("r1", request, caller="agent")["interaction_id"])
    questions.answer("r1", iid, "approve", caller="alice")
    assert timers.stopped == []  # one vote decides nothing: its reminder still matters
    questions.answer("r1", iid, "approve", caller="bob")
    assert timers.stopped == [_only_name(timers)]
    with pytest.raises(ConflictError):  # after the decision: nothing stopped again
        questions.answer("r1", iid, "approve", caller="carol")
    assert timers.stopped == [_only_name(timers)]


def test_a_question_with_no_ladder_or_default_has_no_timer_to_stop(core: Core, timers: RecordingDeadlineTimers) -> None:
    questions = QuestionService(core)
    iid = _ask(questions, ladder=None)
    questions.answer("r1", iid, "yes", caller="alice")
    assert timers.started == [] and timers.stopped == []  # no StopExecution for nothing


def test_a_question_its_timer_defaults_leaves_the_timer_to_end_itself(
    core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    questions = QuestionService(core)
    iid = _ask(questions, Ladder(on_timeout={"default": "no"}))
    (timer,) = timers.started
    clock.advance(timer.wait_seconds)
    Deadlines(Reconciler(core), sleep=clock.advance).fire(timer.payload)
    assert core.store.get_interaction("r1", iid).state.outcome == "timed_out_default"  # type: ignore[union-attr]
    assert timers.stopped == []  # it is firing: a stop would abort its own end


def test_an_answered_blocking_ask_stops_its_own_timer_once(
    core: Core, runs: RunService, timers: RecordingDeadlineTimers
) -> None:
    iid = _blocking_ask(core)
    runs.resume(Resume("r1", {"ok": "yes"}, caller="alice"))
    assert core.store.get_interaction("r1", iid).state.status == "answered"  # type: ignore[union-attr]
    assert timers.stopped == [_only_name(timers)]
    runs.resume(Resume("r1", {"ok": "yes"}, caller="alice"))  # a retry
    assert timers.stopped == [_only_name(timers)]


def test_a_blocking_ask_its_waiter_ends_at_the_deadline_stops_nothing(
    core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    iid = _blocking_ask(core)
    clock.advance(61)
    assert AskService(core).get("r1", iid).state.status == "timed_out"
    assert timers.stopped == []


@pytest.mark.parametrize("settle", ["resume", "cancel"])
def test_a_resumed_or_cancelled_sdk_interrupt_stops_its_own_timer_once(
    core: Core, timers: RecordingDeadlineTimers, settle: str
) -> None:
    iid = _interrupt(core)
    interrupts = InterruptService(core)
    (timer,) = timers.started
    assert timer.payload.gate == INTERACTION_GATE
    for attempt in range(2):  # the second: this caller's repeat (a cancel with no task to fail: a 410)
        if settle == "resume":
            interrupts.resume(iid, ResumeInterrupt(input={"ok": True}), caller="alice")
        else:
            with pytest.raises(GoneError) if attempt else contextlib.nullcontext():
                interrupts.cancel(iid, CancelInterrupt(reason="not now"), caller="alice")
        assert timers.stopped == [timer.name]


def test_an_sdk_interrupt_timed_out_by_its_read_stops_nothing(
    core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    iid = _interrupt(core)
    clock.advance(61)
    assert InterruptService(core).get(iid).state.status == "timed_out"
    assert timers.stopped == []


# ---- hosted waits: a cancel and a stop --------------------------------------------------------------
def test_a_cancelled_hosted_interrupt_stops_its_waits_timer(
    core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    interrupts = InterruptService(core)
    spec = InterruptSpec(session_id="r1", prompt="Deploy?", node="deploy", timeout_ms=60_000)
    created, _ = interrupts.create(spec, caller="wf", token="tok-1", entered_at=clock.now())
    wait_timer = _only_name(timers)
    interrupts.cancel(created.interaction_id, CancelInterrupt(reason="wrong one"), caller="alice")
    assert core.store.get_wait("r1", "deploy").status == "released"  # type: ignore[union-attr]
    assert timers.stopped == [wait_timer]


def test_a_stop_stops_the_timers_of_what_it_closed(
    core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    questions = QuestionService(core)
    timed = _ask(questions)
    untimed = _ask(questions, ladder=None, node="writer")
    interrupts = InterruptService(core)
    spec = InterruptSpec(session_id="r1", prompt="Deploy?", node="deploy", timeout_ms=60_000, ladder=LADDER)
    hosted, _ = interrupts.create(spec, caller="wf", token="tok-1", entered_at=clock.now())
    question_timer = next(t.name for t in timers.started if t.payload.interaction_id == timed)
    wait_timer = next(t.name for t in timers.started if t.payload.gate == "deploy")
    assert len(timers.started) == 2  # the parked interrupt's timer is its wait's, not its own
    closed = close_pauses(core, "r1", by="op", cause="stopped by op")
    assert sorted(closed) == sorted([timed, untimed, hosted.interaction_id])
    assert sorted(timers.stopped) == sorted([wait_timer, question_timer])
    assert close_pauses(core, "r1", by="op", cause="stopped by op") == []  # nothing open: nothing stopped again
    assert len(timers.stopped) == 2


def test_a_question_its_agent_withdraws_stops_its_own_timer(core: Core, timers: RecordingDeadlineTimers) -> None:
    questions = QuestionService(core)
    iid = _ask(questions)
    withdraw(core, core.interaction_of("r1", iid, "question"), by="agent")
    assert timers.stopped == [_only_name(timers)]
