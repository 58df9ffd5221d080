"""`baton migrate`: one-off changes to a deployed team's table that a stack update alone does not make.
The work is `baton.runtime.migrations`', imported when the command runs (`baton --help` loads neither
boto3 nor pydantic)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from baton.cli.common import err_console

migrate_app = typer.Typer(
    no_args_is_help=True, help="One-off changes to a deployed table, run once after the stack update that needs them."
)

INDEX_KEYS_HELP = "\n\n".join(
    (
        "Give the pending items of a table created before the all-pending (GSI3), due (GSI4) and node (GSI5) "
        "indexes their keys, and write on each pending item the gate that waits on it (what the inbox shows it "
        "holds up).",
        "Items written since carry them all already; the local stack adds them itself when it loads its saved "
        "table. Run it once the stack update that adds the indexes has finished (the indexes ACTIVE). Safe to "
        "run twice (conditional UpdateItems). Uses your AWS credentials: dynamodb:Query and dynamodb:UpdateItem "
        "on the table.",
        "Example:",
        "  baton migrate index-keys --table baton-alpha",
    )
)


@migrate_app.command("index-keys", help=INDEX_KEYS_HELP)
def index_keys(
    table: Annotated[str, typer.Option("--table", envvar="BATON_TABLE_NAME", help="The team's table (baton-<team>).")],
    region: Annotated[
        str | None, typer.Option("--region", help="AWS region (default: AWS_REGION, or your profile's).")
    ] = None,
) -> None:
    """`baton migrate index-keys` (its help: INDEX_KEYS_HELP)."""
    from baton.runtime.settings import get_settings
    from baton.runtime.wiring import services

    if os.environ.get("BATON_TABLE_NAME") != table or region:
        # the store is built from the environment, as the deployed functions build theirs
        os.environ["BATON_TABLE_NAME"] = table
        if region:
            os.environ["AWS_REGION"] = os.environ["AWS_DEFAULT_REGION"] = region
        get_settings.cache_clear()
        services.cache_clear()
    from baton.runtime.migrations import index_key_migrations

    try:
        added, due, marked = index_key_migrations(services().core)
    except TypeError as err:
        err_console.print(f"[bold red]error[/]: {err}")
        raise typer.Exit(code=1) from None
    print(f"{added} pending item(s) given the all-pending index keys (GSI3 and GSI5: every kind, by node)")
    print(f"{due} pending item(s) given the due index keys (GSI4, what the sweeps read)")
    print(f"{marked} pending item(s) given the gate that waits on them")
