"""How far Baton scales in one AWS account: a deterministic simulation (pure Python, no moto) of a steady
load against the quotas in bench/quotas.json, from Baton's call profile per pause kind (`PROFILE`: each
life's AWS calls by operation, capacity units, state transitions, Lambda and API requests, and its write
units on each partition of the table's indexes, measured on the local stack by `--record`).

The model, per second, in steady state (every pause asked is answered: a life per answer):
- each kind's lives/s = answers/s x its share of the mix; a count per life x lives/s is that count's rate;
- one partition of an index takes the write units of every life that touches its key: `PENDING`
  (all_pending), `PENDING#<kind>` and `PARKED` (pending), `DUE#<kind>` (due) and `<kind>#<status>`
  (by_status); with one table per team a partition sees one team's lives, with a shared table all of them;
  write-sharding a key N ways divides its partition's units by N;
- a question's run is an open Standard execution while its gate is parked (`Load.pause_s`, the mean wait
  for a person), and its gate's timer another one until the answer stops it (every pause is answered):
  open executions = answers/s x 2 x pause; the timer enters `TIMER_TRANSITIONS` states;
- Lambda concurrency = invocations/s x seconds each (`Load.lambda_seconds`, an assumption: 0.1 s).
Left out: the agent's polls, the run's own start, the scheduled functions (a fixed cost, not per pause).

Utilization = rate / quota; the first limit is the highest, and the answers/s at which it reaches 1 is
found by bisecting a scale factor on the load (teams and mix kept).

Usage: uv run python bench/parts/scaling_sim.py [--json]      the scenarios' table
       uv run python bench/parts/scaling_sim.py --record      re-measure PROFILE on the local stack (~4 min);
                                                              exits 1 when it drifted from the copy here
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from capacity import item_size, write_units

from baton.workflows.table import GLOBAL_SECONDARY_INDEXES

QUOTAS = Path(__file__).resolve().parents[1] / "quotas.json"
TIMER_TRANSITIONS = 1  # gate_deadline.asl.json's UntilDeadline: the answer's release stops it there
PENDING_INDEXES = ("all_pending", "pending", "due")  # keys that hold what is waiting now (shardable together)
PARTITION_QUOTA = "dynamodb_partition_write_units"  # every hot partition's limit
# A life's counts vary a little with timing: a retried transaction, a re-check, an answer landing before the
# park's merge of carried answers (2 more calls, 9% of a question's 22: over 10% once lives got cheaper).
DRIFT_TOLERANCE = 0.15
DRIFT_SLACK = 2.0  # and never less than this many
LIFE_COUNTS = ("write_units", "read_units", "state_transitions", "lambda_invocations", "api_requests")
ENGINE = "stepfunctions-engine"  # the Step Functions engine's own Lambda invokes: transitions, not calls
# Measured by `--record` on 2026-12-05, again once a release stopped its timer (one life per kind,
# parts/cost_model.py's lives); a copy, so the simulation runs in milliseconds: `--record` re-measures
# it and fails when it drifted.
PROFILE: dict[str, dict[str, Any]] = {
    "question": {
        "calls": {
            "dynamodb.BatchGetItem": 1,
            "dynamodb.GetItem": 2,
            "dynamodb.Query": 6,
            "dynamodb.TransactWriteItems": 6,
            "dynamodb.UpdateItem": 2,
            "sns.Publish": 2,
            "stepfunctions.SendTaskSuccess": 1,
            "stepfunctions.StartExecution": 1,
            "stepfunctions.StopExecution": 1,
        },
        "write_units": 65,
        "read_units": 9.0,
        "state_transitions": 7,
        "lambda_invocations": 8,
        "api_requests": 2,
        "partition_writes": {
            "all_pending PENDING": 3,
            "by_status question#answered": 1,
            "by_status question#pending": 3,
            "pending PARKED": 4,
            "pending PENDING#question": 3,
            "pending_by_node PENDING#node#draft": 3,
        },
    },
    "blocking ask": {
        "calls": {
            "dynamodb.GetItem": 1,
            "dynamodb.PutItem": 1,
            "dynamodb.Query": 2,
            "dynamodb.TransactWriteItems": 2,
            "dynamodb.UpdateItem": 2,
            "sns.Publish": 1,
        },
        "write_units": 30,
        "read_units": 3.0,
        "state_transitions": 0,
        "lambda_invocations": 3,
        "api_requests": 2,
        "partition_writes": {
            "all_pending PENDING": 2,
            "by_status ask#answered": 1,
            "by_status ask#pending": 2,
            "pending PENDING#ask": 2,
            "pending_by_node PENDING#node#agent": 2,
        },
    },
    "interrupt": {
        "calls": {
            "dynamodb.BatchGetItem": 1,
            "dynamodb.GetItem": 2,
            "dynamodb.PutItem": 1,
            "dynamodb.Query": 1,
            "dynamodb.TransactWriteItems": 2,
            "dynamodb.UpdateItem": 2,
            "sns.Publish": 1,
        },
        "write_units": 26,
        "read_units": 5.0,
        "state_transitions": 0,
        "lambda_invocations": 3,
        "api_requests": 2,
        "partition_writes": {
            "all_pending PENDING": 2,
            "by_status interrupt#answered": 1,
            "by_status interrupt#pending": 2,
            "due DUE#interrupt": 2,
            "pending PENDING#interrupt": 2,
            "pending_by_node PENDING#node#interrupt": 2,
        },
    },
    "tool approval": {
        "calls": {
            "dynamodb.GetItem": 7,
            "dynamodb.PutItem": 2,
            "dynamodb.Query": 2,
            "dynamodb.TransactWriteItems": 2,
            "sns.Publish": 1,
        },
        "write_units": 43,
        "read_units": 9.0,
        "state_transitions": 0,
        "lambda_invocations": 4,
        "api_requests": 3,
        "partition_writes": {
            "all_pending PENDING": 4,
            "by_status tool_approval#answered": 4,
            "by_status tool_approval#pending": 4,
            "due DUE#tool_approval": 4,
            "pending PENDING#tool_approval": 4,
            "pending_by_node PENDING#node#agent": 4,
        },
    },
    "review": {
        "calls": {
            "dynamodb.BatchGetItem": 2,
            "dynamodb.GetItem": 17,
            "dynamodb.PutItem": 5,
            "dynamodb.Query": 15,
            "dynamodb.TransactWriteItems": 11,
            "dynamodb.UpdateItem": 4,
            "sns.Publish": 3,
            "stepfunctions.SendTaskSuccess": 5,
            "stepfunctions.StartExecution": 2,
            "stepfunctions.StopExecution": 2,
        },
        "write_units": 158,
        "read_units": 38.0,
        "state_transitions": 16,
        "lambda_invocations": 19,
        "api_requests": 2,
        "partition_writes": {
            "all_pending PENDING": 10,
            "by_status review#answered": 6,
            "by_status review#pending": 10,
            "pending PARKED": 4,
            "pending PENDING#review": 10,
            "pending_by_node PENDING#node#ship_review": 10,
        },
    },
}


@dataclass(frozen=True)
class Load:
    """A steady load on one account. `answers_per_s` is the account's total (every team's)."""

    name: str
    answers_per_s: float
    teams: int = 1
    shared_table: bool = False  # one table for every team (else one table each, the load split evenly)
    mix: dict[str, float] = field(default_factory=lambda: {"question": 1.0})
    pause_s: float = 600  # how long a pause waits for its person, on average (open pauses = asks/s x this)
    lambda_seconds: float = 0.1  # each invocation's duration (an assumption, not measured on AWS)


@dataclass(frozen=True)
class Mitigation:
    name: str = "today"
    pending_shards: int = 1  # PENDING, PENDING#<kind>, PARKED, DUE#<kind> written N ways
    status_shards: int = 1  # <kind>#<status> written N ways
    timers: str = "standard"  # "standard" | "scheduler" (EventBridge Scheduler one-time schedules) | "express"


@dataclass(frozen=True)
class Quota:
    value: float
    adjustable: bool


@dataclass(frozen=True)
class Use:
    quota: str  # its name in quotas.json, then the partition's key for a partition's writes
    rate: float
    limit: float = 0
    adjustable: bool = True

    @property
    def utilization(self) -> float:
        return self.rate / self.limit


Profile = dict[str, dict[str, Any]]


def load_quotas(path: Path = QUOTAS) -> dict[str, Quota]:
    found = json.loads(path.read_text())["quotas"]
    return {name: Quota(float(q["value"]), bool(q["adjustable"])) for name, q in found.items()}


def _per_ask(profile: Profile, load: Load, count: str) -> float:
    """A count per life summed over the mix: its rate at one ask per second."""

    def of(life: dict[str, Any]) -> float:
        return float(life["calls"].get(count, 0) if "." in count else life[count])  # "service.Operation": calls

    return sum(share * of(profile[kind]) for kind, share in load.mix.items())


def partition_rates(profile: Profile, load: Load, fix: Mitigation) -> dict[str, float]:
    """Write units per second on each hot index partition of one table ("<index> <key>")."""
    lives = load.answers_per_s if load.shared_table else load.answers_per_s / load.teams
    rates: dict[str, float] = {}
    for kind, share in load.mix.items():
        for key, units in profile[kind]["partition_writes"].items():
            shards = fix.pending_shards if key.split()[0] in PENDING_INDEXES else fix.status_shards
            rates[key] = rates.get(key, 0.0) + lives * share * units / shards
    return rates


def uses(profile: Profile, quotas: dict[str, Quota], load: Load, fix: Mitigation) -> list[Use]:
    """Every quota's rate under the load, with the mitigation applied."""
    rate = load.answers_per_s
    tables = 1 if load.shared_table else load.teams
    starts = rate * _per_ask(profile, load, "stepfunctions.StartExecution")  # the gates' timers
    parked = rate * _per_ask(profile, load, "stepfunctions.SendTaskSuccess")  # runs parked on a task token
    transitions = rate * _per_ask(profile, load, "state_transitions")
    invocations = rate * _per_ask(profile, load, "lambda_invocations")
    found = [
        Use("sfn_send_task_success", parked),
        Use("lambda_concurrent_executions", invocations * load.lambda_seconds),
        Use("apigateway_requests", rate * _per_ask(profile, load, "api_requests")),
        Use("sns_publish", rate * _per_ask(profile, load, "sns.Publish")),
        Use("dynamodb_on_demand_table_write_units", rate * _per_ask(profile, load, "write_units") / tables),
        Use("dynamodb_on_demand_table_read_units", rate * _per_ask(profile, load, "read_units") / tables),
    ]
    if fix.timers == "standard":
        found += [
            Use("sfn_standard_start_execution", starts),
            Use("sfn_standard_state_transitions", transitions),
            Use("sfn_open_executions", (parked + starts) * load.pause_s),  # the timer stopped at the answer
        ]
    else:  # the timer leaves Standard: its StartExecution, its transitions and its open execution with it
        found.append(Use("sfn_standard_state_transitions", max(0.0, transitions - starts * TIMER_TRANSITIONS)))
        found.append(Use("sfn_open_executions", parked * load.pause_s))
        if fix.timers == "scheduler":  # one schedule per timer (its invocation counted as if it fired)
            found += [
                Use("scheduler_create_schedule", starts),
                Use("scheduler_invocations", starts),
                Use("scheduler_schedules", starts * load.pause_s),
            ]
        else:  # Express: at most 5 minutes, so only for deadlines <= 300 s
            found.append(Use("sfn_express_start_execution", starts))
    found += [Use(f"partition {key}", units) for key, units in partition_rates(profile, load, fix).items()]
    limits = {use.quota: quotas[PARTITION_QUOTA if use.quota.startswith("partition ") else use.quota] for use in found}
    return [
        replace(use, limit=limits[use.quota].value, adjustable=limits[use.quota].adjustable)
        for use in found
        if use.rate
    ]


