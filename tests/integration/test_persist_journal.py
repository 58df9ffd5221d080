"""The local stack's journal follows writes, not history: an answer appends the same lines, the same items
and (ids and timestamps being of fixed length) the same bytes in a run with no history as in one with
hundreds of answered questions, and the table's size never enters a write's cost (baton/local/persist.py).
What each answer journaled is what a restart reads back."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from baton.contracts import AskRequest
from baton.local import persist
from baton.local.moto_scale import dynamodb_at_scale

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from baton.services.questions import QuestionService
    from tests.integration.conftest import MotoStack

HISTORY = 100


def _ask(questions: QuestionService, run_id: str) -> str:
    asked: dict[str, Any] = questions.ask(run_id, AskRequest(node="draft", question="ship it?"), caller="agent")
    return str(asked["interaction_id"])


def _as_text(saved: persist.Saved | None) -> list[str]:
    assert saved is not None
    return sorted(json.dumps(item, separators=(",", ":")) for item in saved.items)


def _answer_cost(saver: persist.Persister, questions: QuestionService, run_id: str) -> tuple[int, int, int]:
    """(journal lines, items encoded, journal bytes) one answer added."""
    interaction_id = _ask(questions, run_id)
    lines, encoded, size = saver.journal.appended, saver.encoded, saver.journal.path.stat().st_size
    questions.answer(run_id, interaction_id, "yes", caller="op")
    return (
        saver.journal.appended - lines,
        saver.encoded - encoded,
        saver.journal.path.stat().st_size - size,
    )


def test_an_answer_journals_the_same_with_or_without_history(
    moto_stack: MotoStack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    questions, table = moto_stack.services.questions, moto_stack.provisioned.table_name
    with dynamodb_at_scale():
        saver = persist.Persister(tmp_path / persist.DATA_FILE, table, "token")
        saver.start()
        try:
            fresh = _answer_cost(saver, questions, "run-fresh")
            for _ in range(HISTORY):  # history in the run the next answer lands in, and a table grown big
                questions.answer("run-old", _ask(questions, "run-old"), "yes", caller="op")
            items = len(persist.snapshot(table))
            assert items > 3 * HISTORY
            with_history = _answer_cost(saver, questions, "run-old")
            assert _as_text(persist.load(saver.path)) == sorted(persist.snapshot(table))  # snapshot + journal
        finally:
            saver.stop()
            saver.close()
    print(f"per answer (lines, items, bytes): fresh {fresh}, with {HISTORY} answered before {with_history}")
    assert fresh[0] == with_history[0] and fresh[0] > 0  # requests that wrote
    assert fresh[1] == with_history[1] and fresh[1] < 10  # items encoded: what the answer wrote
    assert abs(fresh[2] - with_history[2]) <= fresh[2] // 50  # bytes: within 2% (a few counters' digits)
