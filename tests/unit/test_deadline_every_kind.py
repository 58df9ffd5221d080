"""Issue 28 item 2 (one deadline path for every kind of pause), in process with an injected clock:

* an answer stored 0.5 s before the deadline whose send is slow (a throttled SendTaskSuccess retried with
  standard backoff: 2 s, so the deadline passes and the gate's timer fires while it is under way) is
  delivered, never failed: the timer releases the gate with the stored answer, and the answer's own send,
  finding the token closed by that release, still reports the answer delivered (defect 4: a plain pause
  and a review gate were failed with "unanswered: none");
* the same for the pauses no gate parks (a blocking ask, an SDK interrupt): the waiter's read at the
  deadline returns the stored answer;
* an unanswered parked pause times out at its declared timeout, never earlier (defect 5).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts import BlockingAskRequest, ResumeInterrupt
from baton.domain.deadline import TIMER_PRECISION_SECONDS
from baton.domain.interrupt_spec import InterruptSpec
from baton.errors import BatonError
from baton.ids import parse_iso
from baton.services.asks import AskService
from baton.services.core import DEADLINE_ERROR
from baton.services.deadline_timers import Deadlines
from baton.services.interrupts import InterruptService
from baton.services.pauses import Resume
from tests.fakes import RecordingDeadlineTimers, RecordingTaskTokens
from tests.unit.test_parks_deadlines_releases import KINDS, TIMEOUT, Gates

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.services.core import Core
    from baton.services.runs import RunService
    from tests.conftest import FixedClock

SEND_SECONDS = 2.0  # a throttled SendTaskSuccess, retried with standard backoff
STORED_BEFORE = 0.5  # the answer is stored this long before the deadline


class SlowSendTokens(RecordingTaskTokens):
    """Step Functions whose first SendTaskSuccess takes SEND_SECONDS: `during` (the clock moving on and
    the deadline's timer firing) runs while it is under way, before the send reaches the task."""

    def __init__(self) -> None:
        super().__init__()
        self.during: Callable[[], None] | None = None

    def send_success(self, token: str, output: dict[str, Any]) -> None:
        during, self.during = self.during, None
        if during is not None:
            during()
        super().send_success(token, output)


@pytest.fixture
def timers(core: Core) -> RecordingDeadlineTimers:
    core.timers = RecordingDeadlineTimers()
    return core.timers


@pytest.fixture
def tokens(core: Core) -> SlowSendTokens:
    core.tokens = SlowSendTokens()
    return core.tokens


@pytest.fixture
def gates(core: Core, runs: RunService, tmp_path: Path, timers: RecordingDeadlineTimers) -> Gates:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    return Gates(core, runs, tmp_path)


def _fire_deadline(gates: Gates, clock: FixedClock, timers: RecordingDeadlineTimers) -> dict[str, Any]:
    """The gate's timer, as late as its engine fires it (the Lambda `gate_deadline`)."""
    reconciler = gates.reconciler()
    (timer,) = timers.started
    clock.current = timer.payload.deadline + timedelta(seconds=TIMER_PRECISION_SECONDS)
    deadlines = Deadlines(
        reconciler,
        sleep=clock.advance,
    )
    return deadlines.fire(timer.payload)


def _types(core: Core) -> list[str]:
    return [e.type for e in core.store.list_events("r1", limit=1000)]


@pytest.mark.parametrize("kind", KINDS)
def test_an_answer_stored_before_the_deadline_with_a_slow_send_is_delivered_never_failed(
    gates: Gates,
    core: Core,
    clock: FixedClock,
    timers: RecordingDeadlineTimers,
    tokens: SlowSendTokens,
    kind: str,
) -> None:
    gates.prepare(kind)
    iid = gates.park(kind)
    wait = next(w for w in core.store.list_run_waits("r1") if w.status == "parked")
    assert wait.deadline is not None
    clock.current = parse_iso(wait.deadline) - timedelta(seconds=STORED_BEFORE)
    fired: list[dict[str, Any]] = []

    def deadline_passes_during_the_send() -> None:
        fired.append(_fire_deadline(gates, clock, timers))

    tokens.during = deadline_passes_during_the_send
    try:
        result: Any = gates.answer(kind, iid)  # stored; its send takes SEND_SECONDS
    except BatonError as refused:
        result = refused

    assert fired, "the deadline's timer fired while the answer's send was under way"
    ((sent_kind, token, output),) = tokens.sent  # one send reached the task: the stored answer, not a failure
    assert (sent_kind, token) == ("success", wait.task_token), output
    assert DEADLINE_ERROR not in str(output)
    assert not isinstance(result, BatonError), result  # the answer's response says what happened: it was delivered
    assert bool(result.get("resumed", result.get("released"))), result
    ended = core.store.get_wait("r1", wait.gate)
    assert ended is not None and ended.status == "released"
    assert fired[0]["ended"] is False  # the timer delivered what was stored; it timed nothing out
    types = _types(core)
    assert "run_resumed" in types and not {"human_input_timed_out", "interrupt_timed_out", "answer_late"} & set(types)


def test_a_blocking_ask_answered_before_its_deadline_is_read_answered_after_it(
    core: Core, runs: RunService, clock: FixedClock
) -> None:
    asks = AskService(core)
    asked = asks.ask(
        "r2",
        BlockingAskRequest(node="cleanup", question="Drop it?", options=["yes", "no"], timeout_seconds=30),
        caller="a",
    )
    assert asked.expires_at is not None
    clock.current = parse_iso(asked.expires_at) - timedelta(seconds=STORED_BEFORE)
    assert runs.resume(Resume("r2", {"drop": "no"}, caller="alice"))["resumed"] is True
    clock.advance(STORED_BEFORE + SEND_SECONDS)  # the waiter's read comes after the deadline
    read = asks.get("r2", asked.interaction_id)
    assert read.state.status == "answered" and read.state.answer == {"drop": "no"}


def test_an_sdk_interrupt_resumed_before_its_deadline_is_read_resumed_after_it(core: Core, clock: FixedClock) -> None:
    interrupts = InterruptService(core)
    spec = InterruptSpec(session_id="s1", node="confirm", prompt="Deploy?", timeout_ms=30_000)
    interrupt, _ = interrupts.create(spec, caller="agent")
    assert interrupt.expires_at is not None
    clock.current = parse_iso(interrupt.expires_at) - timedelta(seconds=STORED_BEFORE)
    interrupts.resume(interrupt.interaction_id, ResumeInterrupt(input="go"), caller="alice")
    clock.advance(STORED_BEFORE + SEND_SECONDS)
    assert interrupts.sweep() == []  # the sweeper finds nothing to time out
    read = interrupts.get(interrupt.interaction_id)
    assert read.state.status == "answered" and (read.state.answer or {}).get("input") == "go"


@pytest.mark.parametrize("kind", KINDS)
def test_an_unanswered_pause_times_out_at_its_declared_timeout_never_earlier(
    gates: Gates, core: Core, clock: FixedClock, tokens: SlowSendTokens, kind: str
) -> None:
    """Defect 5 of issue 28 (Baton's deadline was the declared timeout minus a grace), on the injected clock:
    Baton's sweep 100 ms before the declared timeout ends nothing; at it, the task fails with DEADLINE_ERROR."""
    gates.prepare(kind)
    gates.park(kind)
    declared = gates.entered + timedelta(seconds=TIMEOUT)
    clock.current = declared - timedelta(seconds=0.1)
    assert gates.reconciler().reconcile()["ended"] == [] and tokens.sent == []
    clock.current = declared
    assert [e["kind"] for e in gates.reconciler().reconcile()["ended"]] == [kind]
    ((sent_kind, _, failure),) = tokens.sent
    assert (sent_kind, failure["error"]) == ("failure", DEADLINE_ERROR)
