"""Shared test helpers: a controllable clock and in-memory wiring of the domain."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from baton.local.in_process import shared_botocore_loader
from baton.services.core import Core
from baton.services.runs import RunService
from baton.workflows.resources import WORKFLOW_DEFAULTS
from tests.call_recorder import install_from_env
from tests.fakes import FakeWorkflows, MemoryStore, RecordingNotifier, RecordingTaskTokens

_RECORD_CALLS = str(Path(__file__).resolve().parent / "record_calls")
if install_from_env() and _RECORD_CALLS not in os.environ.get("PYTHONPATH", ""):
    # and in every Python process started from here (xdist's workers, each `baton dev`)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (_RECORD_CALLS, os.environ.get("PYTHONPATH"))))


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
# Folders whose tests share no set-up beyond a test's own (no module or session fixture: their stacks are
# function-scoped), so `make test` hands out each test alone: the two workers end within a test of each
# other instead of one of them running a whole big file at the end.
PER_TEST = ("tests/unit/", "tests/integration/", "tests/synth/")
# The order units are handed out, costliest kinds first (their wall time in a `--durations` run): the CDK
# synth and cfn-lint; the quick bench (one test of a minute or more, which by its size would go out last
# of the e2e files and could end the run alone on one worker); then each file with its own `baton dev`,
# then the moto stacks, then the pure tests. tests/synth/ (a CDK synth per deployment option, ~5-10 s each) goes
# out early, one test at a time (PER_TEST), so its synths spread over the workers.
BENCH_UNIT = "tests/e2e/test_bench_quick.py"
HANDED_OUT_FIRST = (
    INFRA_UNIT,
    BENCH_UNIT,
    "tests/synth/",
    "tests/browser/",
    "tests/e2e/",
    "tests/integration/",
    "tests/unit/",
)


def _rank(unit: str, size: int) -> tuple[int, int]:
    kind = next((n for n, prefix in enumerate(HANDED_OUT_FIRST) if unit.startswith(prefix)), len(HANDED_OUT_FIRST))
    return kind, -size


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook (xdist/newhooks.py)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile` (`make test`) hands one test file at a time to an xdist worker (so a module's
    fixtures, such as its own local stack, start once), except that tests/infra/ is handed out as ONE
    unit: its session fixture (tests/infra/conftest.py) synthesizes the CDK app and starts cfn-lint, the
    largest set-up of the suite, which so runs on one worker instead of on each; and the tests under
    PER_TEST are handed out one by one. Units go out in HANDED_OUT_FIRST's order, not xdist's (most tests
    first, which put every end-to-end file, a few slow tests each, at the end of the run on one worker).
    (An `xdist_group` mark would say the same, but xdist 3.8's loadgroup cannot rename the node ids of
    pytest 9.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class CostlyFirst(LoadFileScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(PER_TEST):
                return nodeid
            return INFRA_UNIT if nodeid.startswith(f"{INFRA_UNIT}/") else str(super()._split_scope(nodeid))

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the first assignment: the queue is complete, sort it once
                units = sorted(self.workqueue.items(), key=lambda unit: _rank(unit[0], len(unit[1])))
                self.workqueue.clear()
                self.workqueue.update(units)
                self.ordered = True
            super()._assign_work_unit(node)

    return CostlyFirst(config, log)


@pytest.fixture(scope="session", autouse=True)
def _one_botocore_loader() -> Iterator[None]:
    """Each `mock_aws` starts with no boto3 default session (moto patches `boto3.DEFAULT_SESSION` to None), so
    every test that makes clients makes a new botocore session, whose new loader parses each service
    model and the endpoint list again: most of the CPU of a moto stack's set-up. The worker's sessions
    share one loader instead, as `baton dev`'s do (layers/baton/python/baton/local/in_process.py; the parsed models are
    read-only to botocore). Moto's backends, and so each test's isolation, are untouched."""
    with shared_botocore_loader():
        yield


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
