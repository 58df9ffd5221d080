"""`baton workflow …`: inspect a session's interrupts and resume, claim or cancel them.

    baton workflow inspect <session-id> [--all] [--json]
    baton workflow resume-interrupt <session-id> [--interrupt-id ID] --input '<json>' [--edit-state 'path=value']…
    baton workflow claim-interrupt <session-id> [--interrupt-id ID] [--lease-seconds N] [--force --reason '<text>']
    baton workflow renew-claim <session-id> [--interrupt-id ID] [--lease-seconds N]
    baton workflow release-claim <session-id> [--interrupt-id ID]
    baton workflow reassign-interrupt <session-id> --to <operator> [--interrupt-id ID] [--reason '<text>']
    baton workflow cancel-interrupt <session-id> [--interrupt-id ID] --reason '<text>'

Without --interrupt-id the latest pending interrupt of the session is the target. A claim holds for its
lease (default 15 min, at most 8 h: `baton/services/claims.py`); "claimed by X until HH:MM" says until when.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from inspect import Parameter, Signature
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

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
    from baton.contracts import InterruptClaimed, InterruptView

workflow_app = typer.Typer(
    help="Interrupts of a session: inspect, resume (with state edits), claim, cancel.", no_args_is_help=True
)
InterruptIdOption = Annotated[
    str | None, typer.Option("--interrupt-id", help="Which interrupt (default: the session's latest pending one).")
]
OperatorOption = Annotated[
    str | None,
    typer.Option(
        "--operator", help="Must name the caller (the API refuses another): who acts is the token's.", hidden=True
    ),
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
    if rec.status == "answered" and rec.outcome:  # nobody answered: the declared default was taken
        return [f"    {rec.outcome}: at {rec.resolved_at or ''} with {json.dumps(rec.value)} (nobody's answer)"]
    if rec.status == "answered":
        lines = [f"    resumed:   by {who} at {rec.resolved_at or ''} with {json.dumps(rec.value)}"]
        if rec.state_edits:
            lines.append(f"    edits:     {', '.join(rec.state_edits)}")
        return lines
    why = "timeout" if rec.timed_out else f"by {who}: {rec.reason}"
    return [f"    cancelled: {why}"]


def until_text(at: str | None) -> str:
    """A lease's end as HH:MM (UTC), or "?" when unreadable."""
    try:
        return datetime.fromisoformat((at or "").replace("Z", "+00:00")).astimezone(UTC).strftime("%H:%M UTC")
    except ValueError:
        return "?"


def claim_line(rec: InterruptView) -> str:
    """ "by X until HH:MM UTC" (or "nobody" when unclaimed or the lease has ended)."""
    if not rec.claimed_by:
        return "nobody"
    return f"by {rec.claimed_by} until {until_text(rec.lease_expires_at)}"


