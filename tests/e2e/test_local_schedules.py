"""The local stack runs the deployment's scheduled functions (reconciler, interrupt sweeper) itself."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.local.stack import LocalStack
from baton.workflows.resources import FUNCTIONS, schedule_seconds
from tests.conftest import wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture
def restore_environ() -> Iterator[None]:
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def test_schedule_expressions() -> None:
    assert schedule_seconds("rate(1 minute)") == 60
    assert schedule_seconds("rate(5 minutes)") == 300
    assert schedule_seconds("rate(30 seconds)") == 30
    with pytest.raises(ValueError, match="rate"):
        schedule_seconds("cron(0 12 * * ? *)")
    scheduled = {spec.name for spec in FUNCTIONS if spec.schedule}
    assert {"reconcile", "interrupt_sweeper"} <= scheduled


def test_scheduled_functions_run_in_the_local_stack(tmp_path: Path, restore_environ: None) -> None:
    stack = LocalStack(api_port=0, state_dir=tmp_path)
    stack.schedule_overrides = {"reconcile": 0.3, "interrupt_sweeper": 0.3}
    stack.start()
    try:
        wait_for(lambda: stack.dispatcher.invocations["reconcile"] >= 2, timeout=20)
        wait_for(lambda: stack.dispatcher.invocations["interrupt_sweeper"] >= 2, timeout=20)
        event = {"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}}
        for name in ("reconcile", "interrupt_sweeper"):
            payload, errored = stack.dispatcher.invoke(name, event)
            assert not errored, payload
    finally:
        stack.stop()