def first_limit(profile: Profile, quotas: dict[str, Quota], load: Load, fix: Mitigation, *, hard: bool = False) -> Use:
    """The quota with the highest utilization (`hard`: of those AWS will not raise)."""
    return max((use for use in uses(profile, quotas, load, fix) if not (hard and use.adjustable)), key=_utilization)


def _utilization(use: Use) -> float:
    return use.utilization


def answers_at_limit(
    profile: Profile, quotas: dict[str, Quota], load: Load, fix: Mitigation, *, hard: bool = False
) -> tuple[float, Use]:
    """The account's answers/s at which the first quota (`hard`: the first one AWS will not raise) is reached,
    bisecting a scale factor on the load (teams, mix and deadline kept), and that quota's use there."""

    def worst(scale: float) -> Use:
        return first_limit(profile, quotas, replace(load, answers_per_s=load.answers_per_s * scale), fix, hard=hard)

    low, high = 0.0, 1.0
    while worst(high).utilization < 1:
        low, high = high, high * 2
    for _ in range(50):
        middle = (low + high) / 2
        low, high = (middle, high) if worst(middle).utilization < 1 else (low, middle)
    return load.answers_per_s * high, worst(high)


SCENARIOS = [
    Load("1 team, 150 answers/s", 150),
    Load("100 teams x 5 answers/s, a table each", 500, teams=100),
    Load("100 teams x 5 answers/s, one table", 500, teams=100, shared_table=True),
    Load("1,000 answers/s, one table", 1000),
]
MITIGATIONS = [
    Mitigation(),
    Mitigation("timers on EventBridge Scheduler", timers="scheduler"),
    Mitigation("+ pending and status keys sharded x10", pending_shards=10, status_shards=10, timers="scheduler"),
]


