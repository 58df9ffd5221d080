"""Responses of the decision-log routes (GET /api/runs/{run_id}/audit[/verify]); the fields are those
of `baton/domain/audit.py`'s records and verdict."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from baton.contracts.base import Contract


class AuditRecordView(Contract):
    """One decision as chained: the event and its place in its run's chain."""

    event_id: str
    run_id: str
    type: str
    at: str
    data: dict[str, Any] = Field(description="The event's payload, as recorded.")
    seq: int = Field(description="1, 2, ... per run, no gaps.")
    prev_hash: str = Field(description="The hash of the run's record before this one (64 zeros for the first).")
    hash: str = Field(description="SHA-256 (hex) of the canonical JSON of this record without `hash`.")


class AuditRecordPage(Contract):
    run_id: str
    records: list[AuditRecordView]
    next: int | None = Field(default=None, description="Pass as `after` for the next page; null: the last page.")


class AuditMismatchView(Contract):
    seq: int
    event_id: str | None = None
    problem: Literal["hash", "prev_hash", "missing", "duplicate", "tail", "unchained"]
    expected: str
    stored: str
    message: str


class UnchainedView(Contract):
    """A decision stored before the run's chain began (no seq): not covered by the chain."""

    event_id: str
    type: str
    at: str
    message: str


class AuditVerification(Contract):
    """The run's chain recomputed: `valid`, or the first record that does not match."""

    run_id: str
    valid: bool
    records: int = Field(description="How many chained records were read.")
    head_seq: int
    head_hash: str
    first_mismatch: AuditMismatchView | None = None
    unchained: list[UnchainedView] = Field(
        default_factory=list, description="Decisions recorded before the chain began at seq 1 (not covered by it)."
    )
