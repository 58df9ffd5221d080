"""The newcomer's demo, started by `baton dev`: one hosted run of `statemachines/demo_workflow.asl.json`
that asks two questions and keeps working, waits at an await gate, pauses on a typed interrupt, and
stops at a review-and-merge gate over a throwaway git repository."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.cli.demo_repo import create_demo_repo
from baton.hints import cli_command
from baton.ids import UlidGenerator

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from baton.local.stack import LocalInfo


def start_demo(info: LocalInfo, console: Console, state_dir: Path) -> str:
    from baton.client.sdk import Client

    run_id = f"demo-{UlidGenerator().new_id()[-8:].lower()}"
    repo = create_demo_repo(state_dir.resolve() / "demo-repos" / run_id)
    with Client(info.api_url, info.token) as client:
        client.start_run("demo", {"review": repo.gate_input(max_turns=6)}, run_id=run_id)
    b = cli_command()
    console.print(
        f"[bold]demo[/]: run [cyan]{run_id}[/] started. Its draft node posted two questions and keeps working;\n"
        "the await gate blocks until you answer them. In another terminal, in this folder:\n"
        f"  1. {b} runs questions {run_id}\n"
        f"  2. {b} runs answer {run_id} <id of the database question> postgres\n"
        f"     {b} runs answer {run_id} <id of the name question> 'first light'\n"
        f"  3. {b} workflow inspect {run_id}           (the interrupt: a typed value and the state)\n"
        f"     {b} workflow resume-interrupt {run_id} --input '\"staging\"' --edit-state config.flag=true\n"
        f"  4. {b} review show {run_id}                 (the companion's test steps and verdict)\n"
        f"     {b} resume --run-id {run_id} --answer __review_action=reply "
        "--answer __review_reply='what should I test first?'\n"
        f"     {b} resume --run-id {run_id} --answer __review_action=approve_merge\n"
        f"  5. git -C {repo.path} log --oneline -3      (the squash commit on main)\n"
        f"  Any time: {b} runs show {run_id}   ·   {b} runs events {run_id} --follow\n",
        soft_wrap=True,  # commands must stay copy-pasteable, never wrapped
    )
    return run_id