def simulate(profile: Profile, quotas: dict[str, Quota]) -> list[dict[str, Any]]:
    """Per scenario and mitigation: the busiest quotas (utilization), and the answers/s at which the first
    quota and the first hard one are reached."""
    rows = []
    for load in SCENARIOS:
        for fix in MITIGATIONS:
            busiest = sorted(uses(profile, quotas, load, fix), key=_utilization, reverse=True)[:4]
            answers, limit = answers_at_limit(profile, quotas, load, fix)
            hard_answers, hard_limit = answers_at_limit(profile, quotas, load, fix, hard=True)
            rows.append(
                {
                    "load": load.name,
                    "mitigation": fix.name,
                    "busiest": {use.quota: round(use.utilization, 3) for use in busiest},
                    "first_limit": limit.quota,
                    "first_limit_answers_per_s": round(answers),
                    "first_hard_limit": hard_limit.quota,
                    "first_hard_limit_answers_per_s": round(hard_answers),
                }
            )
    return rows


def print_table(rows: list[dict[str, Any]]) -> None:
    print("scaling simulation (bench/parts/scaling_sim.py): questions answered after 10 min, us-east-1")
    print("quotas (bench/quotas.json); utilization of the busiest quotas; answers/s at the first limit and at")
    print("the first one AWS will not raise (the rest are adjustable on request)")
    width = max(len(row["load"]) for row in rows)
    for row in rows:
        busiest = ", ".join(f"{name} {used * 100:.0f}%" for name, used in row["busiest"].items())
        print(f"  {row['load']:<{width}}  {row['mitigation']}: {busiest}")
        print(
            f"  {'':<{width}}    first limit {row['first_limit']} at {row['first_limit_answers_per_s']:,} answers/s;"
            f" first hard limit {row['first_hard_limit']} at {row['first_hard_limit_answers_per_s']:,}"
        )


