"""`baton workflow …`: inspect a session's interrupts and resume, claim or cancel them.

    baton workflow inspect <session-id> [--all] [--json]
    baton workflow resume-interrupt <session-id> [--interrupt-id ID] --input '<json>' [--edit-state 'path=value']…
    baton workflow claim-interrupt <session-id> [--interrupt-id ID] [--force]
    baton workflow cancel-interrupt <session-id> [--interrupt-id ID] --reason '<text>'

Without --interrupt-id the latest pending interrupt of the session is the target.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.markup import escape

from baton.cli import common
from baton.cli.common import JsonFlag, err_console, usage
from baton.cli.common import age as _age
from baton.cli.common import plain_console as console
from baton.errors import BatonError, ValidationFailedError
from baton.hints import cli_command

if TYPE_CHECKING:
    from datetime import datetime

    from baton.client.sdk import Client
    from baton.contracts import InterruptView

workflow_app = typer.Typer(
    help="Interrupts of a session: inspect, resume (with state edits), claim, cancel.", no_args_is_help=True
)
InterruptIdOption = Annotated[
    str | None, typer.Option("--interrupt-id", help="Which interrupt (default: the session's latest pending one).")
]
OperatorOption = Annotated[
    str | None, typer.Option("--operator", help="Local stack only: act as this operator name.", hidden=True)
]


def _fail(err: BatonError) -> NoReturn:
    common.fail(err, hide=("interrupt", "problems"))  # the record is shown by `inspect`, the problem by the message


def _outcome_lines(rec: InterruptView, session_id: str) -> list[str]:
    """How to resume a pending interrupt, or how a settled one ended."""
    if rec.status == "pending":
        base = f"{cli_command()} workflow resume-interrupt {session_id} --interrupt-id {rec.interrupt_id}"
        return [
            "",
            "    Resume with:",
            f"      {base} --input='<json>'",
            "    Or edit state first:",
            f"      {base} --edit-state='path.to.field=value' --input='<json>'",
        ]
    who = rec.resolved_by or "baton"
    if rec.status == "answered":
        lines = [f"    resumed:   by {who} at {rec.resolved_at or ''} with {json.dumps(rec.value)}"]
        if rec.state_edits:
            lines.append(f"    edits:     {', '.join(rec.state_edits)}")
        return lines
    why = "timeout" if rec.timed_out else f"by {who}: {rec.reason}"
    return [f"    cancelled: {why}"]


def render_interrupt(rec: InterruptView, session_id: str, now: datetime | None = None) -> list[str]:
    """The seed's `workflow inspect` block for one interrupt (plain text lines)."""
    created = rec.created_at or ""
    lines = [f"  [{rec.status.upper()}] {rec.interrupt_id}", f"    prompt:    {rec.prompt}"]
    lines.append(f"    workflow:  {rec.workflow_id or '-'}")
    lines.append(f"    created:   {created} (age {_age(created, now)})")
    if rec.expires_at:
        lines.append(f"    expires:   {rec.expires_at}")
    if rec.claimed_by:
        lines.append(f"    claimed:   by {rec.claimed_by} at {rec.claimed_at}")
    schema = rec.json_schema or rec.schema_
    label = "jsonSchema" if rec.json_schema else "schema"
    lines.append(f"    {label + ':':<10} {json.dumps(schema, separators=(',', ':')) if schema else '(any JSON value)'}")
    lines.append("    state:")
    state_text = json.dumps(rec.state or {}, indent=2)
    lines.extend("      " + line for line in state_text.splitlines())
    return lines + _outcome_lines(rec, session_id)


def _target(client: Client, session_id: str, interrupt_id: str | None) -> InterruptView:
    if interrupt_id:
        rec = client.get_interrupt(interrupt_id)
        if rec.session_id != session_id:
            usage(f"interrupt {interrupt_id} belongs to session {rec.session_id}, not {session_id}")
        return rec
    pending = client.list_interrupts(status="pending", session_id=session_id)
    if not pending:
        hint = f"{cli_command()} workflow inspect {session_id} --all"
        usage(f"session {session_id} has no pending interrupt (see `{hint}`)")
    return max(pending, key=lambda r: (r.created_at or "", r.interrupt_id))


