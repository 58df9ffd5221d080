"""`baton push`: Web Push's server key (issue 32, item 3). Deployed, the stack makes an empty Secrets Manager
secret (its `VapidSecretArn` output); `baton push init-vapid --secret-id <arn>` generates a P-256 key and
stores its PEM there (an existing key is kept unless `--replace`: replacing it ends every browser's
subscription). Locally `baton dev` makes its own key (`.baton/vapid.pem`)."""

from __future__ import annotations

from typing import Annotated

import typer

from baton.cli.common import console, err_console

push_app = typer.Typer(help="Web Push: the VAPID key browsers subscribe with.", no_args_is_help=True)


@push_app.command("init-vapid")
def init_vapid(
    secret_id: Annotated[
        str, typer.Option("--secret-id", help="The stack's VAPID secret (its VapidSecretArn output).")
    ],
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace a key already there (every subscription must be made again).")
    ] = False,
) -> None:
    """Generate a VAPID key pair and store the private key in the secret; print the public key."""
    from baton.adapters.vapid_keys import init_vapid_secret

    keys = init_vapid_secret(secret_id, replace=replace)
    if keys is None:
        err_console.print(f"{secret_id} already holds a VAPID key: kept (--replace makes a new one)")
        raise typer.Exit(1)
    console.print(f"stored a new VAPID key in {secret_id}; public key (GET /api/push/key): {keys.public_key}")
