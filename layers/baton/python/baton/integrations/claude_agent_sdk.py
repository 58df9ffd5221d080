"""The Claude Agent SDK's `can_use_tool` callback, answered through Baton's tool approvals (issue 30).

The same decision as the Claude Code hook (baton/client/claude_code.py `decide`): ask Baton for the call
(a repeat finds the same approval; a remembered grant answers at once), wait a bounded time, and allow
only after consuming the approval with the digest of the input that will run. Approved: allow (edited:
with `updated_input`). Denied, still pending when the wait ends, timed out or any error: deny with the
reason as the message the model sees. It never allows what a person did not.

    options = ClaudeAgentOptions(can_use_tool=baton_can_use_tool(Client(), "my-run"))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio.to_thread
from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

from baton.client.claude_code import HookSettings, PreToolUse, decide

if TYPE_CHECKING:
    from claude_agent_sdk import CanUseTool, PermissionResult, ToolPermissionContext

    from baton.client.tool_approvals import ToolApprovalCalls


def baton_can_use_tool(
    client: ToolApprovalCalls,
    run_id: str,
    *,
    session: str | None = None,
    wait_seconds: float = 50.0,
    timeout_seconds: int = 3600,
) -> CanUseTool:
    """A `can_use_tool` callback asking Baton, in run `run_id` (`session`: a session grant's scope, default
    the run). `wait_seconds` bounds each call's wait; unanswered by `timeout_seconds`, Baton denies."""
    settings = HookSettings(wait_seconds=wait_seconds, headless=False, timeout_seconds=timeout_seconds, run_id=run_id)

    async def can_use_tool(tool: str, arguments: dict[str, Any], context: ToolPermissionContext) -> PermissionResult:
        event = PreToolUse(
            session_id=session or run_id,
            hook_event_name="PreToolUse",
            tool_name=tool,
            tool_input=arguments,
            tool_use_id=context.tool_use_id,
        )
        # `decide` long-polls with the sync SDK (and denies on any error): off the event loop.
        out = (await anyio.to_thread.run_sync(decide, event, client, settings))["hookSpecificOutput"]
        if out["permissionDecision"] == "allow":
            return PermissionResultAllow(updated_input=out.get("updatedInput"))
        return PermissionResultDeny(message=out["permissionDecisionReason"])

    return can_use_tool
