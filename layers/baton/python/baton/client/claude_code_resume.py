"""`baton claude-code resume` (baton/cli/claude_code.py): each headless Claude Code session the hook deferred
(`DeferredSessions`) whose approval is now decided. Allowed: `claude -p --resume <session>` once, in the
session's directory; Claude Code runs the hook again on the deferred call, which finds the approval and
consumes it. Denied (or its deadline's default): not resumed, since a resumed session's hook would ask
again; reported with the reason. Still pending: left for a later pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from baton.errors import BatonError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from baton.client.claude_code import DeferredSession, DeferredSessions
    from baton.client.tool_approvals import ToolApprovalCalls
    from baton.contracts.tool_approvals import ToolApprovalView

DEFAULT_COMMAND = ("claude", "-p")
Outcome = Literal["resumed", "would_resume", "pending", "denied", "already_used", "failed"]


class SessionResume(BaseModel):
    """What `resume` did with one deferred session."""

    session_id: str
    run_id: str
    interaction_id: str
    tool: str
    outcome: Outcome
    reason: str | None = None
    command: list[str] | None = None  # what was (or, dry run, would be) run
    exit_code: int | None = None


def run_in(argv: list[str], cwd: str | None) -> int:
    """Run the resume; its output goes to stderr so that stdout stays this command's report."""
    where = cwd if cwd and Path(cwd).is_dir() else None  # Claude Code finds a session by its project dir
    done = subprocess.run(argv, cwd=where, stdout=subprocess.PIPE, check=False)
    sys.stderr.write(done.stdout.decode(errors="replace"))
    return done.returncode


def resume_deferred(
    client: ToolApprovalCalls,
    sessions: DeferredSessions,
    command: Sequence[str] = DEFAULT_COMMAND,
    *,
    dry_run: bool = False,
    run: Callable[[list[str], str | None], int] = run_in,
) -> list[SessionResume]:
    """One pass over the deferred sessions; a session is dropped from the record once it is resumed or
    denied (so it is resumed once), kept while pending, after a failed resume, and on a dry run."""
    reports: list[SessionResume] = []
    for deferred in sessions.all():
        report = _one(client, deferred, list(command), dry_run=dry_run, run=run)
        if not dry_run and report.outcome in ("resumed", "denied", "already_used"):
            sessions.drop(deferred)
        reports.append(report)
    return reports


def _one(
    client: ToolApprovalCalls,
    deferred: DeferredSession,
    command: list[str],
    *,
    dry_run: bool,
    run: Callable[[list[str], str | None], int],
) -> SessionResume:
    def report(outcome: Outcome, **more: object) -> SessionResume:
        return SessionResume.model_validate({**deferred.model_dump(), "outcome": outcome, **more})

    try:
        view = client.get_tool_approval(deferred.run_id, deferred.interaction_id)
    except BatonError as err:
        return report("failed", reason=err.message)
    if view.status == "pending":
        return report("pending", reason=f"approval {view.interaction_id} is not decided yet")
    if not _allows(view):
        why = view.decision.reason if view.decision else None
        return report("denied", reason=why or f"approval {view.interaction_id} is {view.status}")
    if view.consumed:  # resumed already (another pass, or by hand): the call has run
        return report("already_used", reason=f"approval {view.interaction_id} was already used")
    argv = [*command, "--resume", deferred.session_id]
    if dry_run:
        return report("would_resume", command=argv)
    code = run(argv, deferred.cwd)
    failed = f"{command[0]} exited {code}" if code else None
    return report("failed" if failed else "resumed", command=argv, exit_code=code, reason=failed)


def _allows(view: ToolApprovalView) -> bool:
    return view.status == "answered" and view.decision is not None and view.decision.decision != "deny"
