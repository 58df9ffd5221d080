"""`baton runs decide RUN ID --approve | --deny REASON | --edit ARGS`: a person's decision on a tool
approval, spelled as flags rather than the JSON `baton runs answer ... --parse-json` takes (the same
route, `POST /api/runs/{run}/interactions/{id}/answer`, and the server's checks: a bad edit is a 422 at
the argument)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer

from baton.cli import common
from baton.cli.common import JsonFlag, console, fail, print_json
from baton.errors import BatonError

Scope = Literal["run", "session"]


def runs_decide(  # noqa: PLR0913, PLR0917 - a Typer command: each of its options is a parameter
    run_id: Annotated[str, typer.Argument(help="The run.")],
    interaction_id: Annotated[str, typer.Argument(help="The tool approval's id (see `baton runs questions`).")],
    approve: Annotated[bool, typer.Option("--approve", help="Let the call run as asked.")] = False,
    deny: Annotated[str | None, typer.Option("--deny", help="Refuse it; the reason is what the agent reads.")] = None,
    edit: Annotated[
        str | None, typer.Option("--edit", help='Approve it with these arguments (JSON, e.g. \'{"path": "a.md"}\').')
    ] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="Why (with --approve or --edit).")] = None,
    remember: Annotated[
        Scope | None, typer.Option("--remember", help="With --approve: also allow this tool for the run or session.")
    ] = None,
    remember_for: Annotated[
        int, typer.Option("--remember-for", min=1, help="How long the remembered grant lasts, in seconds.")
    ] = 3600,
    as_json: JsonFlag = False,
) -> None:
    """Decide a pending tool approval: approve, deny with a reason, or approve edited arguments."""
    chosen = [flag for flag, given in (("--approve", approve), ("--deny", deny), ("--edit", edit)) if given]
    if len(chosen) != 1:
        raise typer.BadParameter("give exactly one of --approve, --deny REASON, --edit ARGS", param_hint="DECISION")
    if remember and not approve:  # the server's rule, said before anything is sent
        raise typer.BadParameter("a grant is remembered only with --approve", param_hint="--remember")
    answer: dict[str, Any]
    if deny is not None:
        answer = {"decision": "deny", "reason": deny}
    else:
        answer = (
            {"decision": "approve"}
            if approve
            else {"decision": "edit", "arguments": common.parse_json(edit or "", "--edit")}
        )
        answer |= {"reason": reason} if reason else {}
        answer |= {"remember": {"scope": remember, "expires_in_seconds": remember_for}} if remember else {}
    try:
        client = common.client()
        client.answer(run_id, interaction_id, answer)
        view = client.get_tool_approval(run_id, interaction_id)
    except BatonError as err:
        fail(err)
    if as_json:
        print_json(view)
        return
    decided = view.decision
    if decided is None:  # a quorum: this was one vote
        console.print(f"{interaction_id}: vote counted; still {view.status}", soft_wrap=True)
        return
    said = {"approve": "approved", "deny": "denied", "edit": "approved with edited arguments"}[decided.decision]
    why = f": {decided.reason}" if decided.reason else ""
    console.print(f"{interaction_id} ({view.tool}): {said} by {decided.decided_by}{why}", soft_wrap=True)
