"""Issue 17 item 4 (Baton ends every pause itself at its deadline) and issue 10 item 4 (pauses that end,
end everywhere), on in-memory ports with an injected clock and the timers recorded:

* every park (ask, await gate, hosted interrupt, review, the tool-form await) starts one timer for its
  wait, due at its deadline; a retried park starts no second one; no task token is in a timer;
* when the timer fires (at the deadline, up to the engine's precision after it), answers at the
  deadline +/- 100 ms never give a 200 followed by a timeout: before it the answer is delivered, after
  it a 410 keeps it as late and the timer fails the task with its cause, before Step Functions' timeout;
* a timer that fires early waits for the deadline; one for a wait already released, or parked again
  with another deadline, changes nothing; a release before the deadline stops the wait's timer (its
  firing would cost transitions and an invocation for nothing), a release by the timer itself does not;
* a timed-out await gate's questions stop listing as pending and an answer after it is a 410 kept as
  late; a timed-out tool-form await no longer leaves its run paused.
"""

from __future__ import annotations

import json
import math
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts import AskRequest, AwaitPending, AwaitRequest
from baton.domain.deadline import (
    GRACE_SECONDS,
    TIMER_DELIVERY_SECONDS,
    TIMER_PRECISION_SECONDS,
    task_timeout_seconds,
    timer_wait_seconds,
)
from baton.errors import GoneError
from baton.ids import parse_iso
from baton.services.core import DEADLINE_ERROR
from baton.services.deadline_timers import Deadlines
from tests.fakes import RecordingDeadlineTimers
from tests.unit.test_parks_deadlines_releases import KINDS, TIMEOUT, Gates

if TYPE_CHECKING:
    from baton.services.core import Core
    from baton.services.runs import RunService
    from tests.conftest import FixedClock
    from tests.fakes import RecordingTaskTokens
    from tests.fakes.timers import StartedTimer


@pytest.fixture
def timers(core: Core) -> RecordingDeadlineTimers:
    core.timers = RecordingDeadlineTimers()
    return core.timers


@pytest.fixture
def gates(core: Core, runs: RunService, tmp_path: Path, timers: RecordingDeadlineTimers) -> Gates:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    return Gates(core, runs, tmp_path)


def _deadlines(gates: Gates, clock: FixedClock) -> Deadlines:
    reconciler = gates.reconciler()
    return Deadlines(
        reconciler,
        sleep=clock.advance,  # a timer that fired early sleeps on the test's clock
    )


def _sent(core: Core) -> list[tuple[str, str, dict[str, Any]]]:
    tokens: RecordingTaskTokens = core.tokens  # type: ignore[assignment]
    return list(tokens.sent)


def _types(core: Core) -> list[str]:
    return [e.type for e in core.store.list_events("r1", limit=1000)]


def _only(timers: RecordingDeadlineTimers) -> StartedTimer:
    (timer,) = timers.started
    return timer


# ---- every park starts its timer ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_every_park_starts_one_timer_due_at_its_deadline(
    gates: Gates, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers, kind: str
) -> None:
    gates.prepare(kind)
    gates.entered = clock.now() - timedelta(seconds=3)  # the park ran 3 s after the task started
    gates.park(kind)
    gates.park(kind)  # a retried park: the same wait, no second timer
    timer = _only(timers)
    wait = next(w for w in core.store.list_run_waits("r1") if w.status == "parked")
    assert wait.deadline is not None
    assert timer.payload.run_id == "r1" and timer.payload.gate == wait.gate
    assert timer.payload.deadline == parse_iso(wait.deadline) and timer.payload.interaction_id is None
    assert timer.wait_seconds == math.ceil((parse_iso(wait.deadline) - clock.now()).total_seconds())
    assert wait.task_token not in json.dumps(timer.payload.model_dump(mode="json"))  # tokens stay server-side


@pytest.mark.parametrize("kind", KINDS)
def test_a_release_before_the_deadline_stops_its_timer_and_one_at_the_deadline_does_not(
    gates: Gates, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers, kind: str
) -> None:
    gates.prepare(kind)
    iid = gates.park(kind)
    gates.answer(kind, iid)
    assert timers.stopped == [_only(timers).name]  # the released wait's own timer, once
    if kind != "review":  # a review's second action is a 409 (not waiting), below the engine
        gates.answer(kind, iid)  # a repeat answers as the first and releases nothing again
    assert timers.stopped == [_only(timers).name]


