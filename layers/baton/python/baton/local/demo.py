"""The newcomer's demo, started by `baton dev`: a hosted run that pauses for a person."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from baton.local.stack import LocalInfo


def start_demo(info: LocalInfo, console: Console) -> str:
    from baton.sdk import Client

    with Client(info.api_url, info.token) as client:
        run = client.start_run(
            "human_pause",
            {"prompt": "Ship the demo build to staging?", "timeout_seconds": 3600, "notify": ["console"]},
        )
    run_id = run["run_id"]
    console.print(f"[bold]demo[/]: run [cyan]{run_id}[/] is paused, waiting for you. In another terminal:")
    console.print(f"  uv run baton runs show {run_id}")
    console.print(f"  uv run baton resume --run-id {run_id} --answer ship=true --answer note='looks good'")
    console.print(f"  uv run baton runs events {run_id}\n")
    return run_id
