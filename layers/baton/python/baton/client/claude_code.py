"""The Claude Code `PreToolUse` hook's decision (`baton hook claude-code`, baton/cli/hook.py): ask Baton
for the call (a repeat finds the same approval; a remembered grant answers at once), wait a bounded time,
and map the outcome onto the hook's output. Approved: allow, after consuming the approval with the digest
of the input it allows (`updatedInput` when edited). Denied: deny with the person's reason. Still pending:
defer when headless (recorded in `DeferredSessions`, so `baton claude-code resume` runs `claude -p --resume`
once it is decided), else deny telling the model to go on with other work. Never allow on a timeout or
an error."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from baton.contracts.tool_approvals import ToolApprovalRequest
from baton.domain.tool_calls import ToolCall

if TYPE_CHECKING:
    from baton.client.tool_approvals import ToolApprovalCalls

PermissionDecision = Literal["allow", "deny", "ask", "defer"]


class PreToolUse(BaseModel):
    """What Claude Code sends a PreToolUse hook on stdin (fields this hook does not use are kept)."""

    model_config = ConfigDict(extra="allow")

    session_id: str
    transcript_path: str | None = None
    cwd: str | None = None
    permission_mode: str | None = None
    hook_event_name: Literal["PreToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str | None = None


def hook_output(
    decision: PermissionDecision, reason: str, updated_input: dict[str, Any] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }
    if updated_input is not None:
        out["updatedInput"] = updated_input
    return {"hookSpecificOutput": out}


class DeferredSession(BaseModel):
    """A headless session the hook deferred: its pending approval, and where Claude Code resumes it (it
    finds a session by its project directory, the hook's `cwd`)."""

    session_id: str
    run_id: str
    interaction_id: str
    tool: str
    cwd: str | None = None
    deferred_at: str


DEFERRED_ENV = "BATON_CLAUDE_CODE_DEFERRED"


class DeferredSessions:
    """One JSON file per deferred session in a directory ($BATON_CLAUDE_CODE_DEFERRED, else
    ~/.baton/claude-code/deferred): hooks of concurrent sessions never write the same file, and a
    session defers one call at a time (Claude Code defers only a lone tool call), so the last one is it."""

    def __init__(self, directory: Path | None = None) -> None:
        default = Path.home() / ".baton" / "claude-code" / "deferred"
        self.directory = directory or Path(os.environ.get(DEFERRED_ENV) or default)

    def _file(self, session_id: str) -> Path:  # any session id makes a safe file name
        return self.directory / f"{hashlib.sha256(session_id.encode()).hexdigest()[:32]}.json"

    def record(self, deferred: DeferredSession) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self._file(deferred.session_id)
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(deferred.model_dump_json())
        partial.replace(target)  # atomic: a reader never sees half a record

    def all(self) -> list[DeferredSession]:
        if not self.directory.is_dir():
            return []
        found = [DeferredSession.model_validate_json(f.read_text()) for f in self.directory.glob("*.json")]
        return sorted(found, key=lambda d: (d.deferred_at, d.session_id))

    def drop(self, deferred: DeferredSession) -> None:
        self._file(deferred.session_id).unlink(missing_ok=True)


@dataclass(frozen=True)
class HookSettings:
    wait_seconds: float = 50.0
    headless: bool = False
    timeout_seconds: int = 3600
    run_id: str | None = None  # None: the Claude Code session id
    deferred: DeferredSessions | None = None  # where a headless defer is recorded (None: not recorded)


def decide(event: PreToolUse, client: ToolApprovalCalls, settings: HookSettings) -> dict[str, Any]:
    """The hook's decision for one PreToolUse event. Any failure is a deny: the call never runs unapproved."""
    try:
        return _decide(event, client, settings, settings.run_id or event.session_id)
    except Exception as err:  # whatever went wrong, the tool does not run
        return hook_output("deny", f"Baton could not approve this tool call ({err}); it was not run.")


def _decide(event: PreToolUse, client: ToolApprovalCalls, settings: HookSettings, run: str) -> dict[str, Any]:
    call = ToolCall(tool=event.tool_name, arguments=event.tool_input)
    where = f" in {event.cwd}" if event.cwd else ""
    request = ToolApprovalRequest(
        call=call,
        reason=f"Claude Code wants to run {event.tool_name}{where}",
        agent="claude-code",
        session=event.session_id,
        timeout_seconds=settings.timeout_seconds,
    )
    asked = client.request_tool_approval(run, request)
    # Answered at once (a policy rule, a remembered grant): no poll, one round trip fewer for Claude Code.
    view = asked
    if asked.status == "pending":
        view = client.wait_tool_approval(run, asked.interaction_id, wait_seconds=settings.wait_seconds)
    if view.status == "pending":
        pending = f"A person has not yet decided on this {event.tool_name} call (Baton approval {view.interaction_id})."
        if settings.headless:
            if settings.deferred is not None:
                at = datetime.now(UTC).isoformat()
                settings.deferred.record(
                    DeferredSession(
                        session_id=event.session_id,
                        run_id=run,
                        interaction_id=view.interaction_id,
                        tool=event.tool_name,
                        cwd=event.cwd,
                        deferred_at=at,
                    )
                )
            return hook_output("defer", pending)
        return hook_output("deny", pending + " Do not retry it now: continue with other work and try again later.")
    decision = view.decision
    if view.status != "answered" or decision is None:
        return hook_output("deny", f"The approval {view.interaction_id} is {view.status}: the call was not run.")
    if decision.decision == "deny":
        return hook_output("deny", decision.reason or "A person denied this tool call.")
    allowed = ToolCall(tool=event.tool_name, arguments=decision.arguments)
    client.consume_tool_approval(run, view.interaction_id, allowed.digest)
    by = decision.decided_by or "Baton"
    if decision.decision == "edit":
        return hook_output("allow", f"Approved by {by} with edited input.", updated_input=decision.arguments)
    return hook_output("allow", f"Approved by {by}" + (f": {decision.reason}" if decision.reason else "."))
