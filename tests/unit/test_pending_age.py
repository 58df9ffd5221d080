"""The pending-age signals (baton.runtime.parked_age): per kind of pause, the count pending and the age of
the oldest, from the pending index; one EMF line per kind (dimensions service, kind) for the alarms."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest

from baton.contracts import AskRequest
from baton.contracts.inbox import INBOX_KINDS
from baton.domain.interrupt_spec import InterruptSpec
from baton.models import InteractionKind
from baton.runtime.parked_age import (
    METRIC_OLDEST_PENDING_AGE,
    METRIC_PENDING_COUNT,
    PENDING_KINDS,
    pending_ages,
    publish_pending,
)
from baton.services.core import Core
from baton.services.interrupts import InterruptService
from baton.services.questions import QuestionService
from tests.conftest import FixedClock


def test_every_kind_of_pause_is_watched() -> None:
    """A kind missing here raises no alarm and is missing from the dashboard (tool approvals were)."""
    assert PENDING_KINDS == get_args(InteractionKind) == INBOX_KINDS


def _by_kind(core: Core, clock: FixedClock) -> dict[str, tuple[int, int, str | None]]:
    return {a.kind: (a.count, a.oldest_age_seconds, a.oldest_run_id) for a in pending_ages(core.store, clock.now())}


def test_ages_per_kind_follow_what_is_pending(core: Core, clock: FixedClock) -> None:
    assert _by_kind(core, clock) == {kind: (0, 0, None) for kind in PENDING_KINDS}
    questions, interrupts = QuestionService(core), InterruptService(core)
    first = questions.ask("r-old", AskRequest(node="plan", question="Which?"), caller="agent")
    clock.advance(300)
    questions.ask("r-new", AskRequest(node="plan", question="Which now?"), caller="agent")
    interrupts.create(InterruptSpec(session_id="s-1", prompt="Ship?"), caller="agent")
    clock.advance(60)
    ages = _by_kind(core, clock)
    assert ages["question"] == (2, 360, "r-old") and ages["interrupt"] == (1, 60, "s-1")
    assert ages["review"] == (0, 0, None)
    questions.answer("r-old", first["interaction_id"], "this one", caller="alice")
    assert _by_kind(core, clock)["question"] == (1, 60, "r-new")  # answered: no longer the oldest
    assert next(a for a in pending_ages(core.store, clock.now()) if a.kind == "question").text() == (
        "question: 1 pending, oldest 60s (run r-new)"
    )


def test_publish_writes_one_emf_line_per_kind(
    core: Core, clock: FixedClock, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "Baton/ci")
    QuestionService(core).ask("r1", AskRequest(node="plan", question="Which?"), caller="agent")
    clock.advance(90)
    publish_pending(pending_ages(core.store, clock.now()))
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert [line["kind"] for line in lines] == list(PENDING_KINDS)
    for line in lines:
        (directive,) = line["_aws"]["CloudWatchMetrics"]
        assert directive["Namespace"] == "Baton/ci" and line["service"] == "baton"
        assert sorted(directive["Dimensions"][0]) == ["kind", "service"]
        assert {m["Name"] for m in directive["Metrics"]} == {METRIC_OLDEST_PENDING_AGE, METRIC_PENDING_COUNT}
    question = next(line for line in lines if line["kind"] == "question")
    assert question[METRIC_OLDEST_PENDING_AGE] in ([90.0], 90.0) and question[METRIC_PENDING_COUNT] in ([1.0], 1.0)
    review = next(line for line in lines if line["kind"] == "review")
    assert review[METRIC_PENDING_COUNT] in ([0.0], 0.0)
