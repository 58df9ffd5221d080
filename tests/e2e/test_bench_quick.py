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


def _run(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers/baton/python"), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_critical_path_bench_prints_its_ratios_and_calls() -> None:
    figures = _last_json(_run("scripts/bench_critical_path.py", "--quick", "--json"))
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
        assert set(figures["cpu_ms"][name]["per_operation"]) == set(calls["sequence"])
        assert figures["cpu_ms"][name]["http_adapter"] > 0 and figures["ratios"][name]["x_one_write"] > 0
        assert figures["cpu_ms"][name]["service_outside_aws_calls"] > 0
    assert figures["timed_services"] == ["RunService.resume", "QuestionService.answer"]


def test_the_load_bench_prints_answers_per_second_with_history() -> None:
    out = _run("scripts/bench_load.py", "--quick")
    assert "history 1x (40 answered before)" in out
    assert re.search(r"answered\s+[\d.]+ s\s+\(\s*[\d.]+ answers/s", out), out
    assert re.search(r"still pending after\s+0 ", out), out


def _last_json(out: str) -> dict[str, Any]:
    """The JSON object the bench prints last (the stack's console notifications come before it)."""
    start = out.rindex("\n{") + 1 if "\n{" in out else out.index("{")
    parsed: dict[str, Any] = json.loads(out[start:])
    return parsed


def test_the_cold_import_bench_prints_each_functions_ratio_against_its_floor() -> None:
    out = _run("scripts/bench_cold.py", "--samples", "1", "park", "notify_console", "slack_worker", "api+")
    for name, floor in (("park", "gate"), ("notify_console", "model"), ("slack_worker", "logger")):
        assert re.search(rf"^  {name}\s+[\d.]+ \(\s*[\d.]+\) CPU\s+[\d.]+x\s+floor {floor}\b", out, re.M), out
    assert re.search(r"^  api \+ resume's routes\s+[\d.]+ \(\s*[\d.]+\) CPU\s+[\d.]+x\s+floor api\b", out, re.M), out
    assert re.search(r"over 1\.2x their floor \(CPU best of 1\): \d of 4", out), out


def test_the_cold_import_instruction_count_is_the_same_run_after_run() -> None:
    # The reproducible unit: valgrind's count of one import, twice, agrees to 0.1 % (a count, not a timing).
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_cold

    first, second = (bench_cold.instructions("import json, decimal") for _ in range(2))
    assert first > 0 and abs(first - second) <= first / 1000, (first, second)
