"""A run's decision log read back: its records in chain order, page by page (a page reads its records
and the head), and the chain recomputed (`baton/domain/audit.py`, the whole chain read). An operator's
tool, never on an answer's path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from baton.contracts.audit import AuditRecordPage, AuditRecordView
from baton.domain.audit import AuditRecord, AuditVerdict, canonical_json, linked, verify_chain

if TYPE_CHECKING:
    from collections.abc import Iterable

    from baton.ports import AuditArchive, EventStore

MAX_PAGE = 500


@dataclass
class AuditService:
    store: EventStore

    def verify(self, run_id: str) -> AuditVerdict:
        trail = self.store.read_audit(run_id)
        return verify_chain(run_id, trail.records, trail.head, trail.unchained)

    def page(self, run_id: str, *, after: int = 0, limit: int = 100) -> AuditRecordPage:
        """The records after seq `after`, in seq order, at most `limit` (1..MAX_PAGE): one page of the
        records' copies by seq, checked against the head (seqs have no gaps, so the page must be after+1,
        after+2, ... up to the head or the limit) and as a chain (`linked`); records chained before the
        copies were written, or a copy that is not its record, and the chain is read whole instead."""
        limit = max(1, min(limit, MAX_PAGE))
        read = self.store.read_audit_page(run_id, after=after, limit=limit)
        wanted = list(range(after + 1, min(read.head.seq, after + limit) + 1))
        if [r.seq for r in read.records] == wanted and linked(read.records, read.head):
            page, more = read.records, bool(wanted) and wanted[-1] < read.head.seq
        else:
            records = sorted(
                (r for r in self.store.read_audit(run_id).records if r.seq > after), key=lambda r: (r.seq, r.event_id)
            )
            page, more = records[:limit], len(records) > limit
        views = [AuditRecordView.model_validate(r.model_dump()) for r in page]
        return AuditRecordPage(run_id=run_id, records=views, next=page[-1].seq if more else None)


def archive(records: Iterable[AuditRecord], sink: AuditArchive) -> int:
    """Copy each record (its canonical JSON, hash included) to the archive, keyed so that a run's records
    list in chain order (runs/<run>/<seq, 12 digits>-<event id>.json); returns how many."""
    copied = list(records)
    for record in copied:
        sink.put(f"runs/{record.run_id}/{record.seq:012d}-{record.event_id}.json", canonical_json(record.model_dump()))
    return len(copied)
