from __future__ import annotations

import threading

import pytest

from baton.api.routes_runs import StartRunRequest
from baton.domain.gate_payloads import ParkPayload
from baton.errors import (
    BadRequestError,
    ConflictError,
    GoneError,
    NotFoundError,
    PayloadTooLargeError,
    TaskTokenError,
    ValidationFailedError,
)
from baton.services.core import Core
from baton.services.pauses import Resume
from baton.services.runs import RunService
from tests.conftest import FixedClock


def _park(runs: RunService, run_id: str = "r1", token: str = "tok-1", timeout: int = 60) -> str:
    return runs.park(
        ParkPayload(run_id=run_id, node="approve", token=token, prompt="Ship it?", timeout_seconds=timeout)
    ).interaction_id


def test_start_merges_defaults_and_starts_an_execution(runs: RunService, core: Core) -> None:
    run = runs.start("human_pause", {"prompt": "Deploy?"}, run_id="r1", caller="op")
    assert run.status == "running" and run.hosted and run.execution_arn
    ((_, run_id, payload),) = core.workflows.started  # type: ignore[attr-defined]
    assert run_id == "r1"
    assert payload["input"]["prompt"] == "Deploy?"
    assert payload["input"]["timeout_seconds"] == 3600  # the workflow default
    assert [e.type for e in core.store.list_events("r1")] == ["run_started"]


def test_start_rejects_bad_input_and_changes_nothing(runs: RunService, core: Core) -> None:
    with pytest.raises(NotFoundError, match="unknown workflow"):
        runs.start("nope", {}, run_id="r1", caller="op")
    with pytest.raises(BadRequestError, match="run_id"):  # the request model is the door for run ids
        StartRunRequest(workflow="human_pause", run_id="bad id!")
    with pytest.raises(PayloadTooLargeError):
        runs.start("human_pause", {"blob": "x" * 40_000}, run_id="r1", caller="op")
    assert core.store.get_run("r1") is None
    assert core.workflows.started == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("bad", [0, -5, "abc", 1.5, True, 10**9])
def test_start_refuses_timeouts_step_functions_would_refuse(runs: RunService, core: Core, bad: object) -> None:
    with pytest.raises(ValidationFailedError, match=r"input\.timeout_seconds"):
        runs.start("human_pause", {"timeout_seconds": bad}, run_id="r1", caller="op")
    with pytest.raises(ValidationFailedError, match=r"input\.review\.merge_timeout_seconds"):
        runs.start("human_pause", {"review": {"merge_timeout_seconds": bad}}, run_id="r1", caller="op")
    assert core.store.get_run("r1") is None


def test_duplicate_run_id_is_a_conflict(runs: RunService) -> None:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    with pytest.raises(ConflictError):
        runs.start("human_pause", {}, run_id="r1", caller="op")


def test_park_records_interaction_wait_status_and_events(runs: RunService, core: Core) -> None:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    iid = _park(runs)
    assert core.store.get_run("r1").status == "paused_waiting_human"  # type: ignore[union-attr]
    wait = core.store.get_wait("r1", "approve")
    assert wait is not None and wait.task_token == "tok-1" and wait.interaction_ids == [iid]
    interaction = core.store.get_interaction("r1", iid)
    assert interaction is not None and interaction.state.status == "pending"
    assert interaction.expires_at == "2026-11-30T12:01:00.000Z"  # the declared 60 s timeout (issue 28 defect 5)
    types = [e.type for e in core.store.list_events("r1")]
    assert types == ["run_started", "human_input_requested", "run_paused"]
    (note,) = core.notifier.notifications  # type: ignore[attr-defined]
    assert note.interaction_id == iid and note.kind == "ask"


def test_resume_stores_answer_then_sends_token_once(runs: RunService, core: Core) -> None:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    iid = _park(runs)
    result = runs.resume(Resume("r1", {"ship": True}, caller="alice"))
    assert result.model_dump(exclude_unset=True) == {
        "interaction_id": iid,
        "node": "approve",
        "queued": True,
        "resumed": True,
        "delivery": "delivered",
    }
    ((kind, token, output),) = core.tokens.sent  # type: ignore[attr-defined]
    assert (kind, token) == ("success", "tok-1")
    assert output["answers"] == {"ship": True} and output["answered_by"] == "alice"
    assert core.store.get_run("r1").status == "running"  # type: ignore[union-attr]
    with pytest.raises(ConflictError) as second:
        runs.resume(Resume("r1", {"ship": False}, caller="bob"))
    assert second.value.details["interaction"]["answer"] == {"ship": True}
    assert len(core.tokens.sent) == 1  # type: ignore[attr-defined]