def record() -> Profile:
    """PROFILE measured: one life per kind on the local stack (parts/cost_model.py drives them), with each
    life's calls by operation and its write units on each index partition."""
    import capacity
    import cost_model
    import life_meter

    class PartitionMeter(capacity.CapacityMeter):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.partitions: Counter[str] = Counter()
            self.lives: list[tuple[Counter[str], Counter[str]]] = []  # (calls by operation, partition writes)

        def reset(self) -> None:
            super().reset()
            self.partitions = Counter()

        def figures(self) -> dict[str, Any]:  # called once per counted life, as it ends
            calls: Counter[str] = Counter()
            for (who, op), n in life_meter.COUNT.life_calls().items():
                if who != ENGINE:
                    calls[op] += n
            self.lives.append((calls, self.partitions))
            return dict(super().figures())

        def _after(self, model: Any, http_response: Any, context: dict[str, Any], **kwargs: Any) -> None:
            super()._after(model, http_response, context, **kwargs)
            if http_response.status_code != 200 or not self.counting.is_set() or self.is_meter_call():
                return
            for (table, action, key, _), before in context.get("capacity_before", []) if self.include() else []:
                if action != "ConditionCheck":
                    self.partitions.update(partition_writes(before, self._get(table, key)))

    life_meter.CapacityMeter = PartitionMeter  # type: ignore[attr-defined]  # start_stack makes the meter
    rows = cost_model.measure(samples=1)
    meter = life_meter.COUNT.meter
    assert isinstance(meter, PartitionMeter) and len(meter.lives) == len(rows)
    return {
        row.kind: {
            "calls": dict(sorted(calls.items())),
            "write_units": row.write_units,
            "read_units": row.read_units,
            "state_transitions": row.state_transitions,
            "lambda_invocations": row.lambda_invocations,
            "api_requests": row.api_requests,
            "partition_writes": dict(sorted(partitions.items())),
        }
        for (row, _), (calls, partitions) in zip(rows, meter.lives, strict=True)
    }


