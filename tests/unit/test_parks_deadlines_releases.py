"""Issue 17, items 3, 4 and 6, for every gate kind (ask, await, interrupt, review), on in-memory ports
with an injected clock:

* a park invoked twice with the same token (a retried LambdaInvoke) gives one interaction, one
  notification and a gate that still resumes;
* answers at Baton's deadline +/- 100 ms never give a 200 followed by a timeout: before it the answer
  is delivered before Step Functions' own timeout; after it a 410 keeps it as `answer_late`, and the
  reconciler ends the pause with BatonDeadlinePassed;
* a crash after the send (token sent, wait not marked released) leaves the events complete after a
  reconcile.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from baton.adapters.companion_offline import OfflineCompanion
from baton.adapters.git_diff import GitDiffSource
from baton.cli.demo_repo import create_demo_repo
from baton.contracts import AskRequest, ResumeInterrupt
from baton.domain.gate_payloads import ParkPayload
from baton.domain.interrupt_spec import InterruptSpec
from baton.domain.review_decision import ReviewDecision
from baton.errors import GoneError, TaskTokenError
from baton.ids import parse_iso
from baton.services.core import DEADLINE_ERROR, GRACE_SECONDS
from baton.services.interrupts import InterruptService
from baton.services.pauses import Resume
from baton.services.questions import QuestionService
from baton.services.reconciler import Reconciler
from baton.services.review import ReviewService
from tests.fakes import MemoryBuildRecords, MemoryStore, RecordingNotifier, RecordingTaskTokens

if TYPE_CHECKING:
    from baton.services.core import Core
    from baton.services.runs import RunService
    from tests.conftest import FixedClock

TIMEOUT = 60  # the pause's declared timeout (the task's TimeoutSeconds is GRACE_SECONDS more)
KINDS = ("ask", "await", "interrupt", "review")


class _NoRunner:
    def start(self, token: str, request: Any) -> str:
        raise AssertionError("no merge in these tests")


class Gates:
    """One gate of each kind, parked and answered through the services the Lambdas and routes call."""

    def __init__(self, core: Core, runs: RunService, tmp: Path) -> None:
        self.core, self.runs = core, runs
        self.questions = QuestionService(core)
        self.interrupts = InterruptService(core)
        self.review = ReviewService(
            core,
            companion=OfflineCompanion,
            runner=_NoRunner,
            records=MemoryBuildRecords(),
            diffs=GitDiffSource(),
            merge_runner_kind="local",
        )
        self.repo = create_demo_repo(tmp / "repo")
        self.entered = core.clock.now()
        self.question_id = ""

    def prepare(self, kind: str) -> None:
        if kind == "await":
            self.question_id = self.questions.ask("r1", AskRequest(node="draft", question="Ship?"), caller="agent")[
                "interaction_id"
            ]
        if kind == "review":
            self.review.first_turn("r1", self.repo.gate_input(timeout_seconds=TIMEOUT))

    def park(self, kind: str, token: str = "tok-1") -> str:
        """Park as the gate's Lambda does (with the task's entered time); returns the interaction/gate id."""
        if kind == "ask":
            return self.runs.park(
                ParkPayload(
                    run_id="r1",
                    node="approve",
                    token=token,
                    prompt="OK?",
                    timeout_seconds=TIMEOUT,
                    entered_at=self.entered,
                )
            ).interaction_id
        if kind == "await":
            self.questions.park_gate(
                run_id="r1",
                gate="sync",
                token=token,
                timeout_seconds=TIMEOUT,
                from_node="draft",
                entered_at=self.entered,
            )
            return "sync"
        if kind == "interrupt":
            spec = InterruptSpec(session_id="r1", node="confirm", prompt="Deploy?", timeout_ms=TIMEOUT * 1000)
            interrupt, _ = self.interrupts.create(spec, caller="workflow:r1", token=token, entered_at=self.entered)
            return interrupt.interaction_id
        return str(self.review.park("r1", "ship_review", token, self.entered)["interaction_id"])

    def answer(self, kind: str, iid: str) -> dict[str, Any]:
        if kind == "ask":
            return self.runs.resume(Resume("r1", {"ship": True}, caller="alice"))
        if kind == "await":
            return self.questions.answer("r1", self.question_id, "yes", caller="alice")
        if kind == "interrupt":
            return self.interrupts.resume(iid, ResumeInterrupt(input="go"), caller="alice").wire()
        return self.review.act("r1", ReviewDecision(action="request_changes"), caller="alice").model_dump()

    def reconciler(self) -> Reconciler:
        return Reconciler(self.core, runs=self.runs, review=lambda: self.review)


@pytest.fixture
def gates(core: Core, runs: RunService, tmp_path: Path) -> Gates:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    return Gates(core, runs, tmp_path)


def _tokens(core: Core) -> RecordingTaskTokens:
    assert isinstance(core.tokens, RecordingTaskTokens)
    return core.tokens


def _types(core: Core) -> list[str]:
    return [e.type for e in core.store.list_events("r1", limit=1000)]


def _resumed(result: dict[str, Any]) -> bool:
    return bool(result.get("resumed", result.get("released")))


# ---- item 3: idempotent parks ----------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_a_park_retried_with_the_same_token_gives_one_interaction_and_a_resumable_gate(
    gates: Gates, core: Core, kind: str
) -> None:
    gates.prepare(kind)
    before = len(core.store.list_run_interactions("r1"))
    first = gates.park(kind)
    events, notified = _types(core), len(_notifier(core).notifications)
    assert gates.park(kind) == first  # the retry: the same interaction (the same gate)
    assert len(core.store.list_run_interactions("r1")) == before + (0 if kind in ("await", "review") else 1)
    assert _types(core) == events and len(_notifier(core).notifications) == notified  # nothing recorded or sent again
    wait = next(w for w in core.store.list_run_waits("r1") if w.status == "parked")
    assert wait.task_token == "tok-1" and wait.deadline is not None
    assert _resumed(gates.answer(kind, first))  # the operator resumes the one they were told about
    assert [t for _, t, _ in _tokens(core).sent] == ["tok-1"]


@pytest.mark.parametrize("kind", ["ask", "interrupt", "review"])
def test_a_park_retried_after_its_release_does_not_park_the_used_token_again(
    gates: Gates, core: Core, kind: str
) -> None:
    gates.prepare(kind)
    iid = gates.park(kind)
    gates.answer(kind, iid)
    assert gates.park(kind) == iid
    assert all(w.status != "parked" for w in core.store.list_run_waits("r1"))


def test_concurrent_attempts_of_one_ask_park_store_one_interaction(gates: Gates, core: Core) -> None:
    barrier = threading.Barrier(8)
    ids: list[str] = []

    def attempt() -> None:
        barrier.wait()
        ids.append(gates.park("ask"))

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(ids)) == 1 and len(core.store.list_run_interactions("r1", kind="ask")) == 1
    assert _types(core).count("human_input_requested") == 1


def _notifier(core: Core) -> RecordingNotifier:
    assert isinstance(core.notifier, RecordingNotifier)
    return core.notifier


# ---- item 4: one clock decides a deadline ----------------------------------------------------------
def test_the_deadline_starts_at_the_task_entry_and_ends_at_its_declared_timeout(gates: Gates, core: Core) -> None:
    gates.entered = core.clock.now() - timedelta(seconds=10)  # the park Lambda ran 10 s after the task started
    gates.park("ask")
    wait = core.store.get_wait("r1", "approve")
    assert wait is not None and wait.deadline is not None
    assert parse_iso(wait.deadline) == gates.entered + timedelta(seconds=TIMEOUT)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("offset", [-0.1, 0.1])
def test_answers_at_the_deadline_never_get_a_200_and_a_timeout(
    gates: Gates, core: Core, clock: FixedClock, kind: str, offset: float
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
    sfn_timeout = gates.entered + timedelta(seconds=TIMEOUT + GRACE_SECONDS)
    reconciled = gates.reconciler().reconcile()
    sent = _tokens(core).sent
    if result is not None:  # a 200: delivered, before Step Functions' own timer; Baton never fails it
        assert offset < 0 and _resumed(result) and clock.now() < sfn_timeout
        assert [k for k, _, _ in sent] == ["success"] and reconciled["ended"] == []
    else:  # a 410: kept as late, never delivered; Baton ends the pause with its cause
        assert offset > 0 and "answer_late" in _types(core)
        ((sent_kind, _, failure),) = sent
        assert sent_kind == "failure" and failure["cause"]
        assert failure["error"] == DEADLINE_ERROR  # an interrupt too: its Catch takes it as a timeout


def test_the_catch_after_baton_ended_an_ask_lists_what_was_unanswered(gates: Gates, core: Core, clock: Any) -> None:
    iid = gates.park("ask")
    clock.advance(TIMEOUT)
    assert gates.reconciler().reconcile().wire()["ended"] == [{"run_id": "r1", "gate": "approve", "kind": "ask"}]
    assert core.store.get_interaction("r1", iid).state.status == "timed_out"  # type: ignore[union-attr]
    # The gate's Catch (gate_timeout) then records the timeout with the cause and fails the run.
    ended = gates.runs.record_timeout("r1", "approve")
    assert ended["unanswered"] == [iid] and core.store.get_run("r1").status == "failed"  # type: ignore[union-attr]


def test_an_interrupt_without_entered_time_ends_at_its_declared_timeout(core: Core, clock: Any) -> None:
    spec = InterruptSpec(session_id="r2", node="confirm", prompt="Deploy?", timeout_ms=10_000)
    interrupt, _ = InterruptService(core).create(spec, caller="workflow:r2", token="tok-x")
    assert interrupt.expires_at is not None
    assert parse_iso(interrupt.expires_at) == clock.now() + timedelta(seconds=10)


# ---- item 6: every release is recorded ------------------------------------------------------------
class _DiesAfterSend(MemoryStore):
    """The process dies right after the send: the first `release_wait` never happens."""

    armed = False

    def release_wait(self, wait: Any, status: str) -> bool:
        if self.armed:
            type(self).armed = False
            raise SystemExit("killed after the send")
        return super().release_wait(wait, status)


@pytest.mark.parametrize("kind", KINDS)
def test_a_crash_after_the_send_leaves_the_events_complete_after_a_reconcile(
    core: Core, runs: RunService, tmp_path: Path, kind: str
) -> None:
    core.store = _DiesAfterSend()
    runs.start("human_pause", {}, run_id="r1", caller="op")
    gates = Gates(core, runs, tmp_path)
    gates.prepare(kind)
    iid = gates.park(kind)
    _DiesAfterSend.armed = True
    with pytest.raises(SystemExit):
        gates.answer(kind, iid)
    assert [k for k, _, _ in _tokens(core).sent] == ["success"] and "run_resumed" not in _types(core)
    gates.reconciler().reconcile()
    assert _types(core).count("run_resumed") == 1
    assert all(w.status == "released" for w in core.store.list_run_waits("r1"))
    assert len(_tokens(core).sent) == 1  # nothing delivered twice
    gates.reconciler().reconcile()
    assert _types(core).count("run_resumed") == 1


def test_a_task_gone_with_its_execution_succeeded_is_recorded_as_resumed(runs: RunService, core: Core) -> None:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    runs.park(ParkPayload(run_id="r1", node="approve", token="tok-1", prompt="OK?", timeout_seconds=TIMEOUT))
    run = core.store.get_run("r1")
    assert run is not None and run.execution_arn
    core.workflows.status[run.execution_arn] = {"status": "SUCCEEDED"}  # type: ignore[attr-defined]
    _tokens(core).fail_next = TaskTokenError("gone", reason="TaskDoesNotExist")
    assert runs.resume(Resume("r1", {"ship": True}, caller="alice"))["resumed"] is True
    assert _types(core).count("run_resumed") == 1


def test_a_task_gone_with_its_execution_aborted_is_not_a_resume(runs: RunService, core: Core) -> None:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    runs.park(ParkPayload(run_id="r1", node="approve", token="tok-1", prompt="OK?", timeout_seconds=TIMEOUT))
    run = core.store.get_run("r1")
    assert run is not None and run.execution_arn
    core.workflows.status[run.execution_arn] = {"status": "ABORTED"}  # type: ignore[attr-defined]
    _tokens(core).fail_next = TaskTokenError("gone", reason="TaskDoesNotExist")
    assert runs.resume(Resume("r1", {"ship": True}, caller="alice"))["resumed"] is False
    assert "run_resumed" not in _types(core)
    assert core.store.get_wait("r1", "approve").status == "released"  # type: ignore[union-attr]


def test_deadlines_are_iso_utc(gates: Gates, core: Core) -> None:
    gates.park("ask")
    wait = core.store.get_wait("r1", "approve")
    assert wait is not None and wait.deadline is not None and wait.deadline.endswith("Z")
    assert isinstance(parse_iso(wait.deadline), datetime)


# ---- the state machines pass the task's entry and catch Baton's deadline -----------------------------
PARKS = {"${ParkFunctionArn}", "${AwaitGateFunctionArn}", "${InterruptParkFunctionArn}", "${ReviewParkFunctionArn}"}


def _states(states: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for state in states.values():
        found.append(state)
        for nested in (state.get("ItemProcessor") or state.get("Iterator") or {}, *state.get("Branches", [])):
            found += _states(nested.get("States", {}))
    return found


def test_every_parking_task_passes_its_entered_time_and_catches_the_deadline() -> None:
    from baton.workflows.gate_states import TIMEOUT_ERRORS, await_gate_states

    root = Path(__file__).resolve().parents[2] / "statemachines"
    built = {"States": await_gate_states("Sync", gate="sync", timeout_seconds=60, next=None)}
    machines = [json.loads(p.read_text()) for p in sorted(root.glob("*.asl.json"))] + [built]
    parks = [s for m in machines for s in _states(m["States"]) if s.get("Parameters", {}).get("FunctionName") in PARKS]
    assert len(parks) >= 7
    for state in parks:
        assert state["Parameters"]["Payload"]["entered_at.$"] == "$$.State.EnteredTime"
        caught = {e for c in state.get("Catch", []) for e in c["ErrorEquals"]}
        assert set(TIMEOUT_ERRORS) <= caught, state