@pytest.mark.parametrize("kind", KINDS)
def test_a_pause_the_timer_ends_leaves_the_timer_to_end_itself(
    gates: Gates, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers, kind: str
) -> None:
    gates.prepare(kind)
    gates.park(kind)
    clock.current = gates.entered + timedelta(seconds=TIMEOUT + TIMER_PRECISION_SECONDS)
    _deadlines(gates, clock).fire(_only(timers).payload)
    assert _sent(core) and timers.stopped == []  # it is firing: stopping it would abort its own end


def test_the_timer_waits_whole_seconds_and_never_fires_before_the_deadline(clock: FixedClock) -> None:
    deadline = clock.now() + timedelta(seconds=10.2)
    assert timer_wait_seconds(deadline, clock.now()) == 11
    assert timer_wait_seconds(deadline, deadline + timedelta(seconds=5)) == 0  # overdue: fire at once


def test_the_grace_exceeds_how_late_the_timer_can_be() -> None:
    assert GRACE_SECONDS > TIMER_PRECISION_SECONDS + TIMER_DELIVERY_SECONDS
    assert task_timeout_seconds(3600) == 3600 + GRACE_SECONDS and task_timeout_seconds(6) == 6 + GRACE_SECONDS


# ---- answers at the deadline, with the timer ending the pause ----------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("offset", [-0.1, 0.1])
def test_answers_at_the_deadline_never_get_a_200_and_a_timeout_when_the_timer_fires(
    gates: Gates, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers, kind: str, offset: float
) -> None:
    gates.prepare(kind)
    iid = gates.park(kind)
    deadline = gates.entered + timedelta(seconds=TIMEOUT)
    clock.current = deadline + timedelta(seconds=offset)
    try:
        result: dict[str, Any] | None = gates.answer(kind, iid)
    except GoneError as gone:
        result = None
        assert "deadline" in gone.message
    # The timer fires as late as its engine allows, and its failure is delivered before Step Functions'.
    clock.current = deadline + timedelta(seconds=TIMER_PRECISION_SECONDS)
    fired = _deadlines(gates, clock).fire(_only(timers).payload)
    sfn_timeout = gates.entered + timedelta(seconds=task_timeout_seconds(TIMEOUT))
    assert clock.now() + timedelta(seconds=TIMER_DELIVERY_SECONDS) < sfn_timeout
    sent = _sent(core)
    if result is not None:  # a 200: delivered; the timer finds nothing to end
        assert offset < 0 and bool(result.get("resumed", result.get("released")))
        assert [k for k, _, _ in sent] == ["success"] and fired["ended"] is False
    else:  # a 410: kept as late; the timer ends the pause with its cause
        assert offset > 0 and "answer_late" in _types(core)
        # An interrupt the late resume already timed out is settled (its failure sent) rather than ended.
        assert fired["ended"] or (kind == "interrupt" and fired["released"])
        ((sent_kind, _, failure),) = sent
        assert sent_kind == "failure" and failure["cause"]
        assert failure["error"] == DEADLINE_ERROR  # an interrupt too: its Catch takes it as a timeout


