"""`baton claude-code resume`: resume each headless Claude Code session the hook deferred
(`baton hook claude-code --headless`) once its approval is decided (baton/client/claude_code_resume.py)."""

from __future__ import annotations

import shlex
import shutil
from typing import Annotated

import typer

from baton.cli.common import JsonFlag

RESUME_HELP = (
    "Resume each deferred headless Claude Code session whose approval is now decided.\n\n"
    "The hook records a session when it answers defer (in $BATON_CLAUDE_CODE_DEFERRED, else "
    "~/.baton/claude-code/deferred). For each one: approved (or edited) -> runs `<command> --resume "
    "<session_id>` once, in the session's directory (its output on stderr), and reports resumed; denied or "
    "timed out -> reported denied, not resumed; still pending -> reported pending and kept for a later "
    "pass. A failed resume is kept too.\n\nExit 1 when the command is not on PATH or a resume failed."
)

claude_code_app = typer.Typer(help="Claude Code sessions waiting on Baton approvals.", no_args_is_help=True)


@claude_code_app.command("resume", help=RESUME_HELP)
def resume(
    command: Annotated[
        str, typer.Option("--command", help="The headless Claude Code command; `--resume <id>` is appended.")
    ] = "claude -p",
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report what would be resumed; run nothing, keep every record.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    from baton.cli.common import client, console, err_console, print_json, usage
    from baton.client.claude_code import DeferredSessions
    from baton.client.claude_code_resume import resume_deferred

    argv = shlex.split(command)
    if not argv:
        usage("--command is empty")
    if not dry_run and shutil.which(argv[0]) is None:
        err_console.print(
            f"[bold red]error[/]: `{argv[0]}` is not on PATH: install Claude Code "
            "(https://code.claude.com/docs) or name its command with --command"
        )
        raise typer.Exit(1)
    reports = resume_deferred(client(), DeferredSessions(), argv, dry_run=dry_run)
    if as_json:
        print_json({"sessions": [r.model_dump() for r in reports]})
    elif not reports:
        console.print("No deferred Claude Code sessions.")
    for r in [] if as_json else reports:
        detail = shlex.join(r.command) if r.outcome == "would_resume" and r.command else r.reason
        console.print(f"{r.session_id}  {r.outcome}  {r.tool}" + (f"  ({detail})" if detail else ""), markup=False)
    if any(r.outcome == "failed" for r in reports):
        raise typer.Exit(1)