def render_interrupt(rec: InterruptView, session_id: str, now: datetime | None = None) -> list[str]:
    """The seed's `workflow inspect` block for one interrupt (plain text lines)."""
    created = rec.created_at or ""
    lines = [f"  [{rec.status.upper()}] {rec.interrupt_id}", f"    prompt:    {rec.prompt}"]
    lines.append(f"    workflow:  {rec.workflow_id or '-'}")
    lines.append(f"    created:   {created} (age {_age(created, now)})")
    if rec.expires_at:
        lines.append(f"    expires:   {rec.expires_at}")
    if rec.claimed_by:
        lines.append(f"    claimed:   {claim_line(rec)}")
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
    state_version: Annotated[
        str | None,
        typer.Option(
            "--state-version",
            help="The state version the edits were decided on (`inspect --json`: stateVersion); default: the "
            "one this command reads. Another version is refused (409) instead of edited.",
        ),
    ] = None,
    operator: OperatorOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Resume the session's latest pending interrupt (or --interrupt-id) with a value and state edits
    (exit 5: stored, but the send to the workflow failed; the reconciler delivers it)."""
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
        version = state_version or target.state_version or None  # bound to the state this command resolved
        result = client.resume_interrupt(
            target.interrupt_id, value, edit_state or [], operator=operator, state_version=version
        )
    except ValidationFailedError as err:
        err_console.print("[yellow]the interrupt is still open; fix the value or edit and try again[/]")
        _fail(err)
    except BatonError as err:
        _fail(err)
    if as_json:
        common.print_json(result)
        common.exit_if_delivery_pending(result.delivery)
        return
    rec = result.interrupt
    waiter = "the workflow continues" if rec.hosted else "the waiting agent receives it"
    if result.delivery == "pending":
        waiter = common.PENDING_DELIVERY
    edits = len(rec.state_edits or [])
    console.print(
        escape(
            f"resumed interrupt {rec.interrupt_id} (session {session_id}) with {json.dumps(rec.value)}; "
            f"{edits} state edit(s) applied; {waiter}"
        )
    )
    common.exit_if_delivery_pending(result.delivery)


LeaseOption = Annotated[
    int | None, typer.Option("--lease-seconds", help="How long the claim holds (60..28800; default 900).")
]
SessionArgument = Annotated[str, typer.Argument(help="The session (run) id.")]
# The claim commands' own options come after these, which each of them takes.
_CLAIM_TARGET = [
    Parameter("session_id", Parameter.POSITIONAL_OR_KEYWORD, annotation=SessionArgument),
    Parameter("interrupt_id", Parameter.KEYWORD_ONLY, default=None, annotation=InterruptIdOption),
    Parameter("operator", Parameter.KEYWORD_ONLY, default=None, annotation=OperatorOption),
    Parameter("as_json", Parameter.KEYWORD_ONLY, default=False, annotation=JsonFlag),
]
ClaimCall = Callable[..., "InterruptClaimed"]


def _claim_command(
    name: str, options: dict[str, tuple[Any, Any]], *, check: Callable[..., None] | None = None
) -> Callable[[ClaimCall], ClaimCall]:
    """Register `baton workflow <name>`: the decorated `call(client, interrupt_id, operator=..., **options)`
    makes the claim call. The session argument, --interrupt-id, --operator and --json are the same for
    every claim command (added here); `options` are the command's own, name -> (annotation, default);
    `check(**options)` refuses bad usage before any call; the target is resolved and the result printed
    alike (`_claim_call`)."""

    def register(call: ClaimCall) -> ClaimCall:
        def command(
            session_id: str, *, interrupt_id: str | None, operator: str | None, as_json: bool, **own: Any
        ) -> None:
            if check is not None:
                check(**own)
            _claim_call(session_id, interrupt_id, as_json, lambda c, iid: call(c, iid, operator=operator, **own))

        own = [
            Parameter(key, Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
            for key, (annotation, default) in options.items()
        ]
        parameters = [*_CLAIM_TARGET, *own]
        command.__signature__ = Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in parameters}
        command.__doc__ = call.__doc__
        workflow_app.command(name)(command)
        return call

    return register


def _claim_call(
    session_id: str, interrupt_id: str | None, as_json: bool, call: Callable[[Client, str], InterruptClaimed]
) -> None:
    """Resolve the target, make the claim call, print the result (claimed by X until HH:MM)."""
    try:
        client = common.client()
        target = _target(client, session_id, interrupt_id)
        result = call(client, target.interrupt_id)
    except BatonError as err:
        _fail(err)
    if as_json:
        common.print_json(result)
        return
    rec = result.interrupt
    console.print(escape(f"interrupt {rec.interrupt_id} claimed {claim_line(rec)}"))


_ForceOption = Annotated[bool, typer.Option("--force", help="Take over another operator's claim (needs --reason).")]
_TakeOverReason = Annotated[str | None, typer.Option("--reason", help="Why you take it over (recorded).")]


def _take_over_says_why(*, force: bool, reason: str | None, **_: Any) -> None:
    if force and not (reason or "").strip():
        usage("--force takes over another operator's claim: say why with --reason '<text>'")


@_claim_command(
    "claim-interrupt",
    {"lease_seconds": (LeaseOption, None), "force": (_ForceOption, False), "reason": (_TakeOverReason, None)},
    check=_take_over_says_why,
)
def claim_interrupt(
    client: Client, iid: str, *, operator: str | None, lease_seconds: int | None, force: bool, reason: str | None
) -> InterruptClaimed:
    """Claim an interrupt so other operators see you are working on it (until the lease ends)."""
    return client.claim_interrupt(iid, force=force, reason=reason, lease_seconds=lease_seconds, operator=operator)


@_claim_command("renew-claim", {"lease_seconds": (LeaseOption, None)})
def renew_claim(client: Client, iid: str, *, operator: str | None, lease_seconds: int | None) -> InterruptClaimed:
    """Extend your claim's lease (counted from now)."""
    return client.renew_claim(iid, lease_seconds=lease_seconds, operator=operator)


@_claim_command("release-claim", {})
def release_claim(client: Client, iid: str, *, operator: str | None) -> InterruptClaimed:
    """Give your claim up: the interrupt is unclaimed."""
    return client.release_claim(iid, operator=operator)


_ToOption = Annotated[str, typer.Option("--to", help="The operator who gets the claim.")]
_ReasonOption = Annotated[str | None, typer.Option("--reason", help="Why (recorded).")]


@_claim_command(
    "reassign-interrupt",
    {"to": (_ToOption, Parameter.empty), "reason": (_ReasonOption, None), "lease_seconds": (LeaseOption, None)},
)
def reassign_interrupt(
    client: Client, iid: str, *, operator: str | None, to: str, reason: str | None, lease_seconds: int | None
) -> InterruptClaimed:
    """Give the interrupt's claim to a named operator (recorded as interrupt_reassigned)."""
    return client.reassign_interrupt(iid, to, reason=reason, lease_seconds=lease_seconds, operator=operator)


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