def test_a_timer_that_fires_early_waits_for_the_deadline(
    gates: Gates, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    gates.park("ask")
    deadline = gates.entered + timedelta(seconds=TIMEOUT)
    clock.current = deadline - timedelta(seconds=1.5)
    assert _deadlines(gates, clock).fire(_only(timers).payload)["ended"] is True
    assert clock.now() >= deadline  # it slept until the deadline before ending anything
    assert [(k, f["error"]) for k, _, f in _sent(core)] == [("failure", DEADLINE_ERROR)]


def test_a_timer_that_fires_long_before_the_deadline_leaves_the_pause_to_the_reconciler(
    gates: Gates, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    gates.park("ask")
    clock.advance(10)
    assert _deadlines(gates, clock).fire(_only(timers).payload).model_dump(exclude_unset=True) == {
        "ended": False,
        "released": False,
        "reason": "not_due",
    }
    assert _sent(core) == [] and core.store.get_wait("r1", "approve").status == "parked"  # type: ignore[union-attr]


def test_a_timer_for_a_released_wait_changes_nothing(
    gates: Gates, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    iid = gates.park("ask")
    gates.answer("ask", iid)
    clock.advance(TIMEOUT)
    assert _deadlines(gates, clock).fire(_only(timers).payload)["reason"] == "not_parked"
    assert [k for k, _, _ in _sent(core)] == ["success"] and "answer_late" not in _types(core)


def test_the_timer_of_an_earlier_round_leaves_the_gate_parked_again_alone(
    gates: Gates, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    gates.prepare("await")
    gates.park("await")
    first = _only(timers)
    gates.answer("await", "")
    gates.questions.ask("r1", AskRequest(node="draft", question="And now?"), caller="agent")
    clock.advance(TIMEOUT)
    gates.entered = clock.now()
    gates.park("await", token="tok-2")  # the next round of the gate: another token, another deadline
    assert len(timers.started) == 2
    assert _deadlines(gates, clock).fire(first.payload)["reason"] == "not_parked"
    assert core.store.get_wait("r1", "sync").status == "parked"  # type: ignore[union-attr]


# ---- issue 10 item 4: pauses that end, end everywhere ------------------------------------------------
def test_a_timed_out_await_gate_stops_listing_its_questions_and_a_later_answer_is_late(
    gates: Gates, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    gates.prepare("await")
    gates.park("await")
    clock.advance(TIMEOUT)
    assert _deadlines(gates, clock).fire(_only(timers).payload)["ended"] is True
    caught = gates.questions.record_gate_timeout("r1", "sync")  # the gate's Catch (await_timeout)
    assert [u["interaction_id"] for u in caught["unanswered"]] == [gates.question_id]
    assert gates.questions.pending("r1") == []
    question = core.store.get_interaction("r1", gates.question_id)
    assert question is not None and question.state.status == "timed_out"
    assert question.state.reason == "await gate 'sync' timed out"
    with pytest.raises(GoneError) as late:
        gates.questions.answer("r1", gates.question_id, "yes", caller="alice")
    assert "await gate 'sync' timed out" in late.value.message and late.value.details["reason"] == "gate_timed_out"
    assert late.value.http_status == 410
    [kept] = [e for e in core.store.list_events("r1", limit=1000) if e.type == "answer_late"]
    assert kept.data["answer"] == "yes" and kept.data["interaction_id"] == gates.question_id
    after = core.store.get_interaction("r1", gates.question_id)
    assert after is not None and after.state.status == "timed_out" and after.state.answer is None


def test_a_timed_out_tool_await_no_longer_leaves_its_run_paused(
    gates: Gates, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    core.store.update_run("r1", {"status": "running"})
    asked = gates.questions.ask("r1", AskRequest(node="draft", question="Ship?"), caller="agent")
    pending = gates.questions.await_tool("r1", AwaitRequest(timeout_seconds=30, from_="draft"), caller="agent")
    assert isinstance(pending, AwaitPending) and core.store.get_run("r1").status == "paused_waiting_human"  # type: ignore[union-attr]
    timer = _only(timers)
    assert timer.payload.interaction_id == pending["interaction_id"] and timer.wait_seconds == 30
    clock.advance(30)
    assert _deadlines(gates, clock).fire(timer.payload)["ended"] is True
    assert core.store.get_run("r1").status == "running"  # type: ignore[union-attr]
    awaiting = core.store.get_interaction("r1", pending["interaction_id"])
    assert awaiting is not None and awaiting.state.status == "timed_out"
    assert "await_timed_out" in _types(core)
    # The tool form blocks nobody: its question stays open, and answering it keeps the run running.
    assert gates.questions.answer("r1", asked["interaction_id"], "yes", caller="alice")["status"] == "answered"
    assert core.store.get_run("r1").status == "running"  # type: ignore[union-attr]


def test_a_tool_await_answered_before_its_timer_is_completed_not_timed_out(
    gates: Gates, core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    asked = gates.questions.ask("r1", AskRequest(node="draft", question="Ship?"), caller="agent")
    pending = gates.questions.await_tool("r1", AwaitRequest(timeout_seconds=30, from_="draft"), caller="agent")
    gates.questions.answer("r1", asked["interaction_id"], "yes", caller="alice")
    assert timers.stopped == [_only(timers).name]  # the last answer completed it: its timer stops with it
    clock.advance(30)
    assert _deadlines(gates, clock).fire(_only(timers).payload)["ended"] is False
    awaiting = core.store.get_interaction("r1", pending["interaction_id"])
    assert awaiting is not None and awaiting.state.status == "answered"


# ---- the state machines: Step Functions' timeout is the declared one + the grace -------------------------
def _parking_tasks() -> list[tuple[str, dict[str, Any], dict[str, dict[str, Any]]]]:
    """Each parking task of the shipped state machines (name, state), with every state of its file."""
    root = Path(__file__).resolve().parents[2] / "statemachines"
    found = []
    for path in sorted(root.glob("*.asl.json")):
        stack = list(json.loads(path.read_text())["States"].items())
        everything: dict[str, dict[str, Any]] = {}
        while stack:
            name, state = stack.pop()
            everything[name] = state
            for nested in (state.get("ItemProcessor") or state.get("Iterator") or {}, *state.get("Branches", [])):
                stack += list(nested.get("States", {}).items())
        found += [
            (name, state, everything)
            for name, state in everything.items()
            if "TimeoutSecondsPath" in state and "entered_at.$" in state.get("Parameters", {}).get("Payload", {})
        ]
    return found


def _computed(path: str, task: str, states: dict[str, dict[str, Any]]) -> str:
    """The intrinsic that writes `path` (the task's TimeoutSecondsPath): a Pass state's Parameters into its
    ResultPath just before the task, or a Map's ItemSelector / a Task's ResultSelector."""
    head, _, leaf = path.rpartition(".")
    for state in states.values():
        if state.get("Type") == "Pass" and state.get("ResultPath") == head and state.get("Next") == task:
            return str(state["Parameters"][f"{leaf}.$"])
        for selector in ("ItemSelector", "ResultSelector"):
            if f"{leaf}.$" in state.get(selector, {}):
                return str(state[selector][f"{leaf}.$"])
    raise AssertionError(f"nothing computes {path} for {task}")


def test_each_parking_task_times_out_a_grace_after_the_timeout_its_pause_declares() -> None:
    """Defect 5 of issue 28: Baton's deadline is the declared timeout, so Step Functions' own must come
    GRACE_SECONDS later, computed from the same timeout the park payload sends."""
    checked = 0
    for name, task, states in _parking_tasks():
        payload = task["Parameters"]["Payload"]
        sent = payload.get("timeout_seconds.$") or payload.get("request", {}).get("timeout_seconds.$")
        if sent is None and payload.get("request.$"):
            sent = payload["request.$"] + ".timeout_seconds"  # the whole request, with its timeout_seconds
        computed = _computed(task["TimeoutSecondsPath"], name, states)
        source, grace = computed.removeprefix("States.MathAdd(").removesuffix(")").split(", ")
        assert int(grace) == GRACE_SECONDS, computed
        if sent is not None:  # the review park reads its timeout from the gate's stored config
            # the same field the park sends (a Map item's is the ItemSelector's copy of it)
            assert source.rpartition(".")[2] == sent.rpartition(".")[2], (computed, sent)
        checked += 1
    assert checked >= 7


def test_the_await_gate_states_time_out_a_grace_after_the_declared_timeout() -> None:
    from baton.workflows.gate_states import await_gate_states

    literal = await_gate_states("Sync", gate="sync", timeout_seconds=60, next=None)
    assert literal["Sync"]["TimeoutSeconds"] == 60 + GRACE_SECONDS
    assert literal["Sync"]["Parameters"]["Payload"]["timeout_seconds"] == 60  # Baton's deadline: the declared
    by_path = await_gate_states("Sync", gate="sync", timeout_seconds_path="$.input.t", next="Ship")
    entry, task = by_path["Sync"], by_path["SyncPark"]
    assert entry["Type"] == "Pass" and entry["Next"] == "SyncPark"  # the gate's entry adds the grace
    assert entry["Parameters"] == {"seconds.$": f"States.MathAdd($.input.t, {GRACE_SECONDS})"}
    assert task["TimeoutSecondsPath"] == f"{entry['ResultPath']}.seconds" and task["Next"] == "Ship"
    assert task["Parameters"]["Payload"]["timeout_seconds.$"] == "$.input.t"
