"""What 1,000 pauses cost on AWS, per pause kind: one whole life of each kind driven on the embedded local
stack (moto + Baton's handlers in-process, counted by parts/life_meter.py), priced at the on-demand
prices of one region in bench/prices.json (its date and sources there). Figures printed, never asserted.

Per kind, one row:
- AWS calls made by Baton's code (by service; the Step Functions engine's own Lambda invokes are state
  transitions, not calls), next to the lower bound below;
- DynamoDB read and write request units, from the items' sizes by DynamoDB's rules (parts/capacity.py:
  transactions count double, each index write its own);
- Step Functions state transitions: the `*StateEntered` events in the history of every execution the life
  started, the gate's deadline timer included (the life waits until its timer has fired and ended);
- Lambda invocations (each API request is one, each Lambda the engine or SNS invokes is one) and their
  GB-seconds: each invocation's handler duration measured here (rounded up to the ms, as Lambda bills)
  times its function's configured memory (baton.workflows.resources, which infra/ deploys). Measured
  in-process on this machine: moto answers in-process where AWS answers over the network, and a loaded
  machine stretches it; the GB-seconds are an estimate, the counts are not;
- SNS publishes and API requests (API Gateway REST).

Left out of each life, and why: the run's start and the agent's polls (`GET`: how many depends on how long
the person takes; each is one API request and one Lambda invocation per <= 20 s waited); the scheduled
functions (the reconciler, the interrupt sweeper: a fixed cost per minute, not per pause); SNS deliveries
(priced by protocol, apart). Before each counted life one life of the same kind runs uncounted, so the
handlers are warm (no cold start: Lambda bills init time apart) and an agent's run exists.

The kinds and their lower bound in AWS calls (what the same work needs at least, each a single request):
- question: an async question with the await gate waiting on it: 9 (issue 33): one write to ask, one
  publish, one conditional write to park and one StartExecution for its timer, one conditional write and
  one SendTaskSuccess to answer, one Query and one write to drain, one write at the run's end;
- blocking ask: 3: one write to ask, one publish, one conditional write to answer (the agent's poll reads
  it back: left out, as above);
- interrupt (the SDK's): 3: one write to create, one publish, one conditional write to resume;
- tool approval: 4: one write to request (the approval keyed by its call's digest), one publish, one
  conditional write to approve, one conditional write to consume it;
- review: a review gate on a throwaway repository (the offline companion, the local build runner): its
  diff build, the first companion turn, the park, one reply with the diff built again and the companion's
  next turn, the park again, approve, the merge build and its record, the run's end, the parks' timers:
  the operations tests/integration/test_call_budgets_review.py budgets one by one, and the same calls but
  each build's StartBuild (the local runner starts a subprocess where deployed CodeBuild starts a build:
  the test's total is this life's + 3). Each build's end is counted as the `build_finished` Lambda's
  (the local runner hands it over in a thread of its own: parts/life_meter.py); the build's own report
  write (the subprocess, Baton's code in CodeBuild when deployed) is not counted, here as in the test. 20:
  one write to request the diff build and one SendTaskSuccess at its end; a read of the diff's report and a
  write of the turn; one conditional write to park with one StartExecution for its timer and one publish;
  one conditional write of the reply and one SendTaskSuccess; one write to request the diff again and one
  SendTaskSuccess at its end; a read of the thread and a write of the reply's turn; one conditional write
  to park again; one conditional write to approve and one SendTaskSuccess; one write to request the merge
  build and one SendTaskSuccess at its end; one conditional write of the merge's outcome; one write at the
  run's end. `--quick` (`make test`'s bench) leaves the review out: its three builds, its warm life and its
  deadline timers take about a minute.

Each row is the median of `--samples` counted lives by their calls (a life's calls vary a little with
timing); the calls of every one are listed when they differ.

Usage: uv run python bench/parts/cost_model.py [--lives 1000] [--samples 3] [--json] [--quick] [--only review,...]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

PRICES = Path(__file__).resolve().parents[1] / "prices.json"
LOWER_BOUNDS = {"question": 9, "blocking ask": 3, "interrupt": 3, "tool approval": 4, "review": 20}
OWN_RUN = {"question", "review"}  # a hosted run's kinds: each life a run of its own
SLOW = {"review"}  # left out by --quick (`make test`'s bench): its three builds and its warm life take a minute
# what each count is priced by in bench/prices.json, and its short name in the table
PRICED_BY = {
    "read_units": "dynamodb_read_request_unit",
    "write_units": "dynamodb_write_request_unit",
    "state_transitions": "stepfunctions_standard_state_transition",
    "lambda_invocations": "lambda_request",
    "lambda_gb_seconds": "lambda_arm64_gb_second",
    "sns_publishes": "sns_publish",
    "api_requests": "apigateway_rest_request",
}
SHORT = {
    "dynamodb_read_request_unit": "RRU",
    "dynamodb_write_request_unit": "WRU",
    "stepfunctions_standard_state_transition": "transitions",
    "lambda_request": "Lambda requests",
    "lambda_arm64_gb_second": "GB-s",
    "sns_publish": "SNS",
    "apigateway_rest_request": "API",
}


@dataclass(frozen=True)
class LifeCounts:
    """What one life of a pause kind used."""

    kind: str
    calls_by_service: dict[str, int]
    read_units: float
    write_units: int
    state_transitions: int
    lambda_invocations: int
    lambda_gb_seconds: float
    sns_publishes: int
    api_requests: int

    @property
    def calls(self) -> int:
        return sum(self.calls_by_service.values())


# ---- the arithmetic (pure) -------------------------------------------------------------------------------
def unit_prices(prices: Mapping[str, Any]) -> dict[str, float]:
    """USD per one unit of each priced line of prices.json (its `usd` is per `per` units)."""
    return {name: line["usd"] / line["per"] for name, line in prices["prices"].items()}


def billed_gb_seconds(invocations: Iterable[tuple[int, float]]) -> float:
    """GB-seconds of (memory MB, seconds) invocations: each duration rounded up to the ms, as Lambda bills."""
    return sum(memory_mb / 1024 * math.ceil(seconds * 1000) / 1000 for memory_mb, seconds in invocations)


def cost_of(counts: LifeCounts, per_unit: Mapping[str, float], lives: int) -> dict[str, float]:
    """USD of `lives` lives, by priced line, and their `total`."""
    lines = {line: getattr(counts, count) * per_unit[line] * lives for count, line in PRICED_BY.items()}
    return {**lines, "total": sum(lines.values())}


# ---- the lives on the local stack -------------------------------------------------------------------------
class Lives:
    """Drives whole lives on one counted local stack."""

    def __init__(self, client: Any, sfn: Any) -> None:
        self.client = client
        self.sfn = sfn
        self.calls = 0  # each tool approval asks for a call of its own

    def question(self, run_id: str, timeout_seconds: int) -> None:
        questions = [{"question": "Which database?"}]
        payload = {"node": "draft", "from": "draft", "timeout_seconds": timeout_seconds, "questions": questions}
        run = self.client.start_run("await_answers", payload, run_id=run_id)
        self._until(lambda: self.client.get_run(run_id).status == "paused_waiting_human", f"{run_id} parked")
        [question] = self.client.pending_questions(run_id)
        assert self.client.answer(run_id, question.interaction_id, "postgres").resumed is True
        self._until(lambda: self._status(run.execution_arn) != "RUNNING", f"{run_id} ended")
        assert len(self.client.drain_messages(run_id, "draft")) == 1

    def blocking_ask(self, run_id: str, _timeout: int) -> None:
        asked = self.client.create_ask(run_id, "agent", "Drop the table?", timeout_seconds=60, options=["yes", "no"])
        assert self.client.resume(run_id, {"drop": "no"}, node=asked.node).resumed is True

    def interrupt(self, run_id: str, _timeout: int) -> None:
        created = self.client.create_interrupt(session_id=run_id, prompt="Deploy to production?")
        assert self.client.resume_interrupt(created.interrupt_id, "yes").resumed is True

    def tool_approval(self, run_id: str, _timeout: int) -> None:
        from baton.contracts.tool_approvals import ToolApprovalRequest
        from baton.domain.tool_calls import ToolCall

        self.calls += 1
        call = ToolCall(tool="run_shell", arguments={"command": f"make deploy {self.calls}"})
        request = ToolApprovalRequest(call=call, session="s", reason="deploy", timeout_seconds=600)
        asked = self.client.request_tool_approval(run_id, request)
        assert self.client.answer(run_id, asked.interaction_id, {"decision": "approve"}).resumed is True
        assert self.client.consume_tool_approval(run_id, asked.interaction_id, call.digest).consumed is True

    def review(self, run_id: str, timeout: int) -> None:
        """A review gate on a throwaway repository: its diff build, the offline companion's first turn, the
        park, one reply turn, approve, the merge build and its record, the run's end."""
        from baton.cli.demo_repo import create_demo_repo

        repo = create_demo_repo(Path(tempfile.mkdtemp(prefix="baton-bench-review-")) / "repo")
        config = repo.gate_input(timeout_seconds=timeout, merge_timeout_seconds=60)
        self.client.start_run("review_gate", config, run_id=run_id)
        self._until(lambda: self._review_waits(run_id, turns=1), f"{run_id} parked")
        self.client.review_action(run_id, "reply", reply="Why the new parameter?")
        self._until(lambda: self._review_waits(run_id, turns=2), f"{run_id} replied and parked again")
        self.client.review_action(run_id, "approve_merge")
        self._until(lambda: self.client.get_run(run_id).status == "succeeded", f"{run_id} merged")

    def _review_waits(self, run_id: str, *, turns: int) -> bool:
        """The review asks its operator again after its companion's `turns`-th turn."""
        from baton.errors import NotFoundError

        try:
            found = self.client.review(run_id)
        except NotFoundError:
            return False
        ready = found.status == "pending" and found.turns_used >= turns
        return ready and self.client.get_run(run_id).status == "paused_waiting_human"

    def _status(self, arn: str) -> str:
        from life_meter import label

        label("bench")
        try:
            status: str = self.sfn.describe_execution(executionArn=arn)["status"]
            return status
        finally:
            label(None)

    @staticmethod
    def _until(done: Callable[[], bool], what: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise RuntimeError(f"never: {what}")
            time.sleep(0.05)


def _executions(sfn: Any) -> dict[str, str]:
    """Every execution's ARN -> its status (the bench's own calls: made while not counting or as "bench")."""
    found = {}
    for machine in sfn.list_state_machines()["stateMachines"]:
        pages = sfn.get_paginator("list_executions").paginate(stateMachineArn=machine["stateMachineArn"])
        found.update({e["executionArn"]: e["status"] for page in pages for e in page["executions"]})
    return found


def _transitions(sfn: Any, arns: Iterable[str]) -> int:
    entered = 0
    for arn in arns:
        for page in sfn.get_paginator("get_execution_history").paginate(executionArn=arn):
            entered += sum(event["type"].endswith("StateEntered") for event in page["events"])
    return entered


def _counted_life(kind: str, drive: Callable[[str, int], None], sfn: Any, run_id: str) -> LifeCounts:
    from life_meter import COUNT, label

    from baton.workflows.resources import FUNCTIONS

    memory = {spec.name: spec.memory_mb for spec in FUNCTIONS}
    before = set(_executions(sfn))
    COUNT.begin()
    # short enough that the gate's deadline timer fires and ends within the count, long enough to answer first
    drive(run_id, 20)
    label("bench")
    deadline = time.monotonic() + 90
    while (started := {a: s for a, s in _executions(sfn).items() if a not in before}) and "RUNNING" in started.values():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{kind}: executions still running: {started}")
        time.sleep(0.2)
    label(None)
    time.sleep(0.1)  # let the last SNS -> notify delivery settle
    COUNT.end()
    assert COUNT.meter is not None
    units = COUNT.meter.figures()
    calls: Counter[str] = Counter()
    for (who, op), count in COUNT.life_calls().items():
        if who != "stepfunctions-engine":
            calls[op.split(".")[0]] += count
    invocations = COUNT.life_invocations()
    return LifeCounts(
        kind=kind,
        calls_by_service=dict(sorted(calls.items())),
        read_units=units["read_units"],
        write_units=units["write_units"],
        state_transitions=_transitions(sfn, started),
        lambda_invocations=len(invocations),
        lambda_gb_seconds=round(billed_gb_seconds((memory[i.function], i.seconds) for i in invocations), 4),
        sns_publishes=sum(c for (who, op), c in COUNT.life_calls().items() if op == "sns.Publish"),
        api_requests=sum(i.function == "api" for i in invocations),
    )


def median_life(lives: list[LifeCounts]) -> LifeCounts:
    """The life with the median number of calls (a life's calls vary a little with timing: a gate's re-check
    finding its answers already merged, a transaction retried)."""
    return sorted(lives, key=lambda life: life.calls)[len(lives) // 2]


def measure(samples: int, only: Iterable[str] | None = None) -> list[tuple[LifeCounts, list[int]]]:
    """Per kind (`only` these, when given): its median life, and the calls every counted life made."""
    from life_meter import start_stack

    stack, info = start_stack("baton-bench-cost-")
    import boto3

    from baton.client.sdk import Client

    sfn = boto3.client("stepfunctions")
    client = Client(info.api_url, info.token)
    lives = Lives(client, sfn)
    kinds = {
        "question": lives.question,
        "blocking ask": lives.blocking_ask,
        "interrupt": lives.interrupt,
        "tool approval": lives.tool_approval,
        "review": lives.review,
    }
    try:
        rows = []
        for kind, drive in kinds.items():
            if only is not None and kind not in only:
                continue
            run_id = f"cost-{kind.replace(' ', '-')}-{int(time.time())}"
            # uncounted, on the same run but for a hosted run's question (a run of its own): warm handlers,
            # the agent's run made; its deadline timer fires long after the count
            drive(f"{run_id}-warm" if kind in OWN_RUN else run_id, 600)
            counted = [
                _counted_life(kind, drive, sfn, f"{run_id}-{n}" if kind in OWN_RUN else run_id) for n in range(samples)
            ]
            rows.append((median_life(counted), sorted(life.calls for life in counted)))
        return rows
    finally:
        client.close()
        stack.stop()


def scheduled_invocations_a_month() -> dict[str, int]:
    """Each scheduled function's invocations in a 30-day month: a fixed cost, whatever the pauses."""
    from baton.workflows.resources import FUNCTIONS, schedule_seconds

    return {spec.name: 30 * 86400 // schedule_seconds(spec.schedule) for spec in FUNCTIONS if spec.schedule}


def figures(rows: list[tuple[LifeCounts, list[int]]], prices: Mapping[str, Any], lives: int) -> dict[str, Any]:
    per_unit = unit_prices(prices)
    scheduled = scheduled_invocations_a_month()
    return {
        "region": prices["region"],
        "prices_looked_up": prices["looked_up"],
        "lives": lives,
        "scheduled_invocations_a_month": scheduled,
        "scheduled_lambda_requests_usd_a_month": round(sum(scheduled.values()) * per_unit["lambda_request"], 4),
        "kinds": [
            {
                **asdict(row),
                "calls": row.calls,
                "calls_seen": seen,
                "lower_bound_calls": LOWER_BOUNDS[row.kind],
                "usd": {line: round(usd, 6) for line, usd in cost_of(row, per_unit, lives).items()},
            }
            for row, seen in rows
        ],
    }


def print_table(found: dict[str, Any]) -> None:
    lives = found["lives"]
    print(
        f"cost model: one life per pause kind on the local stack; {lives:,} lives at {found['region']} on-demand"
        f" prices (bench/prices.json, looked up {found['prices_looked_up']})"
    )
    print(
        f"  {'kind':<14} {'calls':>5} {'floor':>5} {'RRU':>6} {'WRU':>5} {'SFN tr':>6} {'Lambda':>6} {'GB-s':>7}"
        f" {'SNS':>4} {'API':>4} {f'USD / {lives:,}':>12}   calls by service"
    )
    for row in found["kinds"]:
        services = ", ".join(f"{service} {n}" for service, n in row["calls_by_service"].items())
        if len(set(row["calls_seen"])) > 1:
            services += f" (calls of each life: {', '.join(map(str, row['calls_seen']))})"
        print(
            f"  {row['kind']:<14} {row['calls']:>5} {row['lower_bound_calls']:>5} {row['read_units']:>6.1f}"
            f" {row['write_units']:>5} {row['state_transitions']:>6} {row['lambda_invocations']:>6}"
            f" {row['lambda_gb_seconds']:>7.3f} {row['sns_publishes']:>4} {row['api_requests']:>4}"
            f" {row['usd']['total']:>12.4f}   {services}"
        )
    print(f"  USD of {lives:,} lives by line:")
    for row in found["kinds"]:
        print(f"    {row['kind']:<14} " + ", ".join(f"{short} {row['usd'][line]:.4f}" for line, short in SHORT.items()))
    gb_s = statistics.median(row["lambda_gb_seconds"] for row in found["kinds"])
    print(f"  (GB-seconds from handler durations measured in-process here, median {gb_s:.3f} per life: an estimate)")
    scheduled = found["scheduled_invocations_a_month"]
    print(
        f"  fixed, whatever the pauses: {', '.join(scheduled)} every minute, {sum(scheduled.values()):,} invocations"
        f" a month, USD {found['scheduled_lambda_requests_usd_a_month']:.4f} in Lambda requests (plus their"
        " duration and reads)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lives", type=int, default=1000, help="how many lives to price")
    parser.add_argument("--samples", type=int, default=3, help="counted lives per kind (the median's row)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--only", help="comma-separated kinds (default: every kind)")
    parser.add_argument("--quick", action="store_true", help="every kind but the review (about a minute)")
    args = parser.parse_args()
    only = args.only.split(",") if args.only else None
    if args.quick:
        only = [kind for kind in (only or LOWER_BOUNDS) if kind not in SLOW]
    found = figures(measure(args.samples, only), json.loads(PRICES.read_text()), args.lives)
    if args.json:
        print(json.dumps(found, indent=2))
    else:
        print_table(found)


if __name__ == "__main__":
    main()