def partition_writes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> Counter[str]:
    """Write units each index partition ("<index> <partition key>") takes for one item going from `before`
    to `after`: capacity.index_writes' rules, by partition."""
    units: Counter[str] = Counter()
    for gsi in GLOBAL_SECONDARY_INDEXES:
        keys = (gsi["partition_key"], gsi["sort_key"])
        was = before is not None and all(k in before for k in keys)
        now = after is not None and all(k in after for k in keys)
        old = f"{gsi['name']} {before[keys[0]]['S']}" if was else ""  # type: ignore[index]
        new = f"{gsi['name']} {after[keys[0]]['S']}" if now else ""  # type: ignore[index]
        size_before, size_after = item_size(before), item_size(after)
        if was and now and any(before[k] != after[k] for k in keys):  # type: ignore[index]
            units[old] += write_units(0, size_before)
            units[new] += write_units(0, size_after)
        elif was and now and before != after:
            units[new] += write_units(size_before, size_after)
        elif was != now:
            units[old or new] += write_units(0, size_before or size_after)
    return units


def drift(recorded: Profile, measured: Profile, tolerance: float = DRIFT_TOLERANCE) -> list[str]:
    """What differs between two profiles beyond a life's variance: a kind, an operation or a partition key
    added or gone, or a count off by more than `tolerance` of it (and by more than `DRIFT_SLACK`)."""
    found = []
    for kind in sorted(set(recorded) | set(measured)):
        if kind not in recorded or kind not in measured:
            found.append(f"{kind}: {'new' if kind in measured else 'gone'}")
            continue
        was, now = _flat(recorded[kind]), _flat(measured[kind])
        for name in sorted(set(was) | set(now)):
            old, new = was.get(name), now.get(name)
            if old is None or new is None or abs(new - old) > max(DRIFT_SLACK, tolerance * old):
                found.append(f"{kind}: {name} {old} -> {new}")
    return found


def drift_from_lives(profile: Profile, kinds: list[dict[str, Any]], tolerance: float = DRIFT_TOLERANCE) -> list[str]:
    """`drift` against the cost model's lives (parts/cost_model.py's JSON `kinds`: one row per kind, its
    calls by service, not by operation): the counts both carry."""
    measured = {
        row["kind"]: {
            "calls": {f"{service}.*": n for service, n in row["calls_by_service"].items()},
            "partition_writes": {},
            **{count: row[count] for count in LIFE_COUNTS},
        }
        for row in kinds
    }
    recorded = {
        kind: {
            "calls": {f"{service}.*": n for service, n in _by_service(life["calls"]).items()},
            "partition_writes": {},
            **{count: life[count] for count in LIFE_COUNTS},
        }
        for kind, life in profile.items()
        if kind in measured  # a quick bench leaves the review's life out (parts/cost_model.py --quick)
    }
    return drift(recorded, measured, tolerance)


def _by_service(calls: dict[str, int]) -> dict[str, int]:
    found: Counter[str] = Counter()
    for op, n in calls.items():
        found[op.split(".")[0]] += n
    return dict(found)


def _flat(life: dict[str, Any]) -> dict[str, float]:
    flat = {name: float(value) for name, value in life.items() if not isinstance(value, dict)}
    flat |= {f"calls {op}": float(n) for op, n in life["calls"].items()}
    flat |= {f"writes {key}": float(n) for key, n in life["partition_writes"].items()}
    flat["calls"] = float(sum(life["calls"].values()))
    return flat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--record", action="store_true", help="re-measure the profile on the local stack (~4 min)")
    args = parser.parse_args()
    if args.record:
        measured = record()
        print(json.dumps(measured, indent=4))
        if drifted := drift(PROFILE, measured):
            sys.exit("the profile drifted from PROFILE (paste the JSON above into it): " + "; ".join(drifted))
        return
    rows = simulate(PROFILE, load_quotas())
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print_table(rows)


if __name__ == "__main__":
    main()
