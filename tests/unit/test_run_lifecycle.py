"""Item 3 of issue 10: a run's end is recorded when its execution ends, with the execution's own stop
time, once, and published; the read path is only a fallback for a missing event."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from typer.testing import CliRunner

from baton.contracts import EventPage, EventView, RunView
from baton.domain.execution_events import ExecutionEnd, ExecutionStatusChange
from baton.events import RunResumed
from baton.services.lifecycle import record_end
from tests.conftest import WORKFLOW_ARN

if TYPE_CHECKING:
    from baton.models import Event
    from baton.services.core import Core
    from baton.services.runs import RunService
    from tests.conftest import FixedClock

STOP = datetime(2026, 11, 30, 11, 59, 30, 250000, tzinfo=UTC)  # before the clock's "now": not the reading time
STOP_ISO = "2026-11-30T11:59:30.250Z"


def _event(execution_arn: str, name: str, status: str, **detail: Any) -> dict[str, Any]:
    return {
        "version": "0",
        "id": "e1",
        "source": "aws.states",
        "detail-type": "Step Functions Execution Status Change",
        "account": "123456789012",
        "region": "us-east-1",
        "time": "2026-11-30T11:59:30Z",
        "resources": [execution_arn],
        "detail": {
            "executionArn": execution_arn,
            "stateMachineArn": WORKFLOW_ARN,
            "name": name,
            "status": status,
            "startDate": int(STOP.timestamp() * 1000) - 5000,
            "stopDate": int(STOP.timestamp() * 1000),
            "input": json.dumps({"run_id": name, "input": {"notify": ["console", "slack"]}}),
            "output": None,
            **detail,
        },
    }


def _end(event: dict[str, Any]) -> ExecutionEnd:
    end = ExecutionEnd.from_event(ExecutionStatusChange.model_validate(event))
    assert end is not None
    return end


def _end_event(core: Core, run_id: str) -> Event:
    """The run's one end event (the test ids sort apart from time-derived ones, so look it up by type)."""
    (end,) = [e for e in core.store.list_events(run_id) if e.type.startswith("run_") and e.type in _ENDS]
    return end


_ENDS = {"run_succeeded", "run_failed", "run_timed_out", "run_aborted"}


def _started(runs: RunService, run_id: str = "r1") -> str:
    run = runs.start("human_pause", {}, run_id=run_id, caller="op")
    assert run.execution_arn
    return run.execution_arn


def test_an_ended_execution_records_the_end_at_its_stop_time_and_publishes_it(runs: RunService, core: Core) -> None:
    arn = _started(runs)
    recorded = record_end(runs.core, _end(_event(arn, "r1", "SUCCEEDED", output=json.dumps({"answers": {"a": 1}}))))
    assert recorded is True
    run = core.require_run("r1")
    assert run.status == "succeeded" and run.output == {"answers": {"a": 1}}
    assert run.ended_at == STOP_ISO and run.updated_at == STOP_ISO
    end = _end_event(core, "r1")
    assert (end.type, end.at) == ("run_succeeded", STOP_ISO)
    (published,) = core.notifier.notifications  # type: ignore[attr-defined]
    assert (published.event, published.kind, published.run_id) == ("run_succeeded", "run", "r1")
    assert published.channels == ["console", "slack"]  # the run's own notify list
    assert "succeeded" in published.prompt and "Nothing to answer" in published.how_to_answer


@pytest.mark.parametrize(
    ("status", "run_status", "event_type"),
    [
        ("FAILED", "failed", "run_failed"),
        ("TIMED_OUT", "timed_out", "run_timed_out"),
        ("ABORTED", "aborted", "run_aborted"),
    ],
)
def test_every_kind_of_end_is_recorded_with_its_reason(
    runs: RunService, core: Core, status: str, run_status: str, event_type: str
) -> None:
    arn = _started(runs)
    record_end(runs.core, _end(_event(arn, "r1", status, error="Boom", cause="it broke")))
    run = core.require_run("r1")
    assert run.status == run_status and run.reason == "it broke"
    end = _end_event(core, "r1")
    assert end.type == event_type and end.data == {"reason": "it broke"} and end.at == STOP_ISO


