"""`ApprovalService.settle` writes a met tally's decision over the pause as its deciding vote read it (no
read of its own); when the pause changed under it (a claim, another write), that conditional write loses
and the settle reads the pause again and decides on what is stored: still exactly once."""

from __future__ import annotations

from typing import Any

import pytest

from baton.contracts import ResumeInterrupt
from baton.contracts.tool_approvals import ToolApprovalRequest
from baton.domain.approval import ApprovalPolicy
from baton.domain.interrupt_spec import InterruptSpec
from baton.services.core import Core
from baton.services.interrupts import InterruptService
from baton.services.tool_approvals import ToolApprovalService

TWO = ApprovalPolicy(approvals=2, approvers=["alice", "bob"])


def _changed_under_the_deciding_vote(core: Core, monkeypatch: pytest.MonkeyPatch, run_id: str, iid: str) -> None:
    """Once the next vote is recorded, the pause is written again (its version moves on, still pending):
    the deciding vote's copy is then stale."""
    record_vote = core.store.record_vote

    def recorded_then_changed(*args: Any, **kwargs: Any) -> Any:
        outcome = record_vote(*args, **kwargs)
        stored = core.store.get_interaction(run_id, iid)
        assert stored is not None and stored.state.status == "pending"
        core.store.transition_interaction(stored, stored.state)
        return outcome

    monkeypatch.setattr(core.store, "record_vote", recorded_then_changed)


def _types(core: Core, run_id: str) -> list[str]:
    return [e.type for e in core.store.list_events(run_id, limit=100)]


def test_a_stale_interrupt_is_read_again_and_decided_once(core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
    service = InterruptService(core)
    created, _ = service.create(InterruptSpec(session_id="s1", prompt="deploy?", approval=TWO), caller="agent")
    iid = created.interaction_id
    service.resume(iid, ResumeInterrupt(input="go"), caller="alice")
    _changed_under_the_deciding_vote(core, monkeypatch, "s1", iid)
    done = service.resume(iid, ResumeInterrupt(input="go"), caller="bob")
    assert done.resumed is True and done.interrupt.status == "answered"
    assert _types(core, "s1").count("interrupt_resumed") == 1 and _types(core, "s1").count("quorum_reached") == 1


def test_a_stale_tool_approval_is_read_again_and_decided_once(core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
    service = ToolApprovalService(core)
    body = ToolApprovalRequest(
        call={"tool": "deploy", "arguments": {}}, reason="ship", timeout_seconds=600, approval=TWO
    )
    approval, _ = service.request("r1", body, caller="agent")
    iid = approval.interaction_id
    service.answer("r1", iid, {"decision": "approve"}, caller="alice")
    _changed_under_the_deciding_vote(core, monkeypatch, "r1", iid)
    decided = service.answer("r1", iid, {"decision": "approve"}, caller="bob")
    assert decided.status == "answered"
    stored = core.store.get_interaction("r1", iid)
    assert stored is not None and stored.state.status == "answered"
    assert _types(core, "r1").count("interaction_answered") == 1 and _types(core, "r1").count("quorum_reached") == 1
