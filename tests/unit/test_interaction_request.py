"""The interaction request as a union by kind: items stored before it still load, and the stored form
(what the DynamoDB adapter writes and the API's `request` shows) is the one it always was."""

from __future__ import annotations

import json
from typing import Any

import pytest

from baton.models import (
    AwaitToolRequest,
    Interaction,
    InteractionStatus,
    InterruptRequest,
    PauseRequest,
    QuestionRequest,
    ReviewRequest,
    dump_request,
    parse_request,
    status_of,
)

COMMON: dict[str, Any] = {
    "node": "n",
    "prompt": "p",
    "options": None,
    "allow_free_text": True,
    "schema": None,
    "json_schema": None,
    "state": None,
    "timeout_seconds": 60,
    "notify": ["console"],
    "workflow_id": None,
}
# The stored form as it was written before the union: every kind's own fields under `extra`.
STORED: list[tuple[type, dict[str, Any]]] = [
    (QuestionRequest, {**COMMON, "kind": "question", "extra": {"async": True, "asked_by": "agent"}}),
    (PauseRequest, {**COMMON, "kind": "ask", "extra": {}}),
    (AwaitToolRequest, {**COMMON, "kind": "await", "extra": {"from": None, "pending": ["q1"], "by": "agent"}}),
    (
        InterruptRequest,
        {
            **COMMON,
            "kind": "interrupt",
            "schema": {"type": "string"},
            "state": {"a": 1},
            "workflow_id": "deploy",
            "extra": {"created_by": "agent", "timeout_ms": 60000, "gate": "edit", "key": "k"},
        },
    ),
    (InterruptRequest, {**COMMON, "kind": "interrupt", "extra": {"created_by": "agent", "timeout_ms": 5}}),
    (ReviewRequest, {**COMMON, "kind": "review", "extra": {"config": {"gate": "ship"}, "diff": None}}),
]


@pytest.mark.parametrize(("model", "stored"), STORED, ids=[f"{m.__name__}-{n}" for n, (m, _) in enumerate(STORED)])
def test_stored_items_load_as_their_kind_and_dump_the_same(model: type, stored: dict[str, Any]) -> None:
    request = parse_request(json.dumps(stored))
    assert isinstance(request, model)
    assert json.loads(dump_request(request)) == stored
    assert parse_request(request.stored()) == request


def test_kind_fields_are_typed() -> None:
    hosted = parse_request(STORED[3][1])
    assert isinstance(hosted, InterruptRequest) and hosted.hosted and hosted.timeout_ms == 60000
    assert hosted.schema_ == {"type": "string"} and hosted.key == "k"
    await_ = parse_request(STORED[2][1])
    assert isinstance(await_, AwaitToolRequest) and await_.from_node is None and await_.pending == ["q1"]


def test_request_as_refuses_another_kind() -> None:
    i = Interaction(interaction_id="i", run_id="r", created_at="t", request=PauseRequest(node="n", prompt="p"))
    assert i.request_as(PauseRequest) is i.request
    with pytest.raises(TypeError, match="ask"):
        i.request_as(ReviewRequest)


def test_an_interrupt_stored_as_cancelled_by_timeout_loads_as_timed_out() -> None:
    stored = parse_request(STORED[4][1])
    old = Interaction(
        interaction_id="i",
        run_id="r",
        created_at="t",
        request=stored,
        state=InteractionStatus(status="cancelled", reason="timeout"),
    )
    assert old.state.status == "timed_out"
    by_operator = InteractionStatus(status="cancelled", reason="timeout", answered_by="alice")
    assert (
        Interaction(interaction_id="i", run_id="r", created_at="t", request=stored, state=by_operator).state.status
        == "cancelled"
    )


def test_status_of_keeps_the_claim_and_the_version() -> None:
    current = InteractionStatus(claimed_by="bob", claimed_at="t0", version=3, reason="old")
    answered = status_of(current, "answered", answer="yes", by="alice", at="t1")
    assert (answered.claimed_by, answered.claimed_at, answered.version) == ("bob", "t0", 3)
    assert (answered.answer, answered.answered_by, answered.answered_at, answered.reason) == (
        "yes",
        "alice",
        "t1",
        None,
    )


def test_the_api_view_of_a_request_is_the_stored_form_without_top_level_nones() -> None:
    await_ = parse_request(STORED[2][1])
    i = Interaction(interaction_id="i", run_id="r", created_at="t", request=await_)
    assert i.public()["request"] == {
        "kind": "await",
        "node": "n",
        "prompt": "p",
        "allow_free_text": True,
        "timeout_seconds": 60,
        "notify": ["console"],
        "extra": {"from": None, "pending": ["q1"], "by": "agent"},
    }
