"""The scaling simulation's arithmetic (bench/parts/scaling_sim.py) on a tiny profile checked by hand, its
first-limit finder, the per-partition write rules its recorder uses, and its recorded call profile against
what it must stay true to: the cost model's kinds, the table's index keys, the timer's state machine and
bench/quotas.json. The profile's counts against a live life: `scaling_sim.py --record` (about four minutes
on the local stack) and the summary's scaling section, which compares it with the cost model's lives of the
same run (`drift`, tested here)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "parts"))
from cost_model import LOWER_BOUNDS
from scaling_sim import (
    PROFILE,
    QUOTAS,
    SCENARIOS,
    TIMER_TRANSITIONS,
    Load,
    Mitigation,
    Quota,
    answers_at_limit,
    drift,
    drift_from_lives,
    first_limit,
    load_quotas,
    partition_rates,
    partition_writes,
    simulate,
    uses,
)

from baton.workflows.table import GLOBAL_SECONDARY_INDEXES

ROOT = Path(__file__).resolve().parents[2]

# One kind, small round numbers: every figure below is this times the load, worked out by hand.
TINY: dict[str, dict[str, Any]] = {
    "question": {
        "calls": {
            "dynamodb.PutItem": 3,
            "sns.Publish": 1,
            "stepfunctions.SendTaskSuccess": 1,
            "stepfunctions.StartExecution": 1,
        },
        "write_units": 10,
        "read_units": 4.0,
        "state_transitions": 6,
        "lambda_invocations": 3,
        "api_requests": 2,
        "partition_writes": {"all_pending PENDING": 2, "by_status question#pending": 1},
    }
}
ROOMY = 1e12  # a quota nothing reaches
TINY_QUOTAS = {
    name: Quota(ROOMY, adjustable=True)
    for name in (
        "sfn_send_task_success",
        "lambda_concurrent_executions",
        "apigateway_requests",
        "sns_publish",
        "dynamodb_on_demand_table_write_units",
        "dynamodb_on_demand_table_read_units",
        "sfn_standard_start_execution",
        "sfn_open_executions",
        "scheduler_create_schedule",
        "scheduler_invocations",
        "scheduler_schedules",
        "sfn_express_start_execution",
    )
} | {
    "sfn_standard_state_transitions": Quota(1500, adjustable=True),
    "dynamodb_partition_write_units": Quota(1000, adjustable=False),
}


def _rates(load: Load, fix: Mitigation = Mitigation()) -> dict[str, float]:
    return {use.quota: use.rate for use in uses(TINY, TINY_QUOTAS, load, fix)}


def test_each_rate_is_the_count_per_life_times_the_lives_per_second() -> None:
    # 100 answers/s, one team, pauses of 30 s (each timer stopped by its answer), each invocation 0.1 s
    rates = _rates(Load("tiny", 100, pause_s=30))
    assert rates["sfn_standard_start_execution"] == 100  # 1 timer a life
    assert rates["sfn_send_task_success"] == 100
    assert rates["sfn_standard_state_transitions"] == 600  # 6 a life
    assert rates["sfn_open_executions"] == 3000 + 3000  # 100 runs/s parked 30 s, their 100 timers/s as long
    assert rates["lambda_concurrent_executions"] == pytest.approx(30)  # 300 invocations/s x 0.1 s
    assert rates["apigateway_requests"] == 200
    assert rates["dynamodb_on_demand_table_write_units"] == 1000  # 10 WRU a life
    assert rates["partition all_pending PENDING"] == 200  # 2 units a life on the one PENDING partition
    assert rates["partition by_status question#pending"] == 100


def test_tables_and_shards_divide_a_partitions_writes() -> None:
    # 4 teams with a table each: 25 lives/s per table; shared: all 100 on one
    assert partition_rates(TINY, Load("own", 100, teams=4), Mitigation())["all_pending PENDING"] == 50
    shared = Load("shared", 100, teams=4, shared_table=True)
    assert partition_rates(TINY, shared, Mitigation())["all_pending PENDING"] == 200
    # PENDING sharded 4 ways: 200 / 4; the status key follows its own shard count (5): 100 / 5
    sharded = partition_rates(TINY, shared, Mitigation(pending_shards=4, status_shards=5))
    assert sharded == {"all_pending PENDING": 50, "by_status question#pending": 20}
    assert _rates(Load("own", 100, teams=4))["dynamodb_on_demand_table_write_units"] == 250  # per table


def test_timers_off_standard_take_their_start_and_transitions_with_them() -> None:
    load = Load("tiny", 100, pause_s=30)
    scheduled = _rates(load, Mitigation(timers="scheduler"))
    # 600 transitions/s less 100 timers x the 1 state each enters before its answer stops it
    assert scheduled["sfn_standard_state_transitions"] == 600 - 100 * TIMER_TRANSITIONS == 500
    assert scheduled["scheduler_create_schedule"] == scheduled["scheduler_invocations"] == 100
    assert scheduled["scheduler_schedules"] == 3000  # each until its answer, 30 s
    assert scheduled["sfn_open_executions"] == 3000  # the parked runs only
    assert "sfn_standard_start_execution" not in scheduled
    assert _rates(load, Mitigation(timers="express"))["sfn_express_start_execution"] == 100


def test_the_first_limit_and_the_load_that_reaches_it() -> None:
    load = Load("tiny", 100)
    # transitions: 6 a life against 1,500/s -> 250 answers/s; PENDING: 2 units against 1,000/s -> 500
    assert first_limit(TINY, TINY_QUOTAS, load, Mitigation()).quota == "sfn_standard_state_transitions"
    answers, reached = answers_at_limit(TINY, TINY_QUOTAS, load, Mitigation())
    assert answers == pytest.approx(250, rel=1e-6) and reached.quota == "sfn_standard_state_transitions"
    hard_answers, hard = answers_at_limit(TINY, TINY_QUOTAS, load, Mitigation(), hard=True)
    assert hard_answers == pytest.approx(500, rel=1e-6) and hard.quota == "partition all_pending PENDING"
    assert not hard.adjustable
    # sharded 4 ways: PENDING takes 2,000 answers/s, the status key 4,000; a load past every limit bisects down
    fix = Mitigation(pending_shards=4, status_shards=4)
    sharded, hard = answers_at_limit(TINY, TINY_QUOTAS, Load("x", 10_000), fix, hard=True)
    assert sharded == pytest.approx(2000, rel=1e-6) and hard.quota == "partition all_pending PENDING"
    # the status key left whole is then the first: 1 unit a life, 1,000 answers/s
    whole, hard = answers_at_limit(TINY, TINY_QUOTAS, load, Mitigation(pending_shards=4), hard=True)
    assert whole == pytest.approx(1000, rel=1e-6) and hard.quota == "partition by_status question#pending"


def test_partition_writes_follow_the_index_write_rules_by_key() -> None:
    pending = {
        "PK": {"S": "RUN#r"},
        "SK": {"S": "INT#i"},
        "GSI2PK": {"S": "question#pending"},
        "GSI2SK": {"S": "r#t#i"},
        "GSI3PK": {"S": "PENDING"},
        "GSI3SK": {"S": "t#i"},
    }
    answered = {k: v for k, v in pending.items() if not k.startswith("GSI3")} | {"GSI2PK": {"S": "question#answered"}}
    # asked: the item enters both indexes, 1 unit each (a small item)
    assert partition_writes(None, pending) == {"by_status question#pending": 1, "all_pending PENDING": 1}
    # answered: leaves PENDING (1), and its by_status key changes: a delete and a put (1 + 1)
    assert partition_writes(pending, answered) == {
        "all_pending PENDING": 1,
        "by_status question#pending": 1,
        "by_status question#answered": 1,
    }
    assert partition_writes(pending, pending) == {}


def test_drift_ignores_a_lives_variance_and_names_what_changed() -> None:
    moved = json.loads(json.dumps(TINY))
    moved["question"]["write_units"] = 12  # within 15% or 2
    assert drift(TINY, moved) == []
    moved["question"]["calls"]["dynamodb.PutItem"] = 6
    moved["question"]["partition_writes"]["pending PARKED"] = 4
    assert drift(TINY, moved) == [
        "question: calls 6.0 -> 9.0",
        "question: calls dynamodb.PutItem 3.0 -> 6.0",
        "question: writes pending PARKED None -> 4.0",
    ]
    assert drift(TINY, {}) == ["question: gone"]


def test_drift_from_the_cost_models_lives_compares_calls_by_service() -> None:
    # the cost model's JSON row of the same life: calls by service, and the counts both carry
    row: dict[str, Any] = {"kind": "question", "calls_by_service": {"dynamodb": 3, "sns": 1, "stepfunctions": 2}}
    row |= {"write_units": 10, "read_units": 4.0, "state_transitions": 6, "lambda_invocations": 3, "api_requests": 2}
    assert drift_from_lives(TINY, [row]) == []
    row["calls_by_service"] = {"dynamodb": 5, "sns": 1, "stepfunctions": 2}
    assert drift_from_lives(TINY, [row]) == []  # 2 calls more: a life's variance
    row["calls_by_service"] = {"dynamodb": 6, "sns": 1, "stepfunctions": 2}
    row["state_transitions"] = 10
    assert drift_from_lives(TINY, [row]) == [
        "question: calls 6.0 -> 9.0",
        "question: calls dynamodb.* 3.0 -> 6.0",
        "question: state_transitions 6.0 -> 10.0",
    ]


def test_the_recorded_profile_matches_the_cost_models_kinds_and_the_tables_keys() -> None:
    assert set(PROFILE) == set(LOWER_BOUNDS)  # every pause kind the cost model drives, no other
    indexes = {gsi["name"] for gsi in GLOBAL_SECONDARY_INDEXES}
    key = re.compile(r"PENDING|PARKED|PENDING#\w+|PENDING#node#\w+|DUE#\w+|\w+#(pending|answered|timed_out|cancelled)")
    for kind, life in PROFILE.items():
        assert life["calls"] and life["write_units"] > 0, kind
        for partition in life["partition_writes"]:
            index, value = partition.split(" ")
            assert index in indexes and key.fullmatch(value), (kind, partition)
    # only the question parks a gate: one timer started, one token sent
    question = PROFILE["question"]["calls"]
    assert question["stepfunctions.StartExecution"] == question["stepfunctions.SendTaskSuccess"] == 1


def test_the_timers_transitions_are_the_states_it_enters_before_the_answer_stops_it() -> None:
    states = json.loads((ROOT / "statemachines" / "gate_deadline.asl.json").read_text())
    path, name = [], states["StartAt"]
    while states["States"][name]["Type"] != "Wait":  # the answer stops it in its first Wait
        path.append(name)
        name = states["States"][name]["Next"]
    assert len([*path, name]) == TIMER_TRANSITIONS


def test_every_quota_the_simulation_reads_has_its_value_source_and_date() -> None:
    quotas = json.loads(QUOTAS.read_text())
    assert quotas["region"] == "us-east-1" and quotas["looked_up"]
    for name, quota in quotas["quotas"].items():
        assert quota["value"] > 0 and isinstance(quota["adjustable"], bool), name
        assert "https://" in quota["source"] and quota["verified"] in ("primary", "archived", "secondary"), name
    loaded = load_quotas()
    for load in SCENARIOS:  # every quota a scenario uses is in the file (uses() would raise KeyError)
        for timers in ("standard", "scheduler", "express"):
            assert uses(PROFILE, loaded, load, Mitigation(timers=timers))


def test_the_scenarios_table_names_a_limit_for_each_row() -> None:
    rows = simulate(PROFILE, load_quotas())
    assert len(rows) == 12
    for row in rows:
        assert row["first_limit_answers_per_s"] <= row["first_hard_limit_answers_per_s"]
        assert row["busiest"]
