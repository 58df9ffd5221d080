"""`baton audit verify|export`: a run's tamper-evident decision log (`baton/domain/audit.py`).
Operator commands: an agent's token gets the API's 403."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from baton.cli import common
from baton.cli.common import JsonFlag, console, err_console, fail, print_json, to_json
from baton.errors import BatonError

audit_app = typer.Typer(help="The tamper-evident decision log of a run: verify, export.", no_args_is_help=True)


@audit_app.command("verify")
def audit_verify(
    run_id: Annotated[str, typer.Argument(help="The run whose decision chain to recompute.")],
    as_json: JsonFlag = False,
) -> None:
    """Recompute the run's decision chain; name the first record that does not match (exit 1)."""
    try:
        verdict = common.client().audit_verify(run_id)
    except BatonError as err:
        fail(err)
    for note in [] if as_json else verdict.unchained:
        console.print(f"{note.event_id} ({note.type}, {note.at}): {note.message}")
    if as_json:
        print_json(verdict)
    elif verdict.valid:
        console.print(f"[green]valid[/]: {verdict.records} decision records, head seq {verdict.head_seq}")
    else:
        bad = verdict.first_mismatch
        err_console.print(f"[bold red]invalid[/]: {bad.message if bad else 'the chain does not match'}")
        if bad is not None:
            err_console.print(f"  seq: {bad.seq}\n  event: {bad.event_id or '-'}\n  problem: {bad.problem}")
            err_console.print(f"  expected: {bad.expected}\n  stored:   {bad.stored}")
    if not verdict.valid:
        raise typer.Exit(code=1)


@audit_app.command("export")
def audit_export(
    run_id: Annotated[str, typer.Argument(help="The run whose decisions to export.")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file (default: standard output).")
    ] = None,
) -> None:
    """Write the run's decisions as JSON Lines, in chain order (one record per line, with seq and hashes)."""
    try:
        lines = [to_json(record, indent=None) + "\n" for record in common.client().audit_records(run_id)]
    except BatonError as err:
        fail(err)
    if output is None:
        sys.stdout.writelines(lines)
        return
    output.write_text("".join(lines), encoding="utf-8")
    err_console.print(f"{len(lines)} decision records written to {output}")
