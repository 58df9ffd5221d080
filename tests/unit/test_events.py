"""Events: a closed set of types, one payload model each, stored in the same form as before."""

from __future__ import annotations

import pytest

from baton.contracts import AskRequest
from baton.domain.gate_payloads import ParkPayload
from baton.events import PAYLOAD_OF_TYPE, AwaitStarted, EventType, HumanInputRequested, RunEnded
from baton.services.core import Core
from baton.services.questions import QuestionService
from baton.services.runs import RunService


def test_every_type_has_one_payload_model() -> None:
    assert set(PAYLOAD_OF_TYPE) == set(EventType)
    assert all(model.event_type is t for t, model in PAYLOAD_OF_TYPE.items())


def test_the_stored_form_holds_exactly_the_fields_set() -> None:
    asked = HumanInputRequested(interaction_id="i", node="n", kind="question", prompt="?", options=None, is_async=True)
    assert asked.data() == {
        "interaction_id": "i",
        "node": "n",
        "kind": "question",
        "prompt": "?",
        "options": None,
        "async": True,
    }
    assert AwaitStarted(gate="g", from_node=None, timeout_seconds=5, pending=[]).data()["from"] is None
    assert RunEnded.of_status("aborted", "stopped").event_type == EventType.RUN_ABORTED


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(ValueError, match="surprise"):
        AwaitStarted(gate="g", timeout_seconds=5, pending=[], surprise=1)  # type: ignore[call-arg]


def test_recorded_events_read_back_as_their_models(core: Core) -> None:
    qs, runs = QuestionService(core), RunService(core)
    iid = qs.ask("r1", AskRequest(node="draft", question="Pick", options=["a", "b"]), caller="agent")["interaction_id"]
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60, from_node="draft")
    qs.answer("r1", iid, "a", caller="op")
    runs.park(ParkPayload(run_id="r2", node="approve", token="tok-2", prompt="Ship?", timeout_seconds=60))
    runs.record_timeout("r2", "approve")
    events = core.store.list_events("r1") + core.store.list_events("r2")
    assert {e.type for e in events} >= {"human_input_requested", "await_started", "interaction_answered"}
    for event in events:
        assert event.payload().data() == event.data, event.type


def test_the_docs_list_every_event_type_and_no_other() -> None:
    import re

    from baton.events import EventType
    from baton.workflows.source_tree import source_tree

    architecture = (source_tree().root / "docs" / "architecture.md").read_text()
    section = architecture.split("\n## Events\n", 1)[1].split("\n## ", 1)[0]
    listed = {
        name
        for row in section.splitlines()
        if row.startswith("| `")
        for name in re.findall(r"`([a-z_]+)`", row.split("|")[1])
    }
    assert listed == {t.value for t in EventType}
