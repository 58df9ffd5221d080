"""Issue 28 items 8 and 9: what an answer to a pause must be, and when it is late.

- A blocking ask with options takes only its options, like an async question with free text off: a
  422 naming the key and the options, nothing stored; its hint names the key (`--answer decision=ship`).
- A pause whose declared default was taken at its deadline (`timed_out_default`) takes no later answer:
  a question, a blocking ask and an SDK interrupt each give the README's 410, kept as `answer_late`
  (one rule, `Core.refuse_if_ended`), never a 409 naming the default as if a person had won.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts import BlockingAskView
from baton.domain.gate_payloads import ParkPayload
from baton.domain.interrupt_spec import InterruptSpec
from baton.domain.ladder import Ladder
from baton.errors import GoneError, ValidationFailedError
from baton.services.asks import AskService, BlockingAsk
from baton.services.interrupts import InterruptService
from baton.services.pauses import Resume
from baton.services.questions import QuestionService

if TYPE_CHECKING:
    from baton.services.core import Core
    from baton.services.runs import RunService
    from tests.conftest import FixedClock

RUN = "agent-1"


def _ask(core: Core, ladder: Ladder | None = None) -> str:
    asked = AskService(core).ask(
        BlockingAsk(
            RUN,
            node="deploy",
            question="Ship it?",
            options=["ship", "hold"],
            timeout_seconds=60,
            caller="agent",
            ladder=ladder,
        )
    )
    return asked.interaction_id


def _late_answers(core: Core, run_id: str) -> list[dict[str, Any]]:
    return [e.data for e in core.store.list_events(run_id, limit=100) if e.type == "answer_late"]


# ---- item 8: a blocking ask validates its options --------------------------------------------------
def test_a_blocking_ask_refuses_an_answer_outside_its_options_naming_the_key_and_stores_nothing(
    core: Core, runs: RunService
) -> None:
    iid = _ask(core)
    with pytest.raises(ValidationFailedError) as refused:
        runs.resume(Resume(RUN, {"decision": "maybe"}, caller="alice"))
    assert refused.value.http_status == 422
    assert refused.value.details == {"path": "answers.decision", "options": ["ship", "hold"]}
    assert "'maybe' is not one of the options ['ship', 'hold']" in refused.value.message
    pending = AskService(core).get(RUN, iid)
    assert pending.state.status == "pending"
    assert "interaction_answered" not in [e.type for e in core.store.list_events(RUN, limit=100)]
    assert runs.resume(Resume(RUN, {"decision": "ship"}, caller="alice"))["resumed"] is True
    assert AskService(core).get(RUN, iid).state.answer == {"decision": "ship"}


def test_a_settled_ask_refuses_an_answer_outside_its_options_before_the_409(core: Core, runs: RunService) -> None:
    _ask(core)
    runs.resume(Resume(RUN, {"decision": "hold"}, caller="alice"))
    with pytest.raises(ValidationFailedError, match="not one of the options"):
        runs.resume(Resume(RUN, {"decision": "maybe"}, caller="bob"))


def test_a_blocking_asks_hint_names_the_key_and_its_options(core: Core) -> None:
    iid = _ask(core)
    view = BlockingAskView.of(AskService(core).get(RUN, iid))
    assert "--answer decision=ship (decision: one of ship, hold)" in view.how_to_answer
    assert '{"answers": {"decision": "ship"}}' in view.how_to_answer
    (note,) = core.notifier.notifications  # type: ignore[attr-defined]
    assert "--answer decision=ship" in note.how_to_answer and "key=value" not in note.how_to_answer


def test_a_hosted_pause_without_options_still_takes_any_answers(core: Core, runs: RunService) -> None:
    runs.start("human_pause", {}, run_id="h1", caller="op")
    runs.park(ParkPayload(run_id="h1", node="approve", token="tok-1", prompt="Ship?", timeout_seconds=60))
    assert runs.resume(Resume("h1", {"approved": True, "note": "go"}, caller="alice"))["resumed"] is True


# ---- item 9: a default taken, then a late answer: 410 kept as answer_late -----------------------------
def test_a_late_answer_to_a_question_whose_default_was_taken_is_a_410_kept_as_answer_late(
    core: Core, clock: FixedClock
) -> None:
    core.ensure_run("r1")
    questions = QuestionService(core)
    iid = questions.ask(
        "r1",
        node="planner",
        question="Fast path?",
        options=["yes", "no"],
        caller="agent",
        timeout_seconds=60,
        ladder=Ladder(on_timeout={"default": "no"}),
    )["interaction_id"]
    clock.advance(61)
    assert questions.take_default("r1", iid) is True
    with pytest.raises(GoneError) as late:
        questions.answer("r1", iid, "yes", caller="alice")
    assert late.value.http_status == 410
    assert late.value.details["outcome"] == "timed_out_default" and "declared default" in late.value.message
    assert _late_answers(core, "r1") == [
        {
            "interaction_id": iid,
            "node": "planner",
            "kind": "question",
            "answer": "yes",
            "by": "alice",
            "deadline": core.store.get_interaction("r1", iid).expires_at,  # type: ignore[union-attr]
        }
    ]
    assert core.store.get_interaction("r1", iid).state.answer == "no"  # type: ignore[union-attr]


def test_a_late_answer_to_an_ask_or_an_interrupt_whose_default_was_taken_is_the_same_410(
    core: Core, runs: RunService, clock: FixedClock
) -> None:
    _ask(core, ladder=Ladder(on_timeout={"default": {"decision": "hold"}}))
    interrupts = InterruptService(core)
    core.ensure_run("s1")
    spec = InterruptSpec(session_id="s1", prompt="Go?", timeout_ms=60_000, ladder=Ladder(on_timeout={"default": "no"}))
    interrupt, _ = interrupts.create(spec, caller="agent")
    clock.advance(61)
    assert AskService(core).pending(RUN) == []  # the waiter's read took the default
    with pytest.raises(GoneError):
        runs.resume(Resume(RUN, {"decision": "ship"}, caller="alice"))
    assert [e["answer"] for e in _late_answers(core, RUN)] == [{"decision": "ship"}]
    with pytest.raises(GoneError):
        interrupts.resume(interrupt.interaction_id, "yes", [], caller="alice")
    assert len(_late_answers(core, "s1")) == 1
