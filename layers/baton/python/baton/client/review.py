"""The SDK's review-gate calls (`baton.Client` inherits them): read the review, and act on it with the
reserved resume keys (baton/services/review)."""

from __future__ import annotations

import time
from typing import Any

from baton.client.base import ClientBase
from baton.client.transport import seg
from baton.contracts import ReviewActionResult, ReviewView
from baton.contracts.review import MergeProgress, merge_progress


class ReviewCalls(ClientBase):
    def _resume(self, run_id: str, answers: dict[str, Any], node: str | None) -> Any:
        body: dict[str, Any] = {"answers": answers}
        if node:
            body["node"] = node
        return self.request("POST", f"/api/runs/{seg(run_id)}/resume", json_body=body)

    def review(self, run_id: str, *, gate: str | None = None) -> ReviewView:
        """The run's review: thread, verdict, diff stats, review URL, merge status, allowed actions."""
        params = {"gate": gate} if gate else None
        return ReviewView.model_validate(self.request("GET", f"/api/runs/{seg(run_id)}/review", params=params))

    def review_action(
        self,
        run_id: str,
        action: str,
        *,
        reply: str | None = None,
        message: str | None = None,
        merge_strategy: str | None = None,
        gate: str | None = None,
        reason: str | None = None,
        reviewed_head: str | None = None,
    ) -> ReviewActionResult:
        """reply | approve_merge | force_merge | request_changes, sent as the reserved resume keys. `reason`:
        why (a force_merge over blockers needs one); `reviewed_head`: the head you reviewed (409 if the
        review moved on)."""
        answers: dict[str, Any] = {"__review_action": action}
        for key, value in (
            ("__review_reply", reply),
            ("__review_message", message),
            ("__review_merge_strategy", merge_strategy),
            ("__review_reason", reason),
            ("__review_head", reviewed_head),
        ):
            if value is not None:
                answers[key] = value
        return ReviewActionResult.model_validate(self._resume(run_id, answers, gate))

    def wait_for_merge(
        self, run_id: str, *, gate: str | None = None, timeout: float = 300.0, poll_seconds: float = 1.0
    ) -> MergeProgress:
        """After approve_merge / force_merge: what the merge became (merged, noop, rejected with the guard's
        reason, ...), or `pending` when it has not reported within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            progress = merge_progress(self.review(run_id, gate=gate))
            if progress.status != "pending" or time.monotonic() >= deadline:
                return progress
            time.sleep(poll_seconds)
