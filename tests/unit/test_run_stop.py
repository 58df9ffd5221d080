"""Stopping a hosted run (baton.services.run_stop) on the fakes: the end is recorded before the call
returns, with who stopped it; what cannot be stopped is a 409 that changes nothing."""

from __future__ import annotations

import pytest

from baton.errors import ConflictError, NotFoundError
from baton.services.core import Core
from baton.services.run_stop import STOP_ERROR, stop_run
from baton.services.runs import RunService


def test_stop_records_run_aborted_at_once_with_who_and_why(runs: RunService, core: Core) -> None:
    run = runs.start("human_pause", {"prompt": "Deploy?"}, run_id="r1", caller="op")
    stopped = stop_run(core, runs, "r1", caller="alice", reason="wrong branch")
    assert stopped.status == "aborted" and stopped.reason == "stopped by alice: wrong branch"
    assert stopped.ended_at
    described = core.workflows.describe(run.execution_arn or "")
    assert described["status"] == "ABORTED" and described["error"] == STOP_ERROR
    ends = [e for e in core.store.list_events("r1") if e.type == "run_aborted"]
    assert [e.data["reason"] for e in ends] == ["stopped by alice: wrong branch"]


def test_what_cannot_be_stopped_is_a_409_or_404_and_changes_nothing(runs: RunService, core: Core) -> None:
    with pytest.raises(NotFoundError):
        stop_run(core, runs, "ghost", caller="alice", reason=None)
    core.ensure_run("ext-1")  # an agent's own run: no execution behind it
    with pytest.raises(ConflictError, match="not a hosted run"):
        stop_run(core, runs, "ext-1", caller="alice", reason=None)
    runs.start("human_pause", {}, run_id="r2", caller="op")
    stop_run(core, runs, "r2", caller="alice", reason=None)
    events = core.store.list_events("r2")
    with pytest.raises(ConflictError, match=r"already ended \(aborted\)"):
        stop_run(core, runs, "r2", caller="bob", reason="again")
    assert core.store.list_events("r2") == events
    assert core.require_run("r2").reason == "stopped by alice"
