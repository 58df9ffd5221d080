"""The SDK side of tool-call approvals (baton/services/tool_approvals.py): ask, wait a bounded time with
long-polls, consume right before the tool runs, list and revoke grants. The bodies and answers are the
API's own models (baton/contracts/tool_approvals.py)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from baton.client.base import ClientBase
from baton.client.transport import seg
from baton.contracts.tool_approvals import ConsumeResult, GrantList, GrantRevoked, ToolApprovalPage, ToolApprovalView

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from baton.contracts.tool_approvals import DecidedToolApproval, ToolApprovalRequest

MAX_POLL_SECONDS = 20.0  # the server's long-poll bound


class ToolApprovalCalls(ClientBase):
    def request_tool_approval(self, run_id: str, request: ToolApprovalRequest) -> ToolApprovalView:
        """The approval of this call: a new one, or the one a repeat of the same call finds."""
        # Only the top level's unset fields are left out: a null inside the arguments is part of the call.
        body = {k: v for k, v in request.model_dump(mode="json").items() if v is not None}
        found = self.request("POST", f"/api/runs/{seg(run_id)}/tool-approvals", json_body=body)
        return ToolApprovalView.model_validate(found)

    def get_tool_approval(self, run_id: str, interaction_id: str, *, wait_seconds: float = 0) -> ToolApprovalView:
        path = f"/api/runs/{seg(run_id)}/tool-approvals/{seg(interaction_id)}"
        return ToolApprovalView.model_validate(self._transport.poll(path, min(wait_seconds, MAX_POLL_SECONDS)))

    def wait_tool_approval(
        self,
        run_id: str,
        interaction_id: str,
        *,
        wait_seconds: float,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> ToolApprovalView:
        """Long-poll until decided or `wait_seconds` have passed: the view then (maybe still pending)."""
        until = monotonic() + max(0.0, wait_seconds)
        view = self.get_tool_approval(run_id, interaction_id)
        while view.status == "pending" and (remaining := until - monotonic()) >= 1:
            view = self.get_tool_approval(run_id, interaction_id, wait_seconds=remaining)
        return view

    def consume_tool_approval(self, run_id: str, interaction_id: str, digest: str) -> ConsumeResult:
        path = f"/api/runs/{seg(run_id)}/tool-approvals/{seg(interaction_id)}/consume"
        return ConsumeResult.model_validate(self.request("POST", path, json_body={"digest": digest}))

    def tool_grants(self, run_id: str) -> GrantList:
        return GrantList.model_validate(self.request("GET", f"/api/runs/{seg(run_id)}/tool-grants"))

    def revoke_tool_grant(self, run_id: str, grant_id: str) -> GrantRevoked:
        path = f"/api/runs/{seg(run_id)}/tool-grants/{seg(grant_id)}"
        return GrantRevoked.model_validate(self.request("DELETE", path))

    def decided_tool_approvals_page(
        self, *, since: str | None = None, limit: int = 50, next_token: str | None = None
    ) -> ToolApprovalPage:
        """One page of decided tool approvals across runs (operators only); `next` continues it."""
        params: dict[str, str | int] = {"status": "answered", "limit": limit}
        if since is not None:
            params["since"] = since
        if next_token is not None:
            params["next"] = next_token
        return ToolApprovalPage.model_validate(self.request("GET", "/api/tool-approvals", params=params))

    def decided_tool_approvals(self, *, since: str | None = None, limit: int = 200) -> Iterator[DecidedToolApproval]:
        """Every decided tool approval made since `since`, page after page."""
        next_token: str | None = None
        while True:
            page = self.decided_tool_approvals_page(since=since, limit=limit, next_token=next_token)
            yield from page.approvals
            if page.next is None:
                return
            next_token = page.next
