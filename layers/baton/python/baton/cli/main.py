"""The `baton` command line: the local stack, runs, resumes. Every command has `--help`; the ones
that print data take `--json` for scripts. Errors print one readable line and exit non-zero."""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from baton.cli.workflow import workflow_app
from baton.errors import BatonError

app = typer.Typer(
    help="Baton: human-in-the-loop gates for AI agent workflows on AWS.\n\n"
    "Start the embedded local stack with `baton dev`; other commands find it through .baton/local.json.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
runs_app = typer.Typer(help="Hosted and external runs: start, show, events, questions.", no_args_is_help=True)
app.add_typer(runs_app, name="runs")
app.add_typer(workflow_app, name="workflow")
console = Console(soft_wrap=True)  # URLs and commands stay copy-pasteable
err_console = Console(stderr=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _client() -> Any:
    from baton.client.sdk import Client

    return Client()


def _fail(err: BatonError) -> None:
    err_console.print(f"[bold red]error[/] ({err.code}): {err.message}")
    for key, value in err.details.items():
        if key not in ("error",):
            err_console.print(f"  {key}: {json.dumps(value, default=str)[:400]}")
    raise typer.Exit(code=1)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def _parse_answers(pairs: list[str]) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"expected key=value, got {pair!r}", param_hint="--answer")
        try:
            answers[key] = json.loads(raw)
        except ValueError:
            answers[key] = raw
    return answers


@app.command()
def dev(
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

    channels, channel_env = ["console"], {}
    if webhook_url:
        if not webhook_secret:
            raise typer.BadParameter("--webhook-secret is required with --webhook-url", param_hint="--webhook-secret")
        channels.append("webhook")
        channel_env.update({"WEBHOOK_URL": webhook_url, "WEBHOOK_SECRET": webhook_secret})
    if slack_webhook_url:
        channels.append("slack")
        channel_env["SLACK_WEBHOOK_URL"] = slack_webhook_url
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
        _fail(err)
        return
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


@runs_app.command("start")
def runs_start(
    workflow: Annotated[str, typer.Argument(help="Registered workflow, e.g. human_pause.")],
    input_json: Annotated[str, typer.Option("--input", help="Workflow input as JSON.")] = "{}",
    run_id: Annotated[str | None, typer.Option(help="Run id (default: a new ULID).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Start a hosted run (a Step Functions execution)."""
    try:
        payload = json.loads(input_json)
    except ValueError as err:
        raise typer.BadParameter(f"not JSON: {err}", param_hint="--input") from err
    try:
        run = _client().start_run(workflow, payload, run_id=run_id)
    except BatonError as err:
        _fail(err)
    if as_json:
        _print_json(run)
    else:
        console.print(f"started run [bold]{run['run_id']}[/] ({workflow}): {run['status']}")


@runs_app.command("show")
def runs_show(run_id: str, as_json: JsonFlag = False) -> None:
    """Show a run's summary: status, reason, interaction counts, merge fields."""
    try:
        run = _client().get_run(run_id)
    except BatonError as err:
        _fail(err)
    if as_json:
        _print_json(run)
        return
    table = Table(show_header=False, box=None)
    for key in (
        "run_id",
        "workflow",
        "status",
        "reason",
        "created_at",
        "updated_at",
        "interactions",
        "output",
        "merge_status",
        "final_commit",
        "final_branch",
        "merged_into",
    ):
        if run.get(key) not in (None, {}, ""):
            value = run[key]
            table.add_row(f"[bold]{key}[/]", json.dumps(value) if isinstance(value, dict | list) else str(value))
    console.print(table)


@runs_app.command("events")
def runs_events(
    run_id: str,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing new events (Ctrl-C stops).")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Print a run's event log, oldest first."""
    after: str | None = None
    try:
        client = _client()
        while True:
            page = client.events(run_id, after=after)
            for event in page["events"]:
                if as_json:
                    sys.stdout.write(json.dumps(event) + "\n")
                else:
                    data = ", ".join(f"{k}={json.dumps(v)[:80]}" for k, v in event["data"].items())
                    console.print(f"{event['at']}  [bold]{event['type']}[/]  {data}")
            after = page["next"]
            if not follow:
                return
            if not page["events"]:
                time.sleep(1.0)
    except BatonError as err:
        _fail(err)
    except KeyboardInterrupt:
        return


@runs_app.command("questions")
def runs_questions(
    run_id: Annotated[str, typer.Argument(help="The run whose pending questions to list.")],
    as_json: JsonFlag = False,
) -> None:
    """List a run's pending async questions (answer one with `baton runs answer <run> <id> "<answer>"`)."""
    try:
        pending = _client().pending_questions(run_id)
    except BatonError as err:
        _fail(err)
    if as_json:
        _print_json(pending)
        return
    if not pending:
        console.print(f"run {run_id}: no pending questions")
        return
    table = Table(title=f"Pending questions of run {run_id}")
    for column in ("id", "node", "question", "options", "asked at"):
        table.add_column(column, overflow="fold")
    for q in pending:
        req = q["request"]
        options = ", ".join(req.get("options") or [])
        if options and req.get("allow_free_text"):
            options += " (or free text)"
        table.add_row(q["interaction_id"], req["node"], req["prompt"], options or "free text", q["created_at"])
    console.print(table)


@runs_app.command("answer")
def runs_answer(
    run_id: Annotated[str, typer.Argument(help="The run.")],
    interaction_id: Annotated[str, typer.Argument(help="The question's id (see `baton runs questions`).")],
    answer: Annotated[str, typer.Argument(help="The answer text.")],
    parse_json: Annotated[
        bool, typer.Option("--parse-json", help='Send the answer as JSON (e.g. \'{"db": "pg"}\').')
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Answer a pending question. The answer is queued for the asking node; await gates waiting on it resume."""
    value: Any = answer
    if parse_json:
        try:
            value = json.loads(answer)
        except ValueError as err:
            raise typer.BadParameter(f"not JSON: {err}", param_hint="ANSWER") from err
    try:
        result = _client().answer(run_id, interaction_id, value)
    except BatonError as err:
        _fail(err)
    if as_json:
        _print_json(result)
        return
    resumed = f"; resumed: {', '.join(result['released'])}" if result.get("released") else ""
    console.print(
        f"answered {interaction_id} (node {result.get('node')}): queued for the node{resumed}", soft_wrap=True
    )


@app.command()
def resume(
    run_id: Annotated[str, typer.Option("--run-id", help="The paused run.")],
    answer: Annotated[list[str], typer.Option("--answer", "-a", help="key=value (value parsed as JSON if it can be).")],
    node: Annotated[str | None, typer.Option(help="The paused node, when the run waits at several.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Resume a run paused at a human node with answers (stored first, then the gate is released)."""
    answers = _parse_answers(answer)
    try:
        result = _client().resume(run_id, answers, node=node)
    except BatonError as err:
        _fail(err)
    if as_json:
        _print_json(result)
    else:
        state = "resumed" if result.get("resumed") else "answer stored; the gate will pick it up"
        console.print(f"run {run_id} node {result.get('node')}: {state}")


review_app = typer.Typer(help="Review-and-merge gates: the dialogue, the verdict, the merge.", no_args_is_help=True)
app.add_typer(review_app, name="review")


@review_app.command("show")
def review_show(
    run_id: Annotated[str, typer.Argument(help="The run.")],
    gate: Annotated[str | None, typer.Option(help="The review gate, when the run has several.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Show a run's review: the dialogue thread, the companion's verdict, diff stats, review URL, merge
    status and the actions the operator can take (`baton resume --run-id <id> --answer __review_action=...`)."""
    try:
        review = _client().review(run_id, gate=gate)
    except BatonError as err:
        _fail(err)
    if as_json:
        _print_json(review)
        return
    diff = review.get("diff") or {}
    console.print(
        f"[bold]review[/] {review['gate']} of run {run_id}: [bold]{review['status']}[/] "
        f"(turn {review['turns_used']}/{review['max_turns']}, posture {review['posture']})"
    )
    if diff:
        console.print(
            f"  diff: {diff.get('files_changed')} file(s), +{diff.get('insertions')} -{diff.get('deletions')}"
            + (" (truncated)" if diff.get("truncated") else "")
        )
    if review.get("review_url"):
        console.print(f"  open: [cyan]{review['review_url']}[/]")
    for warning in review.get("warnings") or []:
        console.print(f"  [yellow]warning[/]: {warning}")
    for turn in review.get("thread") or []:
        who = "[magenta]companion[/]" if turn["role"] == "companion" else f"[green]{turn.get('by') or 'operator'}[/]"
        console.print(f"\n{who} #{turn['n']}:")
        console.print(turn["text"], markup=False, highlight=False)
    verdict = review.get("verdict")
    if verdict:
        console.print(
            f"\n[bold]verdict[/]: {verdict['decision']} (confidence {verdict['confidence']:.2f})"
            + (f"; blockers: {'; '.join(verdict['blockers'])}" if verdict.get("blockers") else "")
        )
    merge = review.get("merge") or {}
    if merge.get("merge_status"):
        console.print(
            f"[bold]merge[/]: {merge['merge_status']} {merge.get('final_commit') or ''} "
            f"into {merge.get('merged_into') or '-'} (branch {merge.get('final_branch') or '-'})"
        )
    if review.get("reason"):
        console.print(f"note: {review['reason']}", markup=False, highlight=False)
    if review.get("allowed_actions"):
        console.print(
            f"\nactions: {', '.join(review['allowed_actions'])} — e.g. "
            f"baton resume --run-id {run_id} --answer __review_action=approve_merge"
        )


@app.command("agent-token")
def agent_token_command(
    run_id: Annotated[str, typer.Argument(help="The run the agent may act on.")],
) -> None:
    """Print a local agent token scoped to one run (for the SDK in agent code: Client(token=...)).
    An agent may ask, drain, await and create interrupts on its run; answering, resuming, claiming
    and cancelling stay operator actions. Local stack only; deployed agents use IAM."""
    from baton.api.auth import agent_token
    from baton.client.sdk import find_local_state

    state = find_local_state()
    if state is None or not state.get("token"):
        err_console.print("[bold red]error[/]: no local stack found (.baton/local.json); start it with `baton dev`")
        raise typer.Exit(code=1)
    sys.stdout.write(agent_token(state["token"], run_id) + "\n")


@app.command("check-asl")
def check_asl(
    directory: Annotated[Path, typer.Argument(help="Folder of *.asl.json files.")] = Path("statemachines"),
) -> None:
    """Check state machines: every task-token wait has a timeout; every Next names a state."""
    from baton.workflows.asl import check_directory

    if not directory.is_dir() or not any(directory.glob("*.asl.json")):
        err_console.print(f"[bold red]error[/]: no *.asl.json files in {directory}")
        raise typer.Exit(code=1)
    problems = check_directory(directory)
    for problem in problems:
        err_console.print(f"[red]✗[/] {problem}")
    if problems:
        raise typer.Exit(code=1)
    console.print(f"[green]✓[/] {len(list(directory.glob('*.asl.json')))} state machines pass")


@app.command()
def synth(
    team: Annotated[str, typer.Option(help="Team environment; every resource name carries it.")] = "dev",
    outdir: Annotated[Path, typer.Option(help="Where the cloud assembly is written.")] = Path("cdk.out"),
) -> None:
    """Synthesize the CDK app for one team environment, offline (no Docker, no AWS credentials).
    cdk-nag AwsSolutions findings that are not acknowledged with a reason fail the synth."""
    import time

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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
