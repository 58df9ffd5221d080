"""`baton review show`: a run's review gate, its dialogue, verdict and merge."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from baton.cli import common
from baton.cli.common import JsonFlag, console, fail, print_json
from baton.errors import BatonError

if TYPE_CHECKING:
    from baton.contracts import ReviewView

review_app = typer.Typer(help="Review-and-merge gates: the dialogue, the verdict, the merge.", no_args_is_help=True)


@review_app.command("show")
def review_show(
    run_id: Annotated[str, typer.Argument(help="The run.")],
    gate: Annotated[str | None, typer.Option(help="The review gate, when the run has several.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Show a run's review: the dialogue thread, the companion's verdict, diff stats, review URL, merge
    status and the actions the operator can take (`baton resume --run-id <id> --answer __review_action=...`)."""
    try:
        review = common.client().review(run_id, gate=gate)
    except BatonError as err:
        fail(err)
    if as_json:
        print_json(review)
        return
    console.print(
        f"[bold]review[/] {review.gate} of run {run_id}: [bold]{review.status}[/] "
        f"(turn {review.turns_used}/{review.max_turns}, posture {review.posture})"
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
    if review.review_url:
        console.print(f"  open: [cyan]{review.review_url}[/]")
    for warning in review.warnings:
        console.print(f"  [yellow]warning[/]: {warning}")


def _print_thread(review: ReviewView) -> None:
    for turn in review.thread:
        who = "[magenta]companion[/]" if turn.role == "companion" else f"[green]{turn.by or 'operator'}[/]"
        console.print(f"\n{who} #{turn.n}:")
        console.print(turn.text, markup=False, highlight=False)


def _print_outcome(review: ReviewView, run_id: str) -> None:
    verdict = review.verdict
    if verdict:
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
        console.print(
            f"\nactions: {', '.join(review.allowed_actions)} — e.g. "
            f"baton resume --run-id {run_id} --answer __review_action=approve_merge"
        )