def test_failed_send_loses_nothing_and_a_retry_resumes(runs: RunService, core: Core) -> None:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    iid = _park(runs)
    core.tokens.fail_next = RuntimeError("network down")  # type: ignore[attr-defined]
    pending = runs.resume(Resume("r1", {"ship": True}, caller="alice"))  # stored, its send pending: not an error
    assert (pending["resumed"], pending["delivery"]) == (False, "pending")
    stored = core.store.get_interaction("r1", iid)
    assert stored is not None and stored.state.status == "answered"
    assert core.store.get_wait("r1", "approve").status == "parked"  # type: ignore[union-attr]
    again = runs.resume(Resume("r1", {"ship": True}, caller="alice"))
    assert again["resumed"] is True
    assert core.store.get_wait("r1", "approve").status == "released"  # type: ignore[union-attr]


def test_resume_after_gate_timed_out_is_gone(runs: RunService, core: Core, clock: FixedClock) -> None:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    _park(runs, timeout=60)
    clock.advance(61)
    core.tokens.fail_next = TaskTokenError("late", reason="TaskTimedOut")  # type: ignore[attr-defined]
    with pytest.raises(GoneError, match="deadline"):
        runs.resume(Resume("r1", {"ship": True}, caller="alice"))
    # Past Baton's deadline the answer is not accepted (issue 17: one clock): kept as a late answer only.
    assert core.store.get_interaction("r1", core.store.get_wait("r1", "approve").interaction_ids[0]).state.status == (  # type: ignore[union-attr]
        "pending"
    )
    late = [e for e in core.store.list_events("r1") if e.type == "answer_late"]
    assert len(late) == 1 and late[0].data["answer"] == {"ship": True} and late[0].data["by"] == "alice"


def test_task_timed_out_before_the_deadline_means_a_twin_closed_it(
    runs: RunService, core: Core, clock: FixedClock
) -> None:
    # AWS also says TaskTimedOut for a token another sender already closed: not a 410 then. Since
    # issue 17 (every release recorded) the closed token before the deadline completes the bookkeeping
    # the other sender may never finish: the wait released and one run_resumed.
    runs.start("human_pause", {}, run_id="r1", caller="op")
    _park(runs, timeout=60)
    clock.advance(5)
    core.tokens.fail_next = TaskTokenError("closed", reason="TaskTimedOut")  # type: ignore[attr-defined]
    result = runs.resume(Resume("r1", {"ship": True}, caller="alice"))
    assert result["resumed"] is True
    assert core.store.get_wait("r1", "approve").status == "released"  # type: ignore[union-attr]
    assert [e.type for e in core.store.list_events("r1")].count("run_resumed") == 1


def test_resume_of_unknown_or_idle_run(runs: RunService) -> None:
    with pytest.raises(NotFoundError):
        runs.resume(Resume("ghost", {"a": 1}, caller="op"))
    runs.start("human_pause", {}, run_id="r1", caller="op")
    with pytest.raises(ConflictError, match="not waiting"):
        runs.resume(Resume("r1", {"a": 1}, caller="op"))


def test_timeout_marks_interaction_and_run_with_a_cause(runs: RunService, core: Core, clock: FixedClock) -> None:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    iid = _park(runs, timeout=5)
    clock.advance(5)
    result = runs.record_timeout("r1", "approve")
    assert result["unanswered"] == [iid]
    assert "timed out after 5s" in result["cause"] and iid in result["cause"] and "Ship it?" in result["cause"]
    run = core.store.get_run("r1")
    assert run is not None and run.status == "failed" and run.reason == result["cause"]
    assert core.store.get_interaction("r1", iid).state.status == "timed_out"  # type: ignore[union-attr]
    with pytest.raises(GoneError):
        runs.resume(Resume("r1", {"late": True}, caller="op"))


def test_racing_resumes_exactly_one_wins(runs: RunService, core: Core) -> None:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    _park(runs)
    outcomes: list[str] = []
    barrier = threading.Barrier(10)

    def attempt(n: int) -> None:
        barrier.wait()
        try:
            runs.resume(Resume("r1", {"who": n}, caller=f"op{n}"))
            outcomes.append("won")
        except ConflictError:
            outcomes.append("409")

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["409"] * 9 + ["won"]
    assert len(core.tokens.sent) == 1  # type: ignore[attr-defined]


def test_refresh_folds_the_execution_outcome_into_the_run(runs: RunService, core: Core) -> None:
    run = runs.start("human_pause", {}, run_id="r1", caller="op")
    core.workflows.status[run.execution_arn] = {"status": "SUCCEEDED", "output": {"answers": {"a": 1}}}  # type: ignore[attr-defined,index]
    summary = runs.get("r1")
    assert summary["status"] == "succeeded" and summary["output"] == {"answers": {"a": 1}}
    assert core.store.list_events("r1")[-1].type == "run_succeeded"
