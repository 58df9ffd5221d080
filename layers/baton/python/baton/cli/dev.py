"""`baton dev`: the embedded local stack (moto as AWS, the real handlers in-process, the HTTP API)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.markup import escape

from baton.cli.common import console, err_console, fail
from baton.domain.deadline import TIMER_STATE_MACHINE
from baton.errors import BatonError
from baton.hints import cli_command

if TYPE_CHECKING:
    from baton.local.stack import LocalStack


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
    elif os.environ.get("SLACK_SIGNING_SECRET") and os.environ.get("SLACK_CHANNEL"):
        channels.append("slack")  # a Slack app (baton/channels/slack/config.py reads its environment)
    return channels, channel_env


def _policy_env(policy: Path | None, mode: str) -> dict[str, str]:
    """The environment naming --policy for the handlers (baton/policy/sources.py: re-read when the file
    changes, a bad edit keeps the last good one), once it loads: a policy that does not is refused here,
    before anything starts, with its problems."""
    if mode not in ("shadow", "enforce"):
        raise typer.BadParameter(f"{mode!r} is not shadow or enforce", param_hint="--policy-mode")
    if policy is None:
        return {}
    from baton.policy.engine import Policy, PolicyError

    try:
        Policy.load(policy.read_text(encoding="utf-8"))  # the mode does not change what loads
    except (OSError, UnicodeDecodeError) as err:
        err_console.print(f"[bold red]error[/]: cannot read the policy {escape(str(policy))}: {escape(str(err))}")
        raise typer.Exit(code=1) from err
    except PolicyError as err:
        err_console.print(f"[bold red]error[/]: the policy {escape(str(policy))} does not load, so nothing started:")
        for problem in err.problems:
            err_console.print(f"  - {escape(problem)}")
        raise typer.Exit(code=1) from err
    return {"BATON_POLICY_FILE": str(policy.resolve()), "BATON_POLICY_MODE": mode}


def _data_line(stack: LocalStack, state_dir: Path) -> str:
    where = state_dir / "local-data.json"
    if not stack.restored_items:
        return f"{where} (kept across restarts; --fresh starts clean)"
    closed = f"; {len(stack.closed_runs)} hosted run(s) marked failed: executions do not survive a restart"
    return f"{where}: {stack.restored_items} item(s) restored{closed if stack.closed_runs else ''}"


def inbox_login(
    state_dir: Annotated[Path, typer.Option(help="The running `baton dev`'s state dir (its local.json).")] = Path(
        ".baton"
    ),
    revoke_all: Annotated[
        bool, typer.Option("--revoke-all", help="First end every inbox session of the operator (signed-in browsers).")
    ] = False,
    all_operators: Annotated[
        bool, typer.Option("--all-operators", help="With --revoke-all: every operator's sessions, not only yours.")
    ] = False,
) -> None:
    """Print a new one-time sign-in link for the local web inbox (the local stack must be running);
    --revoke-all first signs out every browser signed in before."""
    import json

    import httpx

    from baton.client.transport import gone_pid, not_running_message

    if all_operators and not revoke_all:
        err_console.print("[bold red]error[/]: --all-operators goes with --revoke-all")
        raise typer.Exit(code=2)
    state_file = state_dir / "local.json"
    try:
        state = json.loads(state_file.read_text())
        pid = gone_pid(state)
        if pid is not None:
            err_console.print(f"[bold red]error[/]: {not_running_message(pid)}", markup=False)
            raise typer.Exit(code=1)
        headers = {"Authorization": f"Bearer {state['token']}"}
        revoked = None
        if revoke_all:
            revoked = httpx.post(
                f"{state['api_url']}/inbox/sessions/revoke",
                headers=headers,
                json={"all_operators": all_operators},
                timeout=10,
            )
        response = httpx.post(f"{state['api_url']}/inbox/login-code", headers=headers, timeout=10)
    except (OSError, ValueError, KeyError, httpx.HTTPError) as err:
        err_console.print(f"[bold red]error[/]: no running local stack found through {state_file} ({err})")
        raise typer.Exit(code=1) from err
    if revoked is not None:
        if revoked.status_code != 200:
            err_console.print(f"[bold red]error[/]: the local stack refused to end the sessions ({revoked.text[:200]})")
            raise typer.Exit(code=1)
        ended = revoked.json()
        whose = "every operator" if ended["operator"] is None else ended["operator"]
        err_console.print(f"ended {ended['ended']} inbox session(s) of {whose}")
    if response.status_code != 201:
        err_console.print(f"[bold red]error[/]: the local stack refused a new sign-in code ({response.status_code})")
        raise typer.Exit(code=1)
    console.print(response.json()["url"])


def dev(  # noqa: PLR0913 - a Typer command: each of its options is a parameter
    *,
    port: Annotated[int, typer.Option(help="Port of the HTTP API on 127.0.0.1 (0 = any free port).")] = 8787,
    moto_port: Annotated[int, typer.Option(help="Port of the AWS emulator (0 = any free port).")] = 0,
    demo: Annotated[bool, typer.Option(help="Start the demo run once the stack is up.")] = True,
    state_dir: Annotated[
        Path,
        typer.Option(help="Where local.json (API URL and token) and local-data.json (the kept data) are written."),
    ] = Path(".baton"),
    fresh: Annotated[
        bool,
        typer.Option(
            "--fresh",
            help="Start clean: drop the data kept from earlier runs (runs, questions, interrupts, events) "
            "and use a new bearer token. Without it the table and the token are kept across restarts.",
        ),
    ] = False,
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
    policy: Annotated[
        Path | None,
        typer.Option(
            help="A Cedar policy deciding tool calls (allow, deny or ask a person): checked at start, re-read "
            "when the file changes; an edit that does not load keeps the last good one and prints its problems."
        ),
    ] = None,
    policy_mode: Annotated[
        str,
        typer.Option(help="enforce: the policy's decision stands; shadow: it is logged and a person decides."),
    ] = "enforce",
) -> None:
    """Run Baton on this machine: moto as AWS (Step Functions really executing our ASL), our real
    Lambda handlers in-process, and the HTTP API on 127.0.0.1. Ctrl-C stops it.

    The data (the DynamoDB table: every run's history, questions, interrupts, review threads) and the
    bearer token are kept in --state-dir across restarts; --fresh starts clean. Step Functions
    executions cannot survive a restart: runs that were running or paused come back failed, with the
    reason. A single-user development tool: the API and the emulator port are for this machine only.

    Exit codes: 0 after Ctrl-C (SIGINT) or SIGTERM, the normal way to stop it (local.json is removed
    and the data saved first, even when stdout is a pipe that Ctrl-C closed); 1 when it cannot start;
    2 without moto (the `local` extra: pip install 'baton[local]') or with a moto outside the tested range.
    -v shows the handlers' logs and the emulator's own failure detail (its parse trees); without it
    each ended run is one line."""
    _refuse_an_untested_moto()
    from baton.cli.demo import start_demo
    from baton.local.stack import LocalStack

    channels, channel_env = _channels(webhook_url, webhook_secret, slack_webhook_url)
    channel_env.update(_policy_env(policy, policy_mode))
    stack = LocalStack(
        api_port=port,
        moto_port=moto_port,
        state_dir=state_dir,
        log_level="INFO" if verbose else "WARNING",
        extra_env=channel_env,
        subscribe_channels=tuple(channels),
        data="fresh" if fresh else "keep",
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
    console.print(f"  inbox      [cyan]{stack.inbox_login_url()}[/]")
    console.print(
        "             (a one-time sign-in link for the browser, valid 15 minutes; "
        f"`{cli_command()} inbox-login` prints a new one)"
    )
    console.print(f"  emulator   {info.moto_url}")
    # The gates' timer machine is no workflow a person starts.
    runnable = sorted(wf for wf in info.provisioned.state_machine_arns if wf != TIMER_STATE_MACHINE)
    console.print(f"  MCP        [cyan]{info.api_url}/mcp[/]   (agents: README, Agents over MCP)")
    console.print(f"  workflows  {', '.join(runnable)}")
    wired = ", ".join(stack.subscribe_channels)  # what the stack really subscribes (email always: the outbox)
    console.print(f"  notify     {wired} (subscribed to the SNS topic with per-channel filter policies)")
    if policy is not None:
        console.print(f"  policy     {escape(str(policy))} ({policy_mode}; re-read when it changes)")
    console.print(f"  state      {state_dir / 'local.json'} (API URL and bearer token for the CLI and SDK)")
    console.print(f"  data       {_data_line(stack, state_dir)}")
    console.print(f"  started in {info.startup_seconds:.2f}s. Notifications are printed below. Ctrl-C stops.\n")
    if demo and not stopped.is_set():
        try:
            start_demo(info, console, state_dir)
        except (BatonError, OSError) as err:  # the stack stays up; say why the demo did not start
            err_console.print(f"[yellow]demo not started[/]: {err}")
    while not stopped.wait(0.5):
        pass
    _shut_down(stack)


def _refuse_an_untested_moto() -> None:
    """Exit 2, saying how to get a tested one, when moto (the `local` extra) is missing or outside the
    range the local stack is tested with; before anything imports moto."""
    from baton.local.moto_range import installed_moto_version, moto_refusal

    refusal = moto_refusal(installed_moto_version())
    if refusal is not None:
        err_console.print(f"[bold red]error[/]: {escape(refusal)}")
        raise typer.Exit(code=2)


def _say(text: str) -> None:
    """Print, unless stdout is gone (Ctrl-C under `make dev | tee` ends the tee first): the shutdown
    must still save the data and remove local.json."""
    try:
        console.print(text)
        sys.stdout.flush()
    except (BrokenPipeError, OSError):
        # Point stdout at nothing, so later writes (and the interpreter's final flush) cannot fail.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _shut_down(stack: LocalStack) -> NoReturn:
    """Stop the stack (the data is saved, local.json removed) and exit 0: Ctrl-C and SIGTERM are the
    way `baton dev` is meant to end, so they are a success (`make dev` reports nothing)."""
    try:
        _say("\nstopping…")
    finally:
        stack.stop()
    _say("stopped.")
    # moto's parked executions hold threads that wait for task tokens nobody will send; waiting for
    # them at interpreter exit would hang. Everything worth keeping is saved: leave now.
    with contextlib.suppress(OSError):
        sys.stderr.flush()
    os._exit(0)
