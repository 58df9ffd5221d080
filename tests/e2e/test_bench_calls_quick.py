"""bench/parts/call_cpu.py's quick mode (the calls section of bench/local_scale.py) runs in CI so it never
rots: every call's parts are printed, for the plain and the fixed in-process path (checked for being there,
never judged as timings)."""

from __future__ import annotations

from tests.e2e.test_bench_quick import _last_json, _run

CALLS = (
    "dynamodb.Query",
    "dynamodb.GetItem",
    "dynamodb.UpdateItem",
    "dynamodb.TransactWriteItems",
    "stepfunctions.DescribeExecution",
    "stepfunctions.SendTaskSuccess",
)


def test_the_calls_bench_prints_each_calls_parts_plain_and_fixed() -> None:
    figures = _last_json(_run("bench/parts/call_cpu.py", "--quick", "--json"))
    assert sorted(figures) == sorted(CALLS)
    for name in CALLS:
        for variant in ("plain", "fixed"):
            figure = figures[name][variant]
            assert figure["samples"] == 5
            assert figure["client"] > 0 and figure["routing"] > 0 and figure["moto"] > 0  # each part measured
            assert figure["total"] > max(figure["client"], figure["routing"], figure["moto"])  # (medians, not a sum)