@workflow_app.command("inspect")
def inspect(
    session_id: Annotated[str, typer.Argument(help="The session (run) id.")],
    show_all: Annotated[bool, typer.Option("--all", help="Also resolved and cancelled interrupts.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Show a session's pending interrupts (or all, with --all): prompt, schema, state, resume commands."""
    try:
        found = common.client().list_interrupts(status=None if show_all else "pending", session_id=session_id)
    except BatonError as err:
        _fail(err)
    if as_json:
        common.print_json({"sessionId": session_id, "interrupts": found})
        return
    lines = [f"Session: {session_id}", f"Interrupts: {len(found)}"]
    for rec in found:
        lines.append("")
        lines.extend(render_interrupt(rec, session_id))
    if not found and not show_all:
        lines.append("  (none pending; --all shows resumed and cancelled ones)")
    console.print(escape("\n".join(lines)))


@workflow_app.command("resume-interrupt")
def resume_interrupt(
    session_id: Annotated[str, typer.Argument(help="The session (run) id.")],
    *,
    input_json: Annotated[
        str, typer.Option("--input", help="The value as JSON, e.g. '\"staging\"', 5, '{\"ok\": true}'.")
    ],
    interrupt_id: InterruptIdOption = None,
    edit_state: Annotated[
        list[str] | None,
        typer.Option("--edit-state", help="path=value (repeatable); value JSON-parsed when possible, else a string."),
    ] = None,
    operator: OperatorOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Resume the session's latest pending interrupt (or --interrupt-id) with a value and state edits."""
    try:
        value = json.loads(input_json)
    except ValueError:
        usage(
            f"--input is not JSON: {input_json!r}. Quote strings as JSON, e.g. --input '\"staging\"'"
            if input_json
            else "--input is empty; give a JSON value"
        )
    try:
        client = common.client()
        target = _target(client, session_id, interrupt_id)
        result = client.resume_interrupt(target.interrupt_id, value, edit_state or [], operator=operator)
    except ValidationFailedError as err:
        err_console.print("[yellow]the interrupt is still open; fix the value or edit and try again[/]")
        _fail(err)
    except BatonError as err:
        _fail(err)
    if as_json:
        common.print_json(result)
        return
    rec = result.interrupt
    waiter = "the workflow continues" if rec.hosted else "the waiting agent receives it"
    edits = len(rec.state_edits or [])
    console.print(
        escape(
            f"resumed interrupt {rec.interrupt_id} (session {session_id}) with {json.dumps(rec.value)}; "
            f"{edits} state edit(s) applied; {waiter}"
        )
    )


@workflow_app.command("claim-interrupt")
def claim_interrupt(
    session_id: Annotated[str, typer.Argument(help="The session (run) id.")],
    interrupt_id: InterruptIdOption = None,
    force: Annotated[bool, typer.Option("--force", help="Take over another operator's claim.")] = False,
    operator: OperatorOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Claim an interrupt so other operators see you are working on it."""
    try:
        client = common.client()
        target = _target(client, session_id, interrupt_id)
        result = client.claim_interrupt(target.interrupt_id, force=force, operator=operator)
    except BatonError as err:
        _fail(err)
    if as_json:
        common.print_json(result)
        return
    rec = result.interrupt
    console.print(escape(f"interrupt {rec.interrupt_id} claimed by {rec.claimed_by} at {rec.claimed_at}"))


@workflow_app.command("cancel-interrupt")
def cancel_interrupt(
    session_id: Annotated[str, typer.Argument(help="The session (run) id.")],
    reason: Annotated[str, typer.Option("--reason", help="Why; shown to the waiter.")],
    interrupt_id: InterruptIdOption = None,
    operator: OperatorOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Cancel an interrupt: the SDK waiter raises InterruptCancelledError, a hosted run fails."""
    try:
        client = common.client()
        target = _target(client, session_id, interrupt_id)
        result = client.cancel_interrupt(target.interrupt_id, reason, operator=operator)
    except BatonError as err:
        _fail(err)
    if as_json:
        common.print_json(result)
        return
    console.print(escape(f"interrupt {result.interrupt.interrupt_id} cancelled: {reason}"))