def test_a_redelivered_event_records_and_publishes_once(runs: RunService, core: Core) -> None:
    arn = _started(runs)
    event = _end(_event(arn, "r1", "SUCCEEDED"))
    assert record_end(runs.core, event) is True
    assert record_end(runs.core, event) is False
    assert [e.type for e in core.store.list_events("r1")].count("run_succeeded") == 1
    assert len(core.notifier.notifications) == 1  # type: ignore[attr-defined]


def test_a_run_a_gate_already_failed_keeps_its_reason_and_still_gets_its_end_event(
    runs: RunService, core: Core
) -> None:
    arn = _started(runs)
    core.set_run_status("r1", "failed", allowed_from={"running"}, reason="timed out after 5s at node 'approve'")
    record_end(runs.core, _end(_event(arn, "r1", "FAILED", error="HumanInputTimedOut", cause="other text")))
    run = core.require_run("r1")
    assert run.status == "failed" and run.reason == "timed out after 5s at node 'approve'"
    assert run.ended_at == STOP_ISO
    end = _end_event(core, "r1")
    assert end.type == "run_failed" and end.data["reason"] == "timed out after 5s at node 'approve'"


def test_child_executions_and_strangers_are_left_alone(runs: RunService, core: Core) -> None:
    _started(runs)
    child = "arn:aws:states:us-east-1:123456789012:execution:baton-review_gate:r1-ship-review"
    assert record_end(runs.core, _end(_event(child, "r1-ship-review", "SUCCEEDED"))) is False
    stranger = "arn:aws:states:us-east-1:123456789012:execution:other:x"
    assert record_end(runs.core, _end(_event(stranger, "x", "FAILED", input=json.dumps({})))) is False
    assert core.require_run("r1").status == "running"
    assert [e.type for e in core.store.list_events("r1")] == ["run_started"]


def test_a_granted_machine_s_execution_ends_the_external_run_its_input_names(runs: RunService, core: Core) -> None:
    core.ensure_run("ext-1")  # an external run: the user's own machine calls Baton's gates
    arn = "arn:aws:states:us-east-1:123456789012:execution:user-flow:abc123"
    record_end(runs.core, _end(_event(arn, "abc123", "SUCCEEDED", input=json.dumps({"run_id": "ext-1"}))))
    assert core.require_run("ext-1").status == "succeeded"
    assert _end_event(core, "ext-1").type == "run_succeeded"


def test_a_gate_timer_s_end_is_no_run_s_end() -> None:
    # The timer's input names the run it times (statemachines/gate_deadline.asl.json); it must not end it.
    machine = "arn:aws:states:us-east-1:123456789012:stateMachine:baton-ci-gate_deadline"
    arn = "arn:aws:states:us-east-1:123456789012:execution:baton-ci-gate_deadline:t1"
    timer = _event(arn, "t1", "SUCCEEDED", stateMachineArn=machine, input=json.dumps({"run_id": "ext-1"}))
    assert ExecutionEnd.from_event(ExecutionStatusChange.model_validate(timer)) is None


def test_running_is_not_an_end() -> None:
    arn = "arn:aws:states:us-east-1:123456789012:execution:baton-human_pause:r1"
    assert ExecutionEnd.from_event(ExecutionStatusChange.model_validate(_event(arn, "r1", "RUNNING"))) is None


def test_the_read_fallback_stamps_the_stop_time_not_the_reading_time(
    runs: RunService, core: Core, clock: FixedClock
) -> None:
    arn = _started(runs)
    clock.advance(3600)  # read an hour after the execution stopped
    core.workflows.status[arn] = {"status": "SUCCEEDED", "output": {"ok": True}, "stopped_at": STOP.isoformat()}  # type: ignore[attr-defined]
    summary = runs.get("r1")
    assert summary["status"] == "succeeded" and summary["ended_at"] == STOP_ISO
    end = _end_event(core, "r1")
    assert (end.type, end.at) == ("run_succeeded", STOP_ISO)
    # the event arriving afterwards is the same end: nothing is recorded or published twice
    assert record_end(runs.core, _end(_event(arn, "r1", "SUCCEEDED"))) is False
    assert [e.type for e in core.store.list_events("r1")].count("run_succeeded") == 1


