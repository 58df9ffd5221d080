"""`baton redrive`: the command, its help and its progress lines; the work is baton/adapters/redrive.py,
imported when the command runs (it needs pydantic and botocore, which `baton --help` does not load)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from baton.cli.common import JsonFlag, err_console, print_json

if TYPE_CHECKING:
    from baton.adapters.redrive import Redriven

TEAM_HELP = "The team environment (its resources are named baton-<team>-...), as deployed with `-c team=<team>`."


def _print_progress(entry: Redriven) -> None:
    verb = {"redriven": "[green]redriven[/]", "would_redrive": "would redrive", "failed": "[bold red]failed[/]"}
    why = f" ({escape(entry.error)})" if entry.error else ""
    target = escape(entry.function or "?")
    err_console.print(f"{escape(entry.queue)}: {verb[entry.outcome]} {entry.message_id} -> {target}{why}")


REDRIVE_HELP = "\n\n".join(
    (
        "Invoke functions again with the events their dead-letter queues kept (after fixing the cause).",
        "A notification, a Slack answer, a lifecycle record or a scheduled run that failed all its retries waits "
        "in baton-<team>-<function>-dlq (its alarm: baton-<team>-<function>-dlq). Each event is invoked again "
        "asynchronously, as it first was, and its message deleted only once Lambda accepted the invoke; a failed "
        "invoke leaves it in the queue (exit 1). An event that fails again returns to its queue.",
        "Progress lines go to standard error; --json prints one report on standard output. Uses your AWS "
        "credentials (AWS_PROFILE, ...): sqs:ListQueues, sqs:GetQueueUrl, sqs:ReceiveMessage, sqs:DeleteMessage and "
        "sqs:ChangeMessageVisibility on the queues, lambda:InvokeFunction on the functions.",
        "Examples:",
        "  baton redrive --team alpha --dry-run",
        "  baton redrive --team alpha --queue notify_slack --json",
    )
)


def redrive_command(
    team: Annotated[str, typer.Option("--team", help=TEAM_HELP)],
    queue: Annotated[
        list[str] | None,
        typer.Option(
            "--queue",
            help="Only this queue: a function's name (notify_slack) or the queue's (baton-<team>-notify_slack-dlq). "
            "Repeat for several. Default: every dead-letter queue of the team.",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be redriven; invoke and delete nothing.")
    ] = False,
    region: Annotated[
        str | None, typer.Option("--region", help="AWS region (default: AWS_REGION, or your profile's).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """`baton redrive` (its help: REDRIVE_HELP)."""
    from baton.adapters import redrive

    try:
        sqs, lambda_client = redrive.aws_clients(region)
        queues = redrive.find_queues(sqs, team, queue or ())
        err_console.print(f"{len(queues)} dead-letter queues of team {team}" + (" (dry run)" if dry_run else ""))
        # Progress goes to standard error, so `--json`'s standard output stays one document.
        report = redrive.redrive(
            sqs, lambda_client, team=team, queues=queues, dry_run=dry_run, progress=_print_progress
        )
    except redrive.AWS_ERRORS as err:
        # A receive that failed midway leaves its messages in their queue: they reappear at their timeout.
        err_console.print(f"[bold red]error[/]: {escape(str(err))}")
        raise typer.Exit(code=1) from None
    if as_json:
        print_json(report)
    else:
        done = sum(m.outcome != "failed" for m in report.messages)
        verb = "would be redriven" if dry_run else "redriven"
        err_console.print(f"{done} {verb}, {report.failed} left in their queues")
    if report.failed:
        raise typer.Exit(code=1)
