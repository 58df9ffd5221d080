"""`baton workflow …`: inspect a session's interrupts and resume, claim or cancel them.

    baton workflow inspect <session-id> [--all] [--json]
    baton workflow resume-interrupt <session-id> [--interrupt-id ID] --input '<json>' [--edit-state 'path=value']…
    baton workflow claim-interrupt <session-id> [--interrupt-id ID] [--force]
    baton workflow cancel-interrupt <session-id> [--interrupt-id ID] --reason '<text>'

Without --interrupt-id the latest pending interrupt of the session is the target.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from baton.errors import BatonError, ValidationFailedError

workflow_app = typer.Typer(
    help="Interrupts of a session: inspect, resume (with state edits), claim, cancel.", no_args_is_help=True
)
console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
InterruptIdOption = Annotated[
    str | None, typer.Option("--interrupt-id", help="Which interrupt (default: the session's latest pending one).")
]
OperatorOption = Annotated[
    str | None, typer.Option("--operator", help="Local stack only: act as this operator name.", hidden=True)
]


def _client() -> Any:
    from baton.client.sdk import Client

    return Client()


def _fail(err: BatonError) -> NoReturn:
    err_console.print(f"[bold red]error[/] ({err.code}): {escape(err.message)}")
    for key, value in err.details.items():
        if key not in ("error", "interrupt", "problems"):
            err_console.print(f"  {key}: {escape(json.dumps(value, default=str)[:400])}")
    raise typer.Exit(code=1)


def _usage(message: str) -> NoReturn:
    err_console.print(f"[bold red]error[/]: {escape(message)}")
    raise typer.Exit(code=2)


def _age(created_at: str, now: datetime | None = None) -> str:
    try:
        created = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
    except ValueError:
        return "?"
    seconds = int(((now or datetime.now(UTC)) - created).total_seconds())
    if seconds < 120:
        return f"{max(seconds, 0)}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    if seconds < 172800:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def render_interrupt(rec: dict[str, Any], session_id: str, now: datetime | None = None) -> list[str]:
    """The seed's `workflow inspect` block for one interrupt (plain text lines)."""
    iid = rec["id"]
    lines = [f"  [{rec['status'].upper()}] {iid}", f"    prompt:    {rec['prompt']}"]
    lines.append(f"    workflow:  {rec.get('workflowId') or '-'}")
    lines.append(f"    created:   {rec['createdAt']} (age {_age(rec['createdAt'], now)})")
    if rec.get("expiresAt"):
        lines.append(f"    expires:   {rec['expiresAt']}")
    if rec.get("claimedBy"):
        lines.append(f"    claimed:   by {rec['claimedBy']} at {rec['claimedAt']}")
    schema = rec.get("jsonSchema") or rec.get("schema")
    label = "jsonSchema" if rec.get("jsonSchema") else "schema"
    lines.append(f"    {label + ':':<10} {json.dumps(schema, separators=(',', ':')) if schema else '(any JSON value)'}")
    lines.append("    state:")
    state_text = json.dumps(rec.get("state") or {}, indent=2)
    lines.extend("      " + line for line in state_text.splitlines())
    if rec["status"] == "pending":
        base = f"baton workflow resume-interrupt {session_id} --interrupt-id {iid}"
        lines += [
            "",
            "    Resume with:",
            f"      {base} --input='<json>'",
            "    Or edit state first:",
            f"      {base} --edit-state='path.to.field=value' --input='<json>'",
        ]
    else:
        who = rec.get("resolvedBy") or "baton"
        when = rec.get("resolvedAt") or ""
        if rec["status"] == "answered":
            lines.append(f"    resumed:   by {who} at {when} with {json.dumps(rec.get('value'))}")
            if rec.get("stateEdits"):
                lines.append(f"    edits:     {', '.join(rec['stateEdits'])}")
        else:
            why = "timeout" if rec.get("timedOut") else f"by {who}: {rec.get('reason')}"
            lines.append(f"    cancelled: {why}")
    return lines


def _target(client: Any, session_id: str, interrupt_id: str | None) -> dict[str, Any]:
    if interrupt_id:
        rec: dict[str, Any] = client.get_interrupt(interrupt_id)
        if rec["sessionId"] != session_id:
            _usage(f"interrupt {interrupt_id} belongs to session {rec['sessionId']}, not {session_id}")
        return rec
    pending = client.list_interrupts(status="pending", session_id=session_id)
    if not pending:
        _usage(f"session {session_id} has no pending interrupt (see `baton workflow inspect {session_id} --all`)")
    latest: dict[str, Any] = max(pending, key=lambda r: (r["createdAt"], r["id"]))
    return latest


@workflow_app.command("inspect")
def inspect(
    session_id: Annotated[str, typer.Argument(help="The session (run) id.")],
    show_all: Annotated[bool, typer.Option("--all", help="Also resolved and cancelled interrupts.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Show a session's pending interrupts (or all, with --all): prompt, schema, state, resume commands."""
    try:
        found = _client().list_interrupts(status=None if show_all else "pending", session_id=session_id)
    except BatonError as err:
        _fail(err)
    if as_json:
        sys.stdout.write(json.dumps({"sessionId": session_id, "interrupts": found}, indent=2) + "\n")
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
        _usage(
            f"--input is not JSON: {input_json!r}. Quote strings as JSON, e.g. --input '\"staging\"'"
            if input_json
            else "--input is empty; give a JSON value"
        )
    try:
        client = _client()
        target = _target(client, session_id, interrupt_id)
        result = client.resume_interrupt(target["id"], value, edit_state or [], operator=operator)
    except ValidationFailedError as err:
        err_console.print("[yellow]the interrupt is still open; fix the value or edit and try again[/]")
        _fail(err)
    except BatonError as err:
        _fail(err)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return
    rec = result["interrupt"]
    waiter = "the workflow continues" if rec.get("hosted") else "the waiting agent receives it"
    edits = len(rec.get("stateEdits") or [])
    console.print(
        escape(
            f"resumed interrupt {rec['id']} (session {session_id}) with {json.dumps(rec.get('value'))}; "
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
        client = _client()
        target = _target(client, session_id, interrupt_id)
        result = client.claim_interrupt(target["id"], force=force, operator=operator)
    except BatonError as err:
        _fail(err)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return
    rec = result["interrupt"]
    console.print(escape(f"interrupt {rec['id']} claimed by {rec['claimedBy']} at {rec['claimedAt']}"))


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
        client = _client()
        target = _target(client, session_id, interrupt_id)
        result = client.cancel_interrupt(target["id"], reason, operator=operator)
    except BatonError as err:
        _fail(err)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return
    console.print(escape(f"interrupt {result['interrupt']['id']} cancelled: {reason}"))