def test_the_end_event_sorts_after_what_was_recorded_before_it_even_when_the_stop_came_first(
    runs: RunService, core: Core
) -> None:
    arn = _started(runs)
    core.record("r1", RunResumed(gate="approve", kind="ask"))  # recorded after the send, the stop came before
    record_end(runs.core, _end(_event(arn, "r1", "SUCCEEDED")))
    types = [e.type for e in core.store.list_events("r1")]
    assert types[-2:] == ["run_resumed", "run_succeeded"]  # a cursor at run_resumed still reads the end
    assert core.store.list_events("r1")[-1].at == STOP_ISO


def test_an_end_whose_event_could_not_be_written_is_recorded_by_the_retry(
    runs: RunService, core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    arn = _started(runs)
    end = _end(_event(arn, "r1", "SUCCEEDED"))
    original = core.store.append_event

    def failing(event: Event) -> None:
        raise RuntimeError("throttled")

    monkeypatch.setattr(core.store, "append_event", failing)
    with pytest.raises(RuntimeError):
        record_end(runs.core, end)
    monkeypatch.setattr(core.store, "append_event", original)
    assert record_end(runs.core, end) is True  # EventBridge's retry
    assert _end_event(core, "r1").type == "run_succeeded"


class _FollowClient:
    """The two calls `baton runs events --follow` makes, from a scripted event log."""

    def __init__(self, pages: list[list[str]]) -> None:
        self.pages = pages
        self.reads = 0
        self.polls = 0

    def events(self, run_id: str, after: str | None = None) -> EventPage:
        page = self.pages[self.polls] if self.polls < len(self.pages) else []
        self.polls += 1
        events = [
            EventView(event_id=f"e{self.polls}{n}", run_id=run_id, type=t, at=STOP_ISO, data={})
            for n, t in enumerate(page)
        ]
        return EventPage(events=events, next=events[-1].event_id if events else after)

    def get_run(self, run_id: str) -> RunView:
        self.reads += 1
        return RunView(run_id=run_id, status="running", created_at=STOP_ISO, updated_at=STOP_ISO)


def test_follow_exits_when_the_run_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    from baton.cli import common
    from baton.cli import runs as runs_cli
    from baton.cli.main import app

    client = _FollowClient([["run_started", "run_paused"], [], ["run_resumed"], ["run_failed"], ["answer_late"]])
    monkeypatch.setattr(common, "client", lambda: client)
    monkeypatch.setattr(runs_cli, "FOLLOW_POLL_SECONDS", 0.0)
    result = CliRunner().invoke(app, ["runs", "events", "r1", "--follow", "--json"])
    assert result.exit_code == 1, result.output  # the run's final status (failed) is the exit code (issue 16)
    printed = [json.loads(line)["type"] for line in result.output.splitlines()]
    assert printed == ["run_started", "run_paused", "run_resumed", "run_failed"]
    assert client.polls == 4  # stopped at the end event, did not poll on


def test_follow_reads_the_run_while_idle_so_a_missing_end_event_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    from baton.cli import common
    from baton.cli import runs as runs_cli
    from baton.cli.main import app

    idle = runs_cli.FOLLOW_STATUS_EVERY
    client = _FollowClient([["run_started"], *([[]] * idle), ["run_succeeded"]])
    monkeypatch.setattr(common, "client", lambda: client)
    monkeypatch.setattr(runs_cli, "FOLLOW_POLL_SECONDS", 0.0)
    result = CliRunner().invoke(app, ["runs", "events", "r1", "-f", "--json"])
    assert result.exit_code == 0, result.output
    assert client.reads == 1


def test_follow_ends_with_a_run_that_ended_even_if_its_end_event_sorts_before_the_cursor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from baton.cli import common
    from baton.cli import runs as runs_cli
    from baton.cli.main import app

    class _Ended(_FollowClient):
        def get_run(self, run_id: str) -> RunView:
            self.reads += 1
            return RunView(run_id=run_id, status="succeeded", created_at=STOP_ISO, updated_at=STOP_ISO)

    client = _Ended([["run_started"]])
    monkeypatch.setattr(common, "client", lambda: client)
    monkeypatch.setattr(runs_cli, "FOLLOW_POLL_SECONDS", 0.0)
    result = CliRunner().invoke(app, ["runs", "events", "r1", "-f", "--json"])
    assert result.exit_code == 0, result.output
    assert client.reads == 1 and client.polls == runs_cli.FOLLOW_STATUS_EVERY + 2
