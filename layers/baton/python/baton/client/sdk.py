"""`baton.Client`: the SDK agents and the CLI use to talk to a Baton API (local stack or deployed).

Finds the API without flags: explicit arguments, then BATON_API_URL / BATON_TOKEN, then the local
stack's `.baton/local.json` (searched from the current directory upwards). Every call returns the
route's response model from `baton.contracts` (fields as attributes; `result["key"]` reads the wire
name too); an error answer raises the `baton.errors` class of its status.

One module per family of calls, each a mixin on `baton.client.base.ClientBase`: the runs here,
questions and the await tool (`baton.client.questions`), the blocking ask (`baton.client.asks`),
interrupts (`baton.client.interrupt_calls`), the review gate (`baton.client.review`), claims, an agent's
kept state (`baton.client.agent_state`) and the decision log. Every pause the SDK creates takes the
REST body's own ladder and quorum models (`baton.client.pauses`)."""

from __future__ import annotations

from typing import Any

from baton.client.agent_state import AgentStateCalls
from baton.client.asks import AskCalls, AskCancelledError, AskTimeoutError
from baton.client.audit import AuditCalls
from baton.client.claims import ClaimCalls
from baton.client.interrupt_calls import InterruptCalls
from baton.client.questions import AwaitTimeoutError, QuestionCalls
from baton.client.review import ReviewCalls
from baton.client.tool_approvals import ToolApprovalCalls
from baton.client.transport import ApiUnavailableError, find_local_state, resolve_endpoint, seg
from baton.contracts import EventPage, ResumeResult, ReviewActionResult, RunView, StartedRun

__all__ = [
    "ApiUnavailableError",
    "AskCancelledError",
    "AskTimeoutError",
    "AwaitTimeoutError",
    "Client",
    "find_local_state",
    "resolve_endpoint",
]


class Client(
    QuestionCalls,
    AskCalls,
    InterruptCalls,
    ReviewCalls,
    ToolApprovalCalls,
    ClaimCalls,
    AgentStateCalls,
    AuditCalls,
):
    # ---- runs ----------------------------------------------------------------------------------
    def start_run(self, workflow: str, input: dict[str, Any] | None = None, *, run_id: str | None = None) -> StartedRun:
        body: dict[str, Any] = {"workflow": workflow, "input": input or {}}
        if run_id:
            body["run_id"] = run_id
        return StartedRun.model_validate(self.request("POST", "/api/runs", json_body=body))

    def get_run(self, run_id: str) -> RunView:
        return RunView.model_validate(self.request("GET", f"/api/runs/{seg(run_id)}"))

    def stop_run(self, run_id: str, *, reason: str | None = None) -> RunView:
        """Stop a hosted run: it ends aborted, `run_aborted` recorded before this returns."""
        body = {"reason": reason} if reason else {}
        return RunView.model_validate(self.request("POST", f"/api/runs/{seg(run_id)}/stop", json_body=body))

    def events(self, run_id: str, *, after: str | None = None, limit: int = 100) -> EventPage:
        params: dict[str, Any] = {"limit": limit}
        if after:
            params["after"] = after
        return EventPage.model_validate(self.request("GET", f"/api/runs/{seg(run_id)}/events", params=params))

    def resume(self, run_id: str, answers: dict[str, Any], *, node: str | None = None) -> ResumeResult:
        """Resume the run's paused node (a plain pause's quorum vote goes under `answers["decision"]`).
        `delivery == "pending"` (HTTP 202): stored, but its send failed; the reconciler delivers it."""
        result = self._resume(run_id, answers, node)
        if isinstance(result, dict) and "action" in result:  # a review gate took it as an action
            return ReviewActionResult.model_validate(result)
        return ResumeResult.model_validate(result)
