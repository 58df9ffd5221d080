"""`baton runs …` (start, show, stop, events, questions, answer, pending) and `baton resume`."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from baton.cli import common
from baton.cli.ask import HELP as ASK_HELP
from baton.cli.ask import runs_ask
from baton.cli.common import JsonFlag, console, fail, print_json
from baton.cli.tool_decide import runs_decide
from baton.errors import BatonError
from baton.hints import cli_command

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rich.table import Table

    from baton.client.sdk import Client
    from baton.contracts import ApprovalView, EventView, InboxItem, QuestionView
    from baton.contracts.review import MergeProgress

runs_app = typer.Typer(help="Hosted and external runs: start, show, events, questions.", no_args_is_help=True)


def _run_end_events() -> frozenset[str]:
    # Imported on use: the event models load pydantic, which `baton --help` never needs.
    from baton.events import EventType

    return frozenset({EventType.RUN_SUCCEEDED, EventType.RUN_FAILED, EventType.RUN_TIMED_OUT, EventType.RUN_ABORTED})


FOLLOW_POLL_SECONDS = 1.0
FOLLOW_STATUS_EVERY = 5  # idle polls between reads of the run (the fallback for a missing end event)
SUMMARY_FIELDS = (
    "run_id",
    "workflow",
    "status",
    "reason",
    "created_at",
    "updated_at",
    "interactions",
    "output",
    "merge_status",
    "final_commit",
    "final_branch",
    "merged_into",
    "ended_at",
)


@runs_app.command("start")
def runs_start(
    workflow: Annotated[str, typer.Argument(help="Registered workflow, e.g. human_pause.")],
    input_json: Annotated[str, typer.Option("--input", help="Workflow input as JSON.")] = "{}",
    run_id: Annotated[str | None, typer.Option(help="Run id (default: a new ULID).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Start a hosted run (a Step Functions execution)."""
    payload = common.parse_json(input_json, "--input")
    try:
        run = common.client().start_run(workflow, payload, run_id=run_id)
    except BatonError as err:
        fail(err)
    if as_json:
        print_json(run)
    else:
        console.print(f"started run [bold]{run.run_id}[/] ({workflow}): {run.status}")


@runs_app.command("show")
def runs_show(run_id: str, as_json: JsonFlag = False) -> None:
    """Show a run's summary: status, reason, interaction counts, merge fields."""
    from rich.table import Table

    try:
        run = common.client().get_run(run_id)
    except BatonError as err:
        fail(err)
    if as_json:
        print_json(run)
        return
    table = Table(show_header=False, box=None)
    for key in SUMMARY_FIELDS:
        value = getattr(run, key)
        if value not in (None, {}, ""):
            table.add_row(f"[bold]{key}[/]", json.dumps(value) if isinstance(value, dict | list) else str(value))
    console.print(table)


