"""`baton review show`: a run's review gate, its dialogue, verdict and merge."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from baton.cli import common
from baton.cli.common import JsonFlag, console, fail, print_json
from baton.errors import BatonError
from baton.hints import cli_command

if TYPE_CHECKING:
    from baton.contracts import ReviewView
    from baton.contracts.review import ThreadTurn

review_app = typer.Typer(help="Review-and-merge gates: the dialogue, the verdict, the merge.", no_args_is_help=True)


@review_app.command("show")
def review_show(
    run_id: Annotated[str, typer.Argument(help="The run.")],
    gate: Annotated[str | None, typer.Option(help="The review gate, when the run has several.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Show a run's review: the dialogue thread, the companion's verdict, diff stats, review URL, merge
    status and the actions the operator can take (`baton resume --run-id <id> --answer __review_action=...`).
    Messages are counted from 1 over the whole thread; the verdict is printed once."""
    try:
        review = common.client().review(run_id, gate=gate)
    except BatonError as err:
        fail(err)
    if as_json:
        print_json(review)
        return
    console.print(
        f"[bold]review[/] {review.gate} of run {run_id}: [bold]{review.status}[/] "
        f"(companion turns used: {review.turns_used} of {review.max_turns}; posture {review.posture})"
    )
    _print_header(review)
    _print_thread(review)
    _print_outcome(review, run_id)


def _print_header(review: ReviewView) -> None:
    diff = review.diff or {}
    if diff:
        console.print(
            f"  diff: {diff.get('files_changed')} file(s), +{diff.get('insertions')} -{diff.get('deletions')}"
            + (" (truncated)" if diff.get("truncated") else "")
        )
    if review.reviewed_head:
        digest = f" (diff sha256 {review.diff_digest[:12]})" if review.diff_digest else ""
        console.print(f"  reviewed commit: {review.reviewed_head}{digest}", markup=False, highlight=False)
    if review.run_branch_head and review.run_branch_head != review.reviewed_head:
        console.print(
            f"  [yellow]warning[/]: the run branch moved to {review.run_branch_head} after the review; a merge "
            "is refused until a reply has the companion review the new head"
        )
    if review.review_url:
        console.print(f"  open: [cyan]{review.review_url}[/]")
    for warning in review.warnings:
        console.print(f"  [yellow]warning[/]: {warning}")


def turn_label(turn: ThreadTurn, position: int, total: int) -> str:
    """`message 2 of 3 · local-operator (operator)`: counted from 1 over the whole thread, and who."""
    who = "companion" if turn.role == "companion" else f"{turn.by or 'operator'} (operator)"
    return f"message {position} of {total} · {who} · {turn.at}"


def _print_thread(review: ReviewView) -> None:
    total = len(review.thread)
    for position, turn in enumerate(review.thread, start=1):
        color = "magenta" if turn.role == "companion" else "green"
        console.print(f"\n[{color}]── {escape(turn_label(turn, position, total))}[/]")
        console.print(turn.text, markup=False, highlight=False)


def _verdict_in_thread(review: ReviewView) -> bool:
    """Whether the latest companion message already states the verdict in its text (the offline
    companion writes `Verdict: <decision> ...` there); then it is not printed a second time."""
    verdict = review.verdict or {}
    latest = next((t for t in reversed(review.thread) if t.role == "companion"), None)
    return latest is not None and f"Verdict: {verdict.get('decision')}" in latest.text


def _print_outcome(review: ReviewView, run_id: str) -> None:
    verdict = review.verdict
    if verdict and not _verdict_in_thread(review):
        console.print(
            f"\n[bold]verdict[/]: {verdict['decision']} (confidence {verdict['confidence']:.2f})"
            + (f"; blockers: {'; '.join(verdict['blockers'])}" if verdict.get("blockers") else "")
        )
    merge = review.merge
    if merge.merge_status:
        console.print(
            f"[bold]merge[/]: {merge.merge_status} {merge.final_commit or ''} "
            f"into {merge.merged_into or '-'} (branch {merge.final_branch or '-'})"
        )
    if review.reason:
        console.print(f"note: {review.reason}", markup=False, highlight=False)
    if review.allowed_actions:
        b = cli_command()
        allowed = review.allowed_actions
        # With blockers approve_merge is not offered: requesting changes is the suggested action then.
        example = next((a for a in ("approve_merge", "request_changes") if a in allowed), allowed[0])
        console.print(
            f"\nactions: {', '.join(allowed)} — e.g. {b} resume --run-id {run_id} --answer __review_action={example}",
            markup=False,
            highlight=False,
        )
        if "approve_merge" not in allowed and "force_merge" in allowed:
            console.print(
                "approve_merge is not offered: the verdict lists blockers. To merge anyway: "
                f"{b} resume --run-id {run_id} --answer __review_action=force_merge "
                '--answer __review_reason="<why it merges anyway>"',
                markup=False,
                highlight=False,
            )
