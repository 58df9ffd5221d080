"""What a write settled (baton.runtime.answer_times.settled): only a pending item answered or timed out
counts; a person's answer has its seconds and its deadline met, a default or a timeout a deadline missed."""

from __future__ import annotations

from baton.domain.ladder import TIMED_OUT_DEFAULT
from baton.models import Interaction, InteractionState, InteractionStatus, QuestionRequest, status_of
from baton.runtime.answer_times import Settled, settled

CREATED, DEADLINE = "2026-01-01T00:00:00.000Z", "2026-01-01T01:00:00.000Z"


def _item(expires_at: str | None = DEADLINE, status: InteractionStatus | None = None) -> Interaction:
    return Interaction(
        interaction_id="q1",
        run_id="r1",
        created_at=CREATED,
        expires_at=expires_at,
        request=QuestionRequest(node="draft", prompt="Ship?"),
        state=status or InteractionStatus(),
    )


def _to(
    before: Interaction, state: InteractionState, *, at: str | None = None, reason: str | None = None
) -> Interaction:
    new = status_of(before.state, state, answer="yes", by="alice", at=at, reason=reason)
    return before.model_copy(update={"state": new})


def test_a_persons_answer_has_its_seconds_and_its_deadline() -> None:
    pending = _item()
    answered = _to(pending, "answered", at="2026-01-01T00:01:30.000Z")
    assert settled(pending, answered) == Settled(kind="question", answer_seconds=90, deadline_met=True)
    no_deadline = _item(expires_at=None)
    assert settled(no_deadline, _to(no_deadline, "answered", at="2026-01-01T00:00:05.000Z")) == Settled(
        kind="question", answer_seconds=5, deadline_met=None
    )


def test_a_default_or_a_timeout_is_a_deadline_missed_with_no_answer_time() -> None:
    pending = _item()
    missed = Settled(kind="question", answer_seconds=None, deadline_met=False)
    assert settled(pending, _to(pending, "answered", at=DEADLINE, reason=TIMED_OUT_DEFAULT)) == missed
    assert settled(pending, _to(pending, "timed_out", reason="timeout")) == missed


def test_writes_that_end_nobodys_wait_settle_nothing() -> None:
    pending = _item()
    answered = _to(pending, "answered", at="2026-01-01T00:01:30.000Z")
    assert settled(pending, pending) is None  # a claim: still pending
    assert settled(pending, _to(pending, "cancelled", reason="run_stopped")) is None  # a run's stop
    assert settled(answered, answered) is None  # a consumed approval, a revoked grant: answered before


def test_an_answer_a_rule_or_a_grant_gave_is_nobodys_wait() -> None:
    pending = _item()
    for by in ("policy:allow-reads", "grant:g-1"):
        new = status_of(pending.state, "answered", answer="yes", by=by, at="2026-01-01T00:00:00.000Z")
        assert settled(pending, pending.model_copy(update={"state": new})) is None
