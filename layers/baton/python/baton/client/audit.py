"""The decision log's calls of `baton.Client` (operators only: an agent identity gets 403): a run's
chained decisions page by page, all of them, and the chain verified by the server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.client.transport import seg

if TYPE_CHECKING:
    from collections.abc import Iterator

    from baton.contracts.audit import AuditRecordPage, AuditRecordView, AuditVerification


class AuditCalls:
    """Mixed into `baton.client.sdk.Client`, which supplies `request`."""

    def request(self, method: str, path: str, *, json_body: Any = None, params: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError

    def audit_page(self, run_id: str, *, after: int = 0, limit: int = 100) -> AuditRecordPage:
        """One page of the run's chained decisions in seq order (`next`: the `after` of the next page)."""
        from baton.contracts.audit import AuditRecordPage

        params = {"after": after, "limit": limit}
        return AuditRecordPage.model_validate(self.request("GET", f"/api/runs/{seg(run_id)}/audit", params=params))

    def audit_records(self, run_id: str) -> Iterator[AuditRecordView]:
        """Every chained decision of the run, in seq order (page after page)."""
        after: int | None = 0
        while after is not None:
            page = self.audit_page(run_id, after=after, limit=500)
            yield from page.records
            after = page.next

    def audit_verify(self, run_id: str) -> AuditVerification:
        """The run's decision chain recomputed by the server: `valid`, or its `first_mismatch`."""
        from baton.contracts.audit import AuditVerification

        return AuditVerification.model_validate(self.request("GET", f"/api/runs/{seg(run_id)}/audit/verify"))
