"""Item 5 of issue 10: the blocking ask (`ask_user`) for agents that are not workflows, on the service,
the SDK's bounded waiter and the CLI's listing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from baton.client.asks import AskTimeoutError, wait_for_ask
from baton.contracts import BlockingAskRequest, BlockingAskView
from baton.errors import ConflictError, GoneError, NotFoundError
from baton.services.asks import AskService
from baton.services.pauses import Resume

if TYPE_CHECKING:
    from baton.services.core import Core
    from baton.services.runs import RunService
    from tests.conftest import FixedClock


def _ask(core: Core, timeout: int = 60) -> str:
    asked = AskService(core).ask(
        "agent-1",
        BlockingAskRequest(
            node="cleanup", question="Drop the users table?", options=["yes", "no"], timeout_seconds=timeout
        ),
        caller="agent",
    )
    return asked.interaction_id


def test_a_blocking_ask_pauses_the_run_notifies_and_is_answered_by_resume(core: Core, runs: RunService) -> None:
    iid = _ask(core)
    assert core.require_run("agent-1").status == "paused_waiting_human"
    (note,) = core.notifier.notifications  # type: ignore[attr-defined]
    assert note.kind == "ask" and "baton resume --run-id agent-1" in note.how_to_answer
    view = BlockingAskView.of(AskService(core).get("agent-1", iid))
    assert view.status == "pending" and view.options == ["yes", "no"]
    assert [a.interaction_id for a in AskService(core).pending("agent-1")] == [iid]

    result = runs.resume(Resume("agent-1", {"drop": "no"}, caller="alice"))
    assert result["resumed"] is True  # the agent's waiter reads it: no token to send
    answered = AskService(core).get("agent-1", iid)
    assert answered.state.status == "answered" and answered.state.answer == {"drop": "no"}
    assert core.require_run("agent-1").status == "running"
    assert [e.type for e in core.store.list_events("agent-1")][-2:] == ["interaction_answered", "run_resumed"]
    with pytest.raises(ConflictError) as second:
        runs.resume(Resume("agent-1", {"drop": "yes"}, caller="bob"))
    assert second.value.details["winner"]["value"] == {"drop": "no"}
    assert AskService(core).pending("agent-1") == []


def test_an_unanswered_ask_ends_at_its_deadline_and_a_late_answer_is_a_410(
    core: Core, runs: RunService, clock: FixedClock
) -> None:
    iid = _ask(core, timeout=30)
    clock.advance(31)
    ended = AskService(core).get("agent-1", iid)
    assert ended.state.status == "timed_out"
    assert "human_input_timed_out" in [e.type for e in core.store.list_events("agent-1")]
    with pytest.raises(GoneError):
        runs.resume(Resume("agent-1", {"drop": "yes"}, caller="alice"))
    assert "answer_late" in [e.type for e in core.store.list_events("agent-1")]


def test_the_long_poll_returns_when_answered_and_is_bounded(core: Core, runs: RunService) -> None:
    naps: list[float] = []
    now = [0.0]

    def sleep(seconds: float) -> None:
        naps.append(seconds)
        now[0] += seconds
        if len(naps) == 3:
            runs.resume(Resume("agent-1", {"drop": "no"}, caller="alice"))

    service = AskService(core, sleep=sleep, monotonic=lambda: now[0])
    iid = _ask(core)
    assert service.get("agent-1", iid, wait_seconds=20).state.status == "answered"
    assert sum(naps) < 20 and all(n <= 2.0 for n in naps)
    other = _ask(core)
    now[0], naps[:] = 0.0, [0.0] * 4  # no more answers: the wait ends at its bound, still pending
    assert service.get("agent-1", other, wait_seconds=100).state.status == "pending"
    assert now[0] == pytest.approx(20.0)


def test_the_long_poll_wakes_at_the_deadline_and_ends_the_ask_on_time(core: Core, clock: FixedClock) -> None:
    """As an interrupt's: the read just past the deadline ends it, not the next backoff step's."""
    naps: list[float] = []

    def sleep(seconds: float) -> None:
        naps.append(seconds)
        clock.advance(seconds)

    iid = _ask(core, timeout=3)
    service = AskService(core, sleep=sleep, monotonic=lambda: sum(naps))
    assert service.get("agent-1", iid, wait_seconds=20).state.status == "timed_out"
    assert naps == [0.5, 1.0, pytest.approx(1.501)]  # the backoff's third step would have been 2 s


def test_an_unknown_ask_is_a_404(core: Core) -> None:
    core.ensure_run("agent-1")
    with pytest.raises(NotFoundError):
        AskService(core).get("agent-1", "01NOPE")


def _view(status: str, **extra: object) -> BlockingAskView:
    return BlockingAskView.model_validate(
        {
            "interaction_id": "i1",
            "run_id": "agent-1",
            "node": "cleanup",
            "question": "Drop?",
            "status": status,
            "created_at": "2026-11-30T12:00:00.000Z",
            "expires_at": "2026-11-30T12:01:00.000Z",
            "how_to_answer": "baton resume",
            **extra,
        }
    )


def test_the_sdk_waiter_returns_the_answer_and_raises_at_the_deadline() -> None:
    polls = iter([_view("pending"), _view("answered", answers={"drop": "no"}, answered_by="alice")])
    slept: list[float] = []
    clock = iter(range(0, 1000, 6))  # each poll "takes" 6 s: no idle sleep needed
    done = wait_for_ask(lambda wait: next(polls), sleep=slept.append, monotonic=lambda: float(next(clock)))
    assert done.answers == {"drop": "no"} and slept == []
    with pytest.raises(AskTimeoutError):
        wait_for_ask(lambda wait: _view("timed_out"), sleep=slept.append)