@runs_app.command("stop")
def runs_stop(
    run_id: str,
    reason: Annotated[str | None, typer.Option(help="Why: kept as the run's reason.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Stop a hosted run: its execution is stopped and the run ends aborted (run_aborted recorded at once)."""
    try:
        run = common.client().stop_run(run_id, reason=reason)
    except BatonError as err:
        fail(err)
    if as_json:
        print_json(run)
    else:
        console.print(f"run [bold]{run.run_id}[/]: {run.status} ({run.reason})")


# `runs events --follow` exits with the run's final status (2 stays Typer's usage error).
FOLLOW_EXIT_CODES = {"succeeded": 0, "failed": 1, "timed_out": 3, "aborted": 4}


@runs_app.command("events")
def runs_events(
    run_id: str,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new events until the run ends (Ctrl-C stops).")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Print a run's event log, oldest first. With --follow, exits once the run's end event is printed,
    with the run's final status as the exit code: 0 succeeded, 1 failed, 3 timed out, 4 aborted
    (Ctrl-C: 0)."""
    after: str | None = None
    idle_polls = 0
    try:
        client = common.client()
        while True:
            page = client.events(run_id, after=after)
            for event in page.events:
                _print_event(event, as_json=as_json)
            after = page.next
            if not follow:
                return
            ended = next((event.type for event in page.events if event.type in _run_end_events()), None)
            if ended is not None:
                raise typer.Exit(code=FOLLOW_EXIT_CODES[str(ended).removeprefix("run_")])
            idle_polls = 0 if page.events else idle_polls + 1
            status = _ended(client, run_id) if idle_polls and idle_polls % FOLLOW_STATUS_EVERY == 0 else None
            if status is not None:
                # Reading the run records an end whose event never came (the read path's fallback);
                # whatever came meanwhile is printed, then the follow ends with the run.
                for event in client.events(run_id, after=after).events:
                    _print_event(event, as_json=as_json)
                raise typer.Exit(code=FOLLOW_EXIT_CODES[status])
            if not page.events:
                time.sleep(FOLLOW_POLL_SECONDS)
    except BatonError as err:
        fail(err)
    except KeyboardInterrupt:
        return


def _ended(client: Client, run_id: str) -> str | None:
    """The run's final status once it has ended, else None."""
    from baton.models import TERMINAL_RUN_STATES  # on use, as in _run_end_events

    status = client.get_run(run_id).status
    return status if status in TERMINAL_RUN_STATES else None


def _print_event(event: EventView, *, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(common.to_json(event, indent=None) + "\n")
        sys.stdout.flush()  # a follower piped into another program sees each event as it happens
    else:
        data = ", ".join(f"{k}={json.dumps(v)[:80]}" for k, v in event.data.items())
        console.print(f"{event.at}  [bold]{event.type}[/]  {data}")


@runs_app.command("questions")
def runs_questions(
    run_id: Annotated[str, typer.Argument(help="The run whose pending questions to list.")],
    as_json: JsonFlag = False,
) -> None:
    """List a run's pending questions: async questions (answer one with `baton runs answer <run> <id>
    "<answer>"`), its tool approvals (the call, its risk and how to approve, deny or edit it) and its
    blocking ask, if any (an agent's ask_user or a hosted pause: `baton resume`)."""
    try:
        client = common.client()
        pending = client.pending_questions(run_id)
        asks = [] if as_json else client.pending_asks(run_id)
        tools = [] if as_json else _pending_tool_approvals(client, run_id)
    except BatonError as err:
        fail(err)
    if as_json:
        print_json(pending)  # the questions, as always; the blocking asks: GET /api/runs/{run}/asks
        return
    for ask in asks:
        options = f" (options: {', '.join(ask.options)})" if ask.options else ""
        console.print(
            f"[bold]blocking ask[/] {ask.interaction_id} (node {ask.node}, until {ask.expires_at}): "
            f"{ask.question}{options}\n  answer: {ask.how_to_answer.replace(chr(10), chr(10) + '  ')}",
            soft_wrap=True,
        )
    for text in tools:
        console.print(text, soft_wrap=True)
    if not pending:
        if not asks and not tools:
            console.print(f"run {run_id}: no pending questions")
        return
    console.print(_questions_table(run_id, pending))


def _pending_tool_approvals(client: Client, run_id: str) -> list[str]:
    """The run's pending tool approvals (the inbox lists them; each view carries the call), as text."""
    from baton.cli.tool_approval_text import tool_approval_text

    params = {"kind": "tool_approval", "run": run_id, "order": "oldest", "limit": 50}
    return [tool_approval_text(client.get_tool_approval(run_id, item.id)) for item in inbox_items(client, params)]


def inbox_items(client: Client, params: dict[str, Any]) -> Iterator[InboxItem]:
    """Every item of the inbox listing, following its `next` to the end: a filtered page reads a bounded
    number of items and may hold fewer than its limit, even none, with a `next` past what it read."""
    from baton.contracts import InboxPage

    params = dict(params)
    while True:
        page = InboxPage.model_validate(client.request("GET", "/api/inbox", params=params))
        yield from page.items
        if not page.next:
            return
        params["next"] = page.next


def _questions_table(run_id: str, pending: list[QuestionView]) -> Table:
    """The pending questions, ids whole on one line at 80 columns (they are copied into `runs
    answer`): the id column never wraps, the question and options fold, the time is an age."""
    from rich import box
    from rich.table import Table

    table = Table(title=f"Pending questions of run {run_id}", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("id", no_wrap=True, min_width=max((len(q.interaction_id) for q in pending), default=2))
    table.add_column("node", overflow="fold", max_width=16)
    table.add_column("question", overflow="fold", ratio=3)
    table.add_column("options", overflow="fold", ratio=2)
    table.add_column("age", no_wrap=True)
    quorum = any(q.approval is not None for q in pending)  # the approvals column only when one needs a quorum
    if quorum:
        table.add_column("approvals", overflow="fold")
    for q in pending:
        req = q.request
        options = ", ".join(req.options or [])
        if options and req.allow_free_text:
            options += " (or free text)"
        row = [q.interaction_id, req.node, req.prompt, options or "free text", common.age(q.created_at)]
        table.add_row(*row, *([approvals_text(q)] if quorum else []))
    return table


@runs_app.command("answer")
def runs_answer(
    run_id: Annotated[str, typer.Argument(help="The run.")],
    interaction_id: Annotated[str, typer.Argument(help="The question's id (see `baton runs questions`).")],
    answer: Annotated[str, typer.Argument(help="The answer text.")],
    parse_json: Annotated[
        bool, typer.Option("--parse-json", help='Send the answer as JSON (e.g. \'{"db": "pg"}\').')
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Answer a pending question. The answer is queued for the asking node; await gates waiting on it resume
    (exit 5: stored, but a gate's send failed; the reconciler delivers it)."""
    value: Any = common.parse_json(answer, "ANSWER") if parse_json else answer
    try:
        result = common.client().answer(run_id, interaction_id, value)
    except BatonError as err:
        fail(err)
    if as_json:
        print_json(result)
        common.exit_if_delivery_pending(result.delivery)
        return
    if result.status == "pending" and result.approval is not None:
        counted = "already counted" if result.approval.already_counted else "vote counted"
        console.print(f"{interaction_id}: {counted}; {approval_line(result.approval)}; still pending", soft_wrap=True)
        return
    resumed = f"; resumed: {', '.join(result.released)}" if result.released else ""
    pending = f"; {common.PENDING_DELIVERY}" if result.delivery == "pending" else ""
    console.print(
        f"answered {interaction_id} (node {result.node}): queued for the node{resumed}{pending}", soft_wrap=True
    )
    common.exit_if_delivery_pending(result.delivery)


def approval_line(approval: ApprovalView) -> str:
    """ "1 of 2 approvals, by alice" (and the rejections, if any)."""
    by = f", by {', '.join(approval.approved_by)}" if approval.approved_by else ""
    against = f"; {approval.rejections} rejected ({', '.join(approval.rejected_by)})" if approval.rejections else ""
    return f"{approval.approvals} of {approval.needed} approvals{by}{against}"


def approvals_text(question: QuestionView) -> str:
    return approval_line(question.approval) if question.approval is not None else "-"


def resume(
    run_id: Annotated[str, typer.Option("--run-id", help="The paused run.")],
    answer: Annotated[list[str], typer.Option("--answer", "-a", help="key=value (value parsed as JSON if it can be).")],
    node: Annotated[str | None, typer.Option(help="The paused node, when the run waits at several.")] = None,
    wait_seconds: Annotated[
        int,
        typer.Option(
            "--wait-seconds",
            min=0,
            help="A review's approve_merge / force_merge: wait this long for the merge's outcome (0: do not "
            "wait; `baton review show` tells it later).",
        ),
    ] = 300,
    as_json: JsonFlag = False,
) -> None:
    """Resume a run paused at a human node with answers (stored first, then the gate is released).

    Exits 5 when the answers are stored but their send failed: the reconciler delivers them.
    A review's merge action waits for the merge: exit 0 merged (or nothing to merge), 1 refused or
    rejected by a guard (its reason is printed; the review waits for the operator again), 3 still
    running after --wait-seconds. With --wait-seconds 0 it says "accepted; the merge is pending" (exit 0)."""
    from baton.contracts import ReviewActionResult  # imported here: `baton --help` loads no pydantic
    from baton.domain.review_gate import MERGE_ACTIONS

    answers = common.parse_answers(answer)
    try:
        client = common.client()
        result = client.resume(run_id, answers, node=node)
        merging = (
            isinstance(result, ReviewActionResult)
            and result.action in MERGE_ACTIONS
            and result.queued
            and result.delivery != "pending"  # not sent yet: no merge to wait for (exit 5 below)
        )
        progress = client.wait_for_merge(run_id, gate=node, timeout=wait_seconds) if merging else None
    except BatonError as err:
        fail(err)
    if as_json:
        print_json(result if progress is None else {**result.model_dump(), "merge": progress.model_dump()})
    elif progress is not None:
        console.print(f"run {run_id} node {result.node}: {merge_line(progress)}", markup=False, highlight=False)
    else:
        state = "resumed" if result.resumed else "answer stored; the gate will pick it up"
        if result.delivery == "pending":
            state = common.PENDING_DELIVERY
        console.print(f"run {run_id} node {result.node}: {state}")
    common.exit_if_delivery_pending(result.delivery)
    if progress is not None and progress.status not in LANDED:
        if progress.status == "pending":
            console.print(f"see: {cli_command()} review show {run_id}", markup=False, highlight=False)
            if wait_seconds == 0:
                return  # not waited for: accepted is the whole answer asked for
        raise typer.Exit(code=3 if progress.status == "pending" else 1)


# The merge actions that ended as asked: merged, nothing to merge, or left on the run branch (`merge_into: none`).
LANDED = ("merged", "noop", "not_merged")


def merge_line(progress: MergeProgress) -> str:
    """One line on what a merge action became, naming the reviewed commit it merges."""
    reviewed = f" (the reviewed commit {progress.reviewed_head[:12]})" if progress.reviewed_head else ""
    if progress.status in LANDED:
        into = f" into {progress.merged_into}" if progress.merged_into else " (left on the run branch)"
        return f"{progress.status} {progress.final_commit or ''}{into}{reviewed}"
    if progress.status == "pending":
        return f"accepted; the merge{reviewed} is pending"
    return f"merge {progress.status}{reviewed}: {progress.reason or ''}"


runs_app.command("ask", help=ASK_HELP)(runs_ask)  # baton/cli/ask.py: the blocking ask, its ladder and quorum flags
runs_app.command("decide")(runs_decide)  # baton/cli/tool_decide.py: a tool approval's decision as flags


@runs_app.command("pending")
def runs_pending(as_json: JsonFlag = False) -> None:
    """What waits for a person, per kind of pause: how many, and how long the oldest has waited (the same
    ages the deployed stack's OldestPendingAgeSeconds metric and alarms watch; read from GET /api/inbox)."""
    oldest: dict[str, tuple[int, str]] = {}
    counts: dict[str, int] = {}
    try:
        for item in inbox_items(common.client(), {"order": "oldest", "limit": 200}):
            counts[item.kind] = counts.get(item.kind, 0) + 1
            oldest.setdefault(item.kind, (item.waited_s, item.run_id))  # oldest first: the first one
    except BatonError as err:
        fail(err)
    summary = {kind: {"pending": n, "oldest_age_seconds": oldest[kind][0]} for kind, n in counts.items()}
    if as_json:
        print_json(summary)
        return
    if not counts:
        console.print("nothing is waiting for a person")
    for kind, n in sorted(counts.items()):
        age, run_id = oldest[kind]
        console.print(f"{kind}: {n} pending, oldest waited {age}s (run {run_id})")
