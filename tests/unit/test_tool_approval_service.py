"""The tool approval's pause machinery on the in-memory store (baton/services/tool_approvals.py): its
ladder is walked by the blocking ask's timer, stopped by the answer (or deciding vote) that settles it, and
an answer after the deadline finds the default taken."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts.tool_approvals import ToolApprovalRequest
from baton.domain.approval import ApprovalPolicy
from baton.domain.deadline import INTERACTION_GATE
from baton.domain.tool_calls import ToolCall
from baton.errors import ConflictError, ForbiddenError, GoneError
from baton.models import status_of
from baton.services.tool_approvals import ToolApprovalService
from tests.fakes import RecordingDeadlineTimers

if TYPE_CHECKING:
    from baton.models import Interaction, InteractionStatus
    from baton.services.core import Core
    from tests.conftest import FixedClock

CALL = ToolCall(tool="deploy", arguments={"env": "prod"})


def test_the_ladder_is_walked_by_the_asks_timer(core: Core) -> None:
    core.timers = timers = RecordingDeadlineTimers()
    body = ToolApprovalRequest(call=CALL, reason="ship", timeout_seconds=600, remind_after=60)
    approval, created = ToolApprovalService(core).request("r1", body, caller="agent")
    assert created and approval.request.ladder is not None and approval.request.ladder.remind_after == 60
    assert [(t.payload.gate, t.payload.step, t.wait_seconds) for t in timers.started] == [
        (INTERACTION_GATE, "remind", 60)
    ]


def test_an_answer_after_the_deadline_finds_the_default_taken_and_is_a_410(core: Core, clock: FixedClock) -> None:
    service = ToolApprovalService(core)
    approval, _ = service.request("r1", ToolApprovalRequest(call=CALL, reason="ship", timeout_seconds=60), caller="a")
    clock.advance(61)
    with pytest.raises(GoneError):
        service.answer("r1", approval.interaction_id, {"decision": "approve"}, caller="alice")
    stored = core.store.get_interaction("r1", approval.interaction_id)
    assert stored is not None and stored.state.outcome == "timed_out_default"
    assert stored.state.answer["decision"] == "deny"
    assert [e.type for e in core.store.list_events("r1", limit=20)].count("timed_out_default") == 1


def test_an_answered_approval_stops_its_ladders_timer_once(core: Core) -> None:
    core.timers = timers = RecordingDeadlineTimers()
    service = ToolApprovalService(core)
    body = ToolApprovalRequest(call=CALL, reason="ship", timeout_seconds=600, remind_after=60)
    approval, _ = service.request("r1", body, caller="agent")
    (timer,) = timers.started
    service.answer("r1", approval.interaction_id, {"decision": "approve"}, caller="alice")
    assert timers.stopped == [timer.name]
    service.answer("r1", approval.interaction_id, {"decision": "approve"}, caller="alice")  # a repeat
    assert timers.stopped == [timer.name]


def test_a_quorum_approval_stops_its_timer_at_the_deciding_vote_only(core: Core) -> None:
    core.timers = timers = RecordingDeadlineTimers()
    service = ToolApprovalService(core)
    approval_policy = ApprovalPolicy(approvals=2, approvers=["alice", "bob", "carol"])
    body = ToolApprovalRequest(call=CALL, reason="ship", timeout_seconds=600, remind_after=60, approval=approval_policy)
    approval, _ = service.request("r1", body, caller="agent")
    (timer,) = timers.started
    service.answer("r1", approval.interaction_id, {"decision": "approve"}, caller="alice")
    assert timers.stopped == []  # one vote decides nothing: its reminder still matters
    service.answer("r1", approval.interaction_id, {"decision": "approve"}, caller="bob")
    assert timers.stopped == [timer.name]
    with pytest.raises(ConflictError):  # after the decision: nothing stopped again
        service.answer("r1", approval.interaction_id, {"decision": "approve"}, caller="carol")
    assert timers.stopped == [timer.name]


def test_an_approval_with_no_ladder_has_no_timer_to_stop(core: Core) -> None:
    core.timers = timers = RecordingDeadlineTimers()
    service = ToolApprovalService(core)
    approval, _ = service.request("r1", ToolApprovalRequest(call=CALL, reason="ship", timeout_seconds=600), caller="a")
    service.answer("r1", approval.interaction_id, {"decision": "deny"}, caller="alice")
    assert timers.started == [] and timers.stopped == []  # no StopExecution for nothing


def test_an_answer_whose_write_loses_to_a_claim_decides_again_and_wins(
    core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = ToolApprovalService(core)
    approval, _ = service.request("r1", ToolApprovalRequest(call=CALL, reason="ship", timeout_seconds=600), caller="a")
    write = core.store.transition_interaction
    claimed: list[str] = []

    def claim_first(i: Interaction, new: InteractionStatus, **kwargs: Any) -> Interaction:
        if not claimed:  # a claim lands between the answer's read and its write (the version moves)
            claimed.append("bob")
            write(i, i.state.model_copy(update={"claimed_by": "bob"}))
        return write(i, new, **kwargs)

    monkeypatch.setattr(core.store, "transition_interaction", claim_first)
    result = service.answer("r1", approval.interaction_id, {"decision": "approve"}, caller="alice")
    assert claimed and result.status == "answered"
    stored = core.store.get_interaction("r1", approval.interaction_id)
    assert stored is not None and stored.state.answered_by == "alice"
    assert [e.type for e in core.store.list_events("r1", limit=20)].count("interaction_answered") == 1


def test_an_answer_whose_write_loses_to_another_decision_is_the_409_naming_it(
    core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = ToolApprovalService(core)
    approval, _ = service.request("r1", ToolApprovalRequest(call=CALL, reason="ship", timeout_seconds=600), caller="a")
    write = core.store.transition_interaction
    first = {"decision": "deny", "reason": "no"}

    def bob_first(i: Interaction, new: InteractionStatus, **kwargs: Any) -> Interaction:
        if i.state.status == "pending" and new.answered_by == "alice":  # bob's decision lands first
            write(i, status_of(i.state, "answered", answer=first, by="bob", at=core.now()))
        return write(i, new, **kwargs)

    monkeypatch.setattr(core.store, "transition_interaction", bob_first)
    with pytest.raises(ConflictError) as refused:
        service.answer("r1", approval.interaction_id, {"decision": "approve"}, caller="alice")
    assert refused.value.details["winner"]["by"] == "bob" and refused.value.details["winner"]["value"] == first


def test_a_counted_voters_repeat_after_the_decision_is_counted_once_as_every_quorum_pause(core: Core) -> None:
    service = ToolApprovalService(core)
    approval_policy = ApprovalPolicy(approvals=2, approvers=["alice", "bob", "carol"])
    body = ToolApprovalRequest(call=CALL, reason="ship", timeout_seconds=600, approval=approval_policy)
    approval, _ = service.request("r1", body, caller="agent")
    iid = approval.interaction_id
    service.answer("r1", iid, {"decision": "approve"}, caller="alice")
    decided = service.answer("r1", iid, {"decision": "approve"}, caller="bob")
    assert decided.status == "answered" and decided.approval is not None and decided.approval.approvals == 2
    again = service.answer("r1", iid, {"decision": "approve"}, caller="alice")
    assert again.status == "answered" and again.approval is not None
    assert again.approval.already_counted and again.approval.approvals == 2
    with pytest.raises(ForbiddenError):  # the asking agent may not vote, decided or not
        service.answer("r1", iid, {"decision": "approve"}, caller="agent")
    events = [e.type for e in core.store.list_events("r1", limit=40)]
    assert events.count("interaction_answered") == 1 and events.count("approval_recorded") == 2
