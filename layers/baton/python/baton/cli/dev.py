"""`baton dev`: the embedded local stack (moto as AWS, the real handlers in-process, the HTTP API)."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Annotated

import typer

from baton.cli.common import console, err_console, fail
from baton.errors import BatonError


def _channels(
    webhook_url: str | None, webhook_secret: str | None, slack_webhook_url: str | None
) -> tuple[list[str], dict[str, str]]:
    """The notification channels to subscribe, and the environment they read."""
    channels, channel_env = ["console"], {}
    if webhook_url:
        if not webhook_secret:
            raise typer.BadParameter("--webhook-secret is required with --webhook-url", param_hint="--webhook-secret")
        channels.append("webhook")
        channel_env.update({"WEBHOOK_URL": webhook_url, "WEBHOOK_SECRET": webhook_secret})
    if slack_webhook_url:
        channels.append("slack")
        channel_env["SLACK_WEBHOOK_URL"] = slack_webhook_url
    return channels, channel_env


def dev(
    *,
    port: Annotated[int, typer.Option(help="Port of the HTTP API on 127.0.0.1 (0 = any free port).")] = 8787,
    moto_port: Annotated[int, typer.Option(help="Port of the AWS emulator (0 = any free port).")] = 0,
    demo: Annotated[bool, typer.Option(help="Start the demo run once the stack is up.")] = True,
    state_dir: Annotated[Path, typer.Option(help="Where local.json (API URL and token) is written.")] = Path(".baton"),
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show the handlers' structured logs.")] = False,
    webhook_url: Annotated[
        str | None,
        typer.Option(envvar="BATON_LOCAL_WEBHOOK_URL", help="Subscribe the webhook channel: POST signed JSON here."),
    ] = None,
    webhook_secret: Annotated[
        str | None,
        typer.Option(envvar="BATON_LOCAL_WEBHOOK_SECRET", help="HMAC-SHA256 secret of --webhook-url's signatures."),
    ] = None,
    slack_webhook_url: Annotated[
        str | None,
        typer.Option(envvar="BATON_LOCAL_SLACK_WEBHOOK_URL", help="Subscribe the slack channel: POST Block Kit here."),
    ] = None,
) -> None:
    """Run Baton on this machine: moto as AWS (Step Functions really executing our ASL), our real
    Lambda handlers in-process, and the HTTP API on 127.0.0.1. Ctrl-C stops it."""
    from baton.local.demo import start_demo
    from baton.local.stack import LocalStack

    channels, channel_env = _channels(webhook_url, webhook_secret, slack_webhook_url)
    stack = LocalStack(
        api_port=port,
        moto_port=moto_port,
        state_dir=state_dir,
        log_level="INFO" if verbose else "WARNING",
        extra_env=channel_env,
        subscribe_channels=tuple(channels),
    )
    stopped = threading.Event()
    # Ctrl-C and SIGTERM only set a flag, so a signal at any moment ends in the same clean shutdown.
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    console.print("[bold]Baton local stack[/] starting…")
    try:
        info = stack.start()
    except BatonError as err:
        fail(err)
    console.print(f"  API        [cyan]{info.api_url}[/]   (Swagger UI: {info.api_url}/api/docs)")
    console.print(f"  emulator   {info.moto_url}")
    console.print(f"  workflows  {', '.join(sorted(info.provisioned.state_machine_arns))}")
    console.print(f"  notify     {', '.join(channels)} (subscribed to the SNS topic with per-channel filter policies)")
    console.print(f"  state      {state_dir / 'local.json'} (API URL and bearer token for the CLI and SDK)")
    console.print(f"  started in {info.startup_seconds:.2f}s. Notifications are printed below. Ctrl-C stops.\n")
    if demo and not stopped.is_set():
        try:
            start_demo(info, console, state_dir)
        except (BatonError, OSError) as err:  # the stack stays up; say why the demo did not start
            err_console.print(f"[yellow]demo not started[/]: {err}")
    while not stopped.wait(0.5):
        pass
    console.print("\nstopping…")
    stack.stop()
    console.print("stopped.")
