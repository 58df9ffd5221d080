"""The tools: `baton check-asl`, `baton synth`, `baton agent-token` and `baton operator-token`."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from baton.cli.common import console, err_console


def _running_local_state() -> dict[str, Any]:
    """The running local stack's local.json, or exit 1 saying there is none (or it is gone)."""
    from baton.client.transport import find_local_state, gone_pid, not_running_message

    state = find_local_state()
    if state is None or not state.get("token"):
        err_console.print("[bold red]error[/]: no local stack found (.baton/local.json); start it with `baton dev`")
        raise typer.Exit(code=1)
    pid = gone_pid(state)
    if pid is not None:
        err_console.print(f"[bold red]error[/]: {escape(not_running_message(pid))}")
        raise typer.Exit(code=1)
    return state


def agent_token_command(
    run_id: Annotated[str, typer.Argument(help="The run the agent may act on.")],
) -> None:
    """Print a local agent token scoped to one run (for the SDK in agent code: Client(token=...)).
    An agent may ask, drain, await and create interrupts on its run; answering, resuming, claiming
    and cancelling stay operator actions. Local stack only; deployed agents use IAM."""
    from baton.api.auth import agent_token
    from baton.domain.fields import check_run_id
    from baton.errors import BadRequestError

    try:
        check_run_id(run_id)
    except BadRequestError as err:  # the API would refuse every call of this run: say so now
        err_console.print(f"[bold red]error[/]: {escape(err.message)}")
        raise typer.Exit(code=2) from err
    state = _running_local_state()
    sys.stdout.write(agent_token(state["token"], run_id) + "\n")


def operator_token_command(
    name: Annotated[str, typer.Argument(help="The operator's name, e.g. alice or alice@example.com.")],
) -> None:
    """Print a named local operator's token: act as another person on the local stack
    (`BATON_TOKEN=$(uv run baton operator-token alice) uv run baton runs answer ...`). Claims, answers
    and the run's events name that operator. Local stack only; deployed operators sign in with Cognito
    or IAM."""
    from baton.api.auth import OPERATOR_NAME, operator_token

    if not OPERATOR_NAME.match(name):
        err_console.print(
            f"[bold red]error[/]: {name!r} is not an operator name: 1-64 of A-Z a-z 0-9 @ . _ + -, "
            "starting with a letter or digit"
        )
        raise typer.Exit(code=2)
    state = _running_local_state()
    sys.stdout.write(operator_token(state["token"], name) + "\n")


def check_asl(
    directory: Annotated[Path, typer.Argument(help="Folder of *.asl.json files.")] = Path("statemachines"),
) -> None:
    """Check state machines before anything runs: every task-token wait has a timeout, every Next names a
    state, and the gates' configurations hold (C100 review gate with nothing to merge, C101 review_url
    naming a missing output, C240 questions posted as a node that is a person's pause, C241 await gate
    without a positive timeout, C242 await `from` naming a node that never asks, C243 a Baton Task in a Map
    without its item, C244 a pause holding a bounded Map's slot, C245 a pause's TimeoutSeconds without the
    grace after its timeout_seconds)."""
    from baton.workflows.asl import check_directory

    if not directory.is_dir() or not any(directory.glob("*.asl.json")):
        err_console.print(f"[bold red]error[/]: no *.asl.json files in {directory}")
        raise typer.Exit(code=1)
    problems = check_directory(directory)
    for problem in problems:
        err_console.print(f"[red]✗[/] {escape(str(problem))}")
    if problems:
        raise typer.Exit(code=1)
    console.print(f"[green]✓[/] {len(list(directory.glob('*.asl.json')))} state machines pass")


def synth(
    team: Annotated[str, typer.Option(help="Team environment; every resource name carries it.")] = "dev",
    outdir: Annotated[Path, typer.Option(help="Where the cloud assembly is written.")] = Path("cdk.out"),
) -> None:
    """Synthesize the CDK app for one team environment, offline (no Docker, no AWS credentials).
    cdk-nag AwsSolutions findings that are not acknowledged with a reason fail the synth."""
    console.print(f"synthesizing team [bold]{team}[/] (first run takes ~20 s: CDK loads through jsii)…")
    started = time.perf_counter()
    try:
        from infra.synth import synth as synthesize
    except ImportError as err:
        err_console.print(f"[bold red]error[/]: the CDK app needs the dev dependencies (uv sync): {err}")
        raise typer.Exit(code=1) from err
    try:
        template = synthesize(team, outdir)
    except RuntimeError as err:
        err_console.print(f"[bold red]error[/]: {err}")
        raise typer.Exit(code=1) from err
    console.print(f"[green]✓[/] {template} ({time.perf_counter() - started:.1f}s)")
