"""The oldest-parked-gate metric the reconcile Lambda publishes (baton.runtime.parked_age)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from baton.domain.gate_payloads import ParkPayload
from baton.runtime.parked_age import METRIC_OLDEST_AGE, METRIC_PARKED_COUNT, parked_age, publish
from baton.services.core import Core
from baton.services.pauses import Resume
from baton.services.runs import RunService
from tests.conftest import FixedClock


def test_nothing_parked_is_zero(core: Core, clock: FixedClock) -> None:
    age = parked_age(core.store, clock.now())
    assert (age.count, age.oldest_age_seconds, age.oldest_run_id) == (0, 0, None)


def test_age_of_the_oldest_parked_gate(runs: RunService, core: Core, clock: FixedClock) -> None:
    runs.park(ParkPayload(run_id="r-old", node="approve", token="t1", prompt="Ship?", timeout_seconds=86400))
    clock.advance(600)
    runs.park(ParkPayload(run_id="r-new", node="approve", token="t2", prompt="Ship?", timeout_seconds=86400))
    clock.advance(60)
    age = parked_age(core.store, clock.now())
    assert age.count == 2
    assert age.oldest_age_seconds == 660
    assert (age.oldest_run_id, age.oldest_gate) == ("r-old", "approve")

    runs.resume(Resume("r-old", {"ok": True}, caller="alice"))
    age = parked_age(core.store, clock.now())
    assert (age.count, age.oldest_age_seconds, age.oldest_run_id) == (1, 60, "r-new")


def test_publish_writes_one_emf_line(
    runs: RunService, core: Core, clock: FixedClock, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "Baton/ci")
    runs.park(ParkPayload(run_id="r1", node="approve", token="t1", prompt="Ship?", timeout_seconds=86400))
    clock.advance(90)
    publish(parked_age(core.store, clock.now()))
    (line,) = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    (directive,) = line["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == "Baton/ci"
    assert directive["Dimensions"] == [["service"]]
    assert line["service"] == "baton"
    assert {m["Name"] for m in directive["Metrics"]} == {METRIC_OLDEST_AGE, METRIC_PARKED_COUNT}
    assert line[METRIC_OLDEST_AGE] in ([90.0], 90.0)
    assert line[METRIC_PARKED_COUNT] in ([1.0], 1.0)
