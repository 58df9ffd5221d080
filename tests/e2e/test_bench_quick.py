"""The benches' quick modes run in CI so they never rot: each prints its figures (checked for being
there and being numbers), never judged as timings."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, **extra_env: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers/baton/python"), str(ROOT)]), **extra_env}
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _last_json(out: str) -> dict[str, Any]:
    """The JSON object a bench prints last (the stack's console notifications come before it)."""
    start = out.rindex("\n{") + 1 if "\n{" in out else out.index("{")
    parsed: dict[str, Any] = json.loads(out[start:])
    return parsed


# `make test` sets BATON_BENCH_LOG: the bench's whole output is copied there and printed after the tests,
# so the CI log shows the figures of its one quick run (bench/summary.py --quick runs nowhere else in CI).
BENCH_LOG = "BATON_BENCH_LOG"
# bench/summary.py writes the critical path's figures (its JSON) here too, checked beyond the summary.
CRITICAL_JSON = "BATON_BENCH_CRITICAL_JSON"


def _check_critical_path_figures(figures: dict[str, Any]) -> None:
    """The critical path's JSON (bench/summary.py hands it over): every figure, each Baton request split."""
    assert figures["samples"] == 3
    for name in ("bare, pause", "one write, pause", "resume", "bare, await", "one write, await", "last answer"):
        assert figures["ms"][name]["median"] > 0 and figures["ms"][name]["p95"] >= figures["ms"][name]["median"]
        cpu = figures["cpu_ms"][name]  # the request's thread: its AWS calls (moto's part within) and the rest
        assert 0 < cpu["aws_moto"] < cpu["aws_calls"] <= cpu["request"] and cpu["to_succeeded"] > 0
    for name, floors in (
        ("resume", ("bare, pause", "one write, pause")),
        ("last answer", ("bare, await", "one write, await")),
    ):
        assert (figures["floors"][name]["bare"], figures["floors"][name]["one write"]) == floors
        calls = figures["calls"][name]
        assert calls["before_send"] is not None and 0 < calls["before_send"] < calls["total"]
        # per-operation CPU covers every operation any sample made (samples may differ: a retried
        # transaction, the run's read when it ended before the release's bookkeeping)
        seen = {op for sequence in calls["sequences"] for op in sequence.split()}
        assert {op.split(".", 1)[1] for op in figures["cpu_ms"][name]["per_operation"]} == seen
        assert set(calls["sequence"]) <= set(figures["cpu_ms"][name]["per_operation"])
        assert figures["cpu_ms"][name]["http_adapter"] > 0 and figures["ratios"][name]["x_one_write"] > 0
        assert figures["cpu_ms"][name]["service_outside_aws_calls"] > 0
    assert figures["timed_services"] == ["RunService.resume", "QuestionService.answer"]


@pytest.mark.timeout(900)  # the bench's children are bounded by _run's 600 s; a loaded machine is slow
def test_the_quick_bench_prints_every_summary_figure(tmp_path: Path) -> None:
    critical = tmp_path / "critical.json"
    out = _run("bench/summary.py", "--quick", **{CRITICAL_JSON: str(critical)})
    if os.environ.get(BENCH_LOG):
        Path(os.environ[BENCH_LOG]).write_text(out)
    summary = out[out.rindex("\nsummary, quick") :]
    for name, floor in (("park", "gate"), ("notify_console", "model"), ("slack_worker", "logger")):
        assert re.search(rf"^  cold import {name}\s+\d+ ms CPU\s+floor {floor} \d+ ms\s+[\d.]+x", summary, re.M), out
    assert re.search(r"^  cold import api \+ resume's routes\s+\d+ ms CPU\s+floor api \d+ ms", summary, re.M), out
    assert re.search(r"^  cold imports over 1\.2x their floor\s+\d+ of \d+", summary, re.M), out
    assert re.search(r"^  baton --help\s+\d+ ms CPU\s+bare Typer app \d+ ms", summary, re.M), out
    assert re.search(r"^  baton dev until its API answers\s+[\d.]+ s wall, [\d.]+ s CPU", summary, re.M), out
    for name in ("resume", "last answer"):
        found = re.search(rf"^  {name} -> SUCCEEDED, median / p95\s+([\d.]+) / ([\d.]+) ms \(n=3\)", summary, re.M)
        assert found, out
        median, p95 = float(found[1]), float(found[2])
        assert 0 < median <= p95, found[0]
        anchors = re.search(r"one write ([\d.]+) / ([\d.]+) ms, bare ([\d.]+)", found.string[found.end() :])
        assert anchors and 0 < float(anchors[1]) <= float(anchors[2]) and float(anchors[3]) > 0
        calls = re.search(rf"^  AWS calls, {name}\s+(\d+) \((\d+) before the send\)", summary, re.M)
        assert calls and 0 < int(calls[2]) < int(calls[1]), out
    for history in (0, 2):
        assert re.search(rf"^  answers/s, 8 clients, 24 pending, {history}x history\s+[\d.]+/s", summary, re.M), out
    assert len(re.findall(r"^  still pending after\s+0 ", out, re.M)) == 2, out
    cost_row = r"\s+([\d.]+)\s+(\d+) AWS calls \(floor (\d+)\), (\d+) WRU, (\d+) transitions"
    for kind in ("question", "blocking ask", "interrupt", "tool approval"):  # the cost model (parts/cost_model.py)
        row = re.search(rf"^  USD of 1,000 lives, {kind}{cost_row}", summary, re.M)
        assert row and float(row[1]) > 0 and int(row[2]) >= int(row[3]) > 0 and int(row[4]) > 0, out
        assert kind != "question" or int(row[5]) > 0, row[0]  # the run's and its deadline timer's states
    _check_critical_path_figures(json.loads(critical.read_text()))


def test_the_cold_import_instruction_count_is_the_same_run_after_run() -> None:
    # The reproducible unit: valgrind's count of one import, twice, agrees to 0.1 % (a count, not a timing).
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    sys.path.insert(0, str(ROOT / "bench" / "parts"))
    import cold_imports

    first, second = (cold_imports.instructions("import json, decimal") for _ in range(2))
    assert first > 0 and abs(first - second) <= first / 1000, (first, second)
