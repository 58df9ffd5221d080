"""Shared test helpers: a controllable clock and in-memory wiring of the domain."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from baton.services.core import Core
from baton.services.runs import RunService
from baton.workflows.resources import WORKFLOW_DEFAULTS
from tests.fakes import FakeWorkflows, MemoryStore, RecordingNotifier, RecordingTaskTokens


class FixedClock:
    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)


class CountingIds:
    def __init__(self) -> None:
        self.n = 0

    def new_id(self) -> str:
        self.n += 1
        return f"01TEST{self.n:020d}"


def wait_for(predicate: Any, timeout: float = 15.0, interval: float = 0.05) -> Any:
    """Poll `predicate` until it returns something truthy (returned); fail after `timeout` seconds.
    For things that happen in other threads or processes (executions, the local stack)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"condition not reached in {timeout}s (last: {last!r})")


WORKFLOW_ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:baton-human_pause"
INFRA_UNIT = "tests/infra"


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook (xdist/newhooks.py)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile` (`make test`) hands one test file at a time to an xdist worker (so a module's
    fixtures, such as its own local stack, start once), except that tests/infra/ is handed out as ONE
    unit: its session fixture (tests/infra/conftest.py) synthesizes the CDK app and starts cfn-lint, the
    largest set-up of the suite, which so runs on one worker instead of on each. (An `xdist_group` mark
    would say the same, but xdist 3.8's loadgroup cannot rename the node ids of pytest 9.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class InfraAsOneUnit(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return INFRA_UNIT if nodeid.startswith(f"{INFRA_UNIT}/") else str(super()._split_scope(nodeid))

    return InfraAsOneUnit(config, log)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def core(clock: FixedClock) -> Core:
    return Core(
        store=MemoryStore(),
        tokens=RecordingTaskTokens(),
        workflows=FakeWorkflows(),
        notifier=RecordingNotifier(),
        workflow_arns={"human_pause": WORKFLOW_ARN},
        clock=clock,
        ids=CountingIds(),
    )


@pytest.fixture
def runs(core: Core) -> RunService:
    return RunService(core, input_defaults=WORKFLOW_DEFAULTS)
