"""`baton policy backtest FILE` and `baton policy report` (issue 31): a policy against the tool calls
people decided. backtest replays them under a policy file, evaluated here (`Policy.decide`); report reads
the shadow decisions the policy in force recorded (`policy_decided` among each run's events). Both
print what would change, grouped (`baton.policy.backtest`). Operator commands: they read every run's
decided approvals (`GET /api/tool-approvals`, page by page).

Registered on the `policy` group by `register(policy_app)`."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from baton.cli import common
from baton.cli.common import JsonFlag, console, err_console, fail, print_json
from baton.errors import BatonError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from baton.contracts.policy import PolicyDecision
    from baton.contracts.runs import EventView
    from baton.contracts.tool_approvals import DecidedToolApproval
    from baton.policy.backtest import ChangedCall, PolicyComparison

DEFAULT_SINCE = "7d"
EVENTS_PAGE = 500  # the events route's largest page
_AGO = re.compile(r"^(\d+)([smhdw])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}

SinceOption = Annotated[
    str,
    typer.Option("--since", help="Calls made since: an age (30m, 12h, 7d, 2w) or an ISO 8601 time (UTC if no zone)."),
]


def since_time(text: str, now: datetime | None = None) -> str:
    """`--since` as Baton's ISO form: an age before `now`, or a time (without a zone: UTC)."""
    from baton.ids import iso

    ago = _AGO.match(text.strip())
    if ago:
        return iso((now or datetime.now(UTC)) - timedelta(seconds=int(ago[1]) * _UNIT_SECONDS[ago[2]]))
    try:
        at = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        return iso(at if at.tzinfo is not None else at.replace(tzinfo=UTC))
    except (ValueError, OverflowError):
        raise typer.BadParameter(f"{text!r} is neither an age (7d, 12h) nor an ISO 8601 time") from None


def _events(run_id: str) -> Iterator[EventView]:
    """The run's events in order (the `policy_decided` records among them), page after page."""
    after: str | None = None
    while True:
        page = common.client().events(run_id, after=after, limit=EVENTS_PAGE)
        yield from page.events
        if len(page.events) < EVENTS_PAGE or page.next is None:  # `next` is a tail cursor: never null
            return
        after = page.next


def _decided(since: str) -> list[DecidedToolApproval]:
    try:
        return list(common.client().decided_tool_approvals(since=since))
    except BatonError as err:
        fail(err)


def backtest(
    policy_file: Annotated[Path, typer.Argument(help="The Cedar policy file to replay.", exists=True, dir_okay=False)],
    since: SinceOption = DEFAULT_SINCE,
    as_json: JsonFlag = False,
) -> None:
    """Replay every tool call a person decided since then under FILE and print what would change."""
    from baton.policy.backtest import backtest as replay
    from baton.policy.engine import Policy, PolicyError

    try:
        policy = Policy.load(policy_file.read_text(encoding="utf-8"))
    except PolicyError as err:
        for problem in err.problems:
            err_console.print(f"[bold red]error[/]: {escape(problem)}")
        raise typer.Exit(code=1) from None
    start = since_time(since)
    result = replay(policy, _decided(start), since=start)
    if as_json:
        print_json(result)
        return
    _print(result, f"Backtest of {policy_file} ({policy.version}) over tool calls since {start}")


def report(since: SinceOption = DEFAULT_SINCE, as_json: JsonFlag = False) -> None:
    """Where the shadow policy's decisions differ from what people decided, since then."""
    from baton.policy.backtest import compare, shadow_decisions

    start = since_time(since)
    approvals = _decided(start)
    shadow: dict[str, PolicyDecision] = {}
    try:
        for run_id in sorted({a.run_id for a in approvals}):  # each run's events, page by page
            shadow.update(shadow_decisions(_events(run_id)))
    except BatonError as err:
        fail(err)
    result = compare(approvals, lambda a: shadow.get(a.interaction_id), since=start)
    if as_json:
        print_json(result)
        return
    _print(result, f"Shadow policy vs people, tool calls since {start}")
    if result.without_policy_decision:
        console.print(f"{result.without_policy_decision} decided calls have no shadow decision")


def _line(call: ChangedCall) -> str:
    by = f" by {call.decided_by}" if call.decided_by else ""
    rule = call.rule or "(no rule)"
    return escape(f"  {call.run_id} {call.interaction_id} {call.tool} {call.arguments}  rule {rule}: {call.person}{by}")


def _print(result: PolicyComparison, title: str) -> None:
    console.print(f"[bold]{escape(title)}[/]: {result.compared} compared")
    groups = [
        ("Allowed that a person denied", result.allowed_that_a_person_denied),
        ("Denied that a person approved", result.denied_that_a_person_approved),
    ]
    for heading, calls in groups:
        console.print(f"{heading}: {len(calls)}")
        for call in calls:
            console.print(_line(call))
    console.print(f"Asked that was always approved: {len(result.asked_that_was_always_approved)}")
    for group in result.asked_that_was_always_approved:
        console.print(escape(f"  {group.tool} rule {group.rule or '(no rule)'}: {group.count} calls, all approved"))
        for call in group.calls:
            console.print("  " + _line(call))
    console.print(f"Unchanged: {result.unchanged}")
    if result.not_by_person:
        console.print(f"Not compared (a grant or the deadline decided): {result.not_by_person}")


def register(app: typer.Typer) -> None:
    """Add `backtest` and `report` to the `policy` command group."""
    app.command("backtest")(backtest)
    app.command("report")(report)
