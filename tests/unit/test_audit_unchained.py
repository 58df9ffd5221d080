"""Decisions stored before a run's chain began (no `seq`: the table predates the chain) are reported by
verify plainly as unchained, never passed over and never a false mismatch; a decision without its
place recorded after the chain began is a mismatch. The DynamoDB adapter's read of such items is
tested on moto in tests/integration/test_audit_store.py."""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner

from baton.contracts.audit import AuditVerification
from baton.domain.audit import BEFORE_THE_CHAIN, AuditHead, UnchainedDecision, chain, verify_chain
from baton.events import EventType
from baton.models import Event


def _event(n: int, **data: Any) -> Event:
    at = f"2026-01-01T00:00:{n:02d}Z"
    return Event(event_id=f"E{n:03d}", run_id="r1", type=EventType.INTERACTION_ANSWERED, at=at, data=data)


OLD = UnchainedDecision(event_id="E000", type="interaction_answered", at="2025-12-31T23:59:00Z")


def test_a_decision_recorded_before_the_chain_is_noted_as_unchained_and_the_chain_stays_valid() -> None:
    records, head = chain([_event(1, answer="a"), _event(2, answer="b")], AuditHead())
    verdict = verify_chain("r1", records, head, [OLD])
    assert verdict.valid and verdict.first_mismatch is None and verdict.records == 2
    [note] = verdict.unchained
    assert (note.event_id, note.type, note.at) == ("E000", "interaction_answered", OLD.at)
    assert note.message == "unchained (recorded before the chain began at seq 1)" == BEFORE_THE_CHAIN


def test_a_run_with_only_decisions_from_before_the_chain_lists_them_all() -> None:
    later = OLD.model_copy(update={"event_id": "E00A", "at": "2025-12-31T23:59:30Z"})
    verdict = verify_chain("r1", [], None, [later, OLD])
    assert verdict.valid and verdict.head_seq == 0
    assert [n.event_id for n in verdict.unchained] == ["E000", "E00A"]  # in the order they were recorded


def test_a_decision_without_its_place_after_the_chain_began_is_a_mismatch() -> None:
    records, head = chain([_event(1, answer="a"), _event(2, answer="b")], AuditHead())
    stripped = UnchainedDecision(event_id="E009", type="interaction_answered", at="2026-01-01T00:00:05Z")
    verdict = verify_chain("r1", records, head, [OLD, stripped])
    bad = verdict.first_mismatch
    assert not verdict.valid and bad is not None
    assert (bad.problem, bad.event_id) == ("unchained", "E009") and "after the chain began" in bad.message
    assert [n.event_id for n in verdict.unchained] == ["E000"]


def test_an_edit_in_the_chain_is_still_named_when_unchained_decisions_exist() -> None:
    records, head = chain([_event(1, answer="a"), _event(2, answer="b")], AuditHead())
    records[0] = records[0].model_copy(update={"data": {"answer": "evil"}})
    bad = verify_chain("r1", records, head, [OLD]).first_mismatch
    assert bad is not None and (bad.seq, bad.problem) == (1, "hash")


def test_the_cli_says_unchained_plainly(monkeypatch: Any) -> None:
    from baton.cli import common
    from baton.cli.main import app

    records, head = chain([_event(1, answer="a")], AuditHead())
    verdict = AuditVerification.model_validate(verify_chain("r1", records, head, [OLD]).model_dump())

    class _Client:
        def audit_verify(self, run_id: str) -> AuditVerification:
            return verdict

    monkeypatch.setattr(common, "client", _Client)
    result = CliRunner().invoke(app, ["audit", "verify", "r1"])
    assert result.exit_code == 0, result.output
    line = "E000 (interaction_answered, 2025-12-31T23:59:00Z): unchained (recorded before the chain began at seq 1)"
    assert line in result.output
    assert "valid" in result.output and "1 decision records" in result.output
