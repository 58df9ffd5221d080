"""A pending tool approval as `baton runs questions` prints it for a person: the tool, its risk, the
agent's reason, the command (a shell tool's `command` string) or the arguments as pretty JSON, and the
commands that answer it."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING

from rich.markup import escape

from baton.hints import cli_command

if TYPE_CHECKING:
    from baton.contracts.tool_approvals import ToolApprovalView

COMMAND_KEYS = ("command", "cmd", "script")  # what Bash-like tools call the line they run
RISK_STYLE = {"low": "green", "medium": "yellow", "high": "bold red"}


def tool_approval_text(view: ToolApprovalView) -> str:
    """Rich markup: every value from the agent is escaped, so `[red]` in an argument stays text."""
    args = view.arguments
    command_key = next((k for k in COMMAND_KEYS if isinstance(args.get(k), str)), None)
    rest = {k: v for k, v in args.items() if k != command_key}
    style = RISK_STYLE[view.risk]
    lines = [
        f"[bold]tool approval[/] {view.interaction_id}: [bold]{escape(view.tool)}[/] "
        f"([{style}]{view.risk} risk[/]), until {view.expires_at or 'no deadline'}, then denied unless a default "
        "was declared",
        f"  reason: {escape(view.reason)}",
    ]
    if command_key:
        lines.append(f"  $ {escape(str(args[command_key]))}")
    if rest:
        pretty = json.dumps(rest, indent=2, ensure_ascii=False, sort_keys=True)
        lines.append("  arguments: " + escape(pretty).replace("\n", "\n  "))
    decide = f"{cli_command()} runs decide {shlex.quote(view.run_id)} {shlex.quote(view.interaction_id)}"
    lines += [
        "  approve: " + escape(f"{decide} --approve"),
        "  deny:    " + escape(f"{decide} --deny '<why: the agent reads it>'"),
        "  edit:    " + escape(f"{decide} --edit {shlex.quote(json.dumps(args, ensure_ascii=False))}"),
    ]
    return "\n".join(lines)
