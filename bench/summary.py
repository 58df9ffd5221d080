"""Baton's bench summary: prints figures measured side by side in one run, asserts nothing about speed, and
ends with one summary table of every ratio (the last step of `make bench`; `--quick` in `make test`, small
n). Each figure belongs to one of the four questions (bench/cold_start.py, bench/answer_latency.py,
bench/aws_costs.py, bench/local_scale.py), which run it alone with its neighbours.

  cold import per function   bench/parts/cold_imports.py (its docstring: the floors and the two units): a fresh
                             interpreter imports functions/<name>/handler.py (tracing off, bytecode
                             compiled) against its libraries' floor, in CPU time (best of N) and, in full
                             mode, in instructions counted by valgrind (the same on a loaded machine);
                             every function's ratio in the summary, those over 1.2x marked OVER
  CLI start                  `baton --help` against a bare two-command Typer app (wall and CPU)
  HTTP adapter               one small response over a kept-alive connection, with TCP_NODELAY (as the
                             adapter runs) and without it (the Nagle / delayed-ACK stall)
  baton dev                  `baton dev --no-demo` spawned until its API answers a request (wall, and the
                             CPU its process used by then: the figure to read on a loaded machine)
  local-stack start()        in this process, and the state machines' creation after it
  critical path              bench/parts/critical_path.py: resume and last answer -> SUCCEEDED (the end
                             hooked in moto's engine, no poller) against the bare SendTaskSuccess round
                             trip and the one-write floor of each one's own workflow (median, p95), the
                             CPU of each request's thread (in AWS calls and outside) and its AWS calls
  load                       bench/parts/load.py: answers/s with 8 clients at 1,000 pending, and again
                             at 10x history
  cost model                 bench/parts/cost_model.py: the median of 3 lives per pause kind, its AWS calls, capacity
                             units, state transitions, Lambda and API requests, priced for 1,000 lives
                             (bench/prices.json) beside its lower bound in calls; the same in quick mode
  scaling                    bench/parts/scaling_sim.py: each scenario's first AWS quota reached (bench/
                             quotas.json), from a recorded call profile; the bench fails when that profile
                             drifted from the cost model's lives of the same run

Usage: uv run python bench/summary.py [--quick] [--samples 5] [--critical-samples 50] [--no-callgrind]
       [--only "cold imports,CLI"] (those sections only: bench/cold_start.py runs its own so)
       --quick (CI): one sample of each import, 3 critical-path samples, a 24-question load; no instruction
       counts, no import without bytecode, no in-process stack start
       the cold imports alone: uv run python bench/parts/cold_imports.py [--instructions] [names...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[1]
FUNCTIONS = ROOT / "functions"
PARTS = ROOT / "bench" / "parts"

BARE_TYPER = (
    "import typer\n"
    "app = typer.Typer(no_args_is_help=True)\n"
    "@app.command()\n"
    "def hello(name: str) -> None:\n"
    "    print(name)\n"
    "@app.command()\n"
    "def bye() -> None:\n"
    "    pass\n"
    "app()\n"
)
LAMBDA_ENV = {
    "BATON_TABLE_NAME": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
    "LAMBDA_TASK_ROOT": str(ROOT),
    "POWERTOOLS_TRACE_DISABLED": "true",
}


class Summary:
    """The rows of the closing table: figure, Baton's value, the anchor it is measured against, ratio."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []

    def add(self, figure: str, value: str, anchor: str = "", ratio: float | None = None, note: str = "") -> None:
        self.rows.append((figure, value, anchor, ("" if ratio is None else f"{ratio:.2f}x") + note))

    def print(self, title: str) -> None:
        widths = [max(len(row[i]) for row in [("figure", "Baton", "anchor", "ratio"), *self.rows]) for i in range(4)]
        print(f"\n{title}")
        for row in [("figure", "Baton", "anchor", "ratio"), *self.rows]:
            print("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


SUMMARY = Summary()


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def instructions(code: str) -> int | None:
    """Instructions callgrind counts for a fresh interpreter running `code`."""
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **LAMBDA_ENV},
        check=False,
    )
    found = re.search(r"Collected\s*:\s*(\d+)", result.stderr)
    return int(found.group(1)) if found else None


def bench_cold_imports(samples: int, count: bool) -> None:
    """bench/parts/cold_imports.py: every function's cold import against its floor, each row into the summary."""
    sys.path.insert(0, str(PARTS))
    import cold_imports

    cold_imports.run(samples, count, 2, SUMMARY.add)


def _run_cpu(argv: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def bench_cli(samples: int, callgrind: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        bare = Path(folder) / "bare_typer.py"
        bare.write_text(BARE_TYPER)
        runs = {
            "baton --help": [sys.executable, "-m", "baton.cli", "--help"],
            "bare Typer app --help": [sys.executable, str(bare), "--help"],
        }
        figures = {}
        for label, argv in runs.items():
            measured = [_run_cpu(argv) for _ in range(samples)]
            figures[label] = (statistics.median(w for w, _ in measured), statistics.median(c for _, c in measured))
        (wall, cpu), (bare_wall, bare_cpu) = figures["baton --help"], figures["bare Typer app --help"]
        print(f"CLI start, median of {samples}")
        print(f"  bare Typer app --help    {bare_wall * 1000:7.1f} ms wall  {bare_cpu * 1000:7.1f} ms CPU")
        print(
            f"  baton --help             {wall * 1000:7.1f} ms wall  {cpu * 1000:7.1f} ms CPU"
            f"   {cpu / bare_cpu:4.2f}x the bare app's CPU"
        )
        SUMMARY.add(
            "baton --help", f"{cpu * 1000:.0f} ms CPU", f"bare Typer app {bare_cpu * 1000:.0f} ms", cpu / bare_cpu
        )
        if callgrind and shutil.which("valgrind"):
            cli = (
                "import sys; sys.argv = ['baton', '--help']\nfrom baton.cli.main import main\n"
                "try: main()\nexcept SystemExit: pass"
            )
            typer_app = (
                f"import sys; sys.argv = ['bare', '--help']\ntry:\n    exec({BARE_TYPER!r})\nexcept SystemExit: pass"
            )
            baton_ir, bare_ir = instructions(cli) or 0, instructions(typer_app) or 1
            print(
                f"  instructions             {baton_ir / 1e6:9.1f} M vs {bare_ir / 1e6:.1f} M:"
                f" {baton_ir / bare_ir:4.2f}x"
            )
            SUMMARY.add(
                "baton --help instructions",
                f"{baton_ir / 1e6:.0f} M",
                f"bare {bare_ir / 1e6:.0f} M",
                baton_ir / bare_ir,
            )


def _adapter_ms(requests: int, nodelay: bool) -> float:
    import httpx

    from baton.local.http_adapter import make_server

    body = json.dumps({"ok": True, "pad": "x" * 200})
    server = make_server("127.0.0.1", 0, lambda event: {"statusCode": 200, "body": body})
    server.RequestHandlerClass.disable_nagle_algorithm = nodelay  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{server.server_address[1]}") as client:
            client.get("/warm")
            took = []
            for _ in range(requests):
                started = time.perf_counter()
                client.get("/api/runs")
                took.append(time.perf_counter() - started)
    finally:
        server.shutdown()
        server.server_close()
    return statistics.median(took) * 1000


def bench_http_adapter(requests: int) -> None:
    on, off = _adapter_ms(requests, nodelay=True), _adapter_ms(requests, nodelay=False)
    print(f"local HTTP adapter, one response on a kept-alive connection, median of {requests}")
    print(f"  with TCP_NODELAY (as it runs) {on:7.2f} ms   without {off:7.2f} ms")
    SUMMARY.add("HTTP adapter, one response", f"{on:.1f} ms", f"without TCP_NODELAY {off:.1f} ms", on / off)


def bench_baton_dev() -> None:
    """`baton dev` spawned (no demo, fresh state) until its API answers; then stopped by its pid."""
    import httpx

    with tempfile.TemporaryDirectory() as state_dir:
        state_file = Path(state_dir) / "local.json"
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "baton.cli", "dev", "--port", "0", "--no-demo", "--fresh", "--state-dir", state_dir],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            answered = _first_answer(state_file, process, httpx)
            elapsed = time.perf_counter() - started
            cpu = _cpu_seconds(process.pid)
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
    print(
        f"baton dev until its API answers   {elapsed:6.2f} s wall  {cpu:6.2f} s CPU of its process   (HTTP {answered})"
    )
    SUMMARY.add("baton dev until its API answers", f"{elapsed:.2f} s wall, {cpu:.2f} s CPU", "goal 4 s")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU a running process has used (Linux /proc; fields 14 and 15, in clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _first_answer(state_file: Path, process: subprocess.Popen[bytes], httpx: Any) -> int:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if state_file.exists():
            try:
                state = json.loads(state_file.read_text())
                headers = {"Authorization": f"Bearer {state['token']}"}
                status: int = httpx.get(f"{state['api_url']}/api/runs/bench", headers=headers, timeout=30).status_code
                return status
            except (ValueError, KeyError, httpx.HTTPError):
                pass
        time.sleep(0.02)
    raise RuntimeError("baton dev did not answer within 120 s")


def bench_stack_start() -> None:
    """`LocalStack.start()` in this process, and the state machines' creation that follows it."""
    from baton.local.stack import LocalStack

    with tempfile.TemporaryDirectory() as state_dir:
        stack = LocalStack(api_port=0, state_dir=Path(state_dir), data="off")
        try:
            info = stack.start()
            workflows = stack.wait_for_workflows()
        finally:
            stack.stop()
    print(
        f"local-stack start() in this process   {info.startup_seconds:6.2f} s"
        f"   (state machines created after it, in {workflows:.2f} s)"
    )
    SUMMARY.add("local-stack start() in process", f"{info.startup_seconds:.2f} s", f"then machines {workflows:.2f} s")


def _script_json(argv: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a bench script, echo what it prints, and return the JSON object it prints last."""
    done = subprocess.run(
        [sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, env={**os.environ, **(env or {})}, check=True
    )
    start = done.stdout.rindex("\n{") + 1 if "\n{" in done.stdout else done.stdout.index("{")
    if done.stdout[:start].strip():
        print(done.stdout[:start].rstrip())
    figures: dict[str, Any] = json.loads(done.stdout[start:])
    return figures


def bench_critical(samples: int) -> None:
    """bench/parts/critical_path.py in its own process (its own stack), its table, then the summary rows."""
    sys.path.insert(0, str(PARTS))
    import critical_path

    figures = _script_json([str(PARTS / "critical_path.py"), "--samples", str(samples), "--json"])
    if path := os.environ.get("BATON_BENCH_CRITICAL_JSON"):  # tests/e2e/test_bench_quick.py checks them
        Path(path).write_text(json.dumps(figures))
    critical_path._print(figures)
    ms, cpu = figures["ms"], figures["cpu_ms"]
    for workflow, (bare_name, floor_name, name) in figures["workflows"].items():
        figure, floor, bare, ratios = ms[name], ms[floor_name], ms[bare_name], figures["ratios"][name]
        anchor = f"{workflow}: one write {floor['median']:.1f} / {floor['p95']:.1f} ms, bare {bare['median']:.1f}"
        value = f"{figure['median']:.1f} / {figure['p95']:.1f} ms (n={samples})"
        p95 = f" (p95 {ratios['p95_x_one_write']:.2f}x)"
        SUMMARY.add(f"{name} -> SUCCEEDED, median / p95", value, anchor, ratios["x_one_write"], p95)
        mine, floor_cpu = cpu[name], cpu[floor_name]
        SUMMARY.add(
            f"  {name}: process CPU to SUCCEEDED",
            f"{mine['to_succeeded']:.1f} ms",
            f"one write {floor_cpu['to_succeeded']:.1f} ms",
            ratios["cpu_x_one_write"],
        )
        SUMMARY.add(
            f"  {name}: request thread CPU, in AWS calls",
            f"{mine['request']:.1f} ms, {mine['aws_calls']:.1f} in calls",
            f"one write {floor_cpu['request']:.1f} ms, {floor_cpu['aws_calls']:.1f} in calls",
            mine["request"] / floor_cpu["request"],
        )
        calls = figures["calls"][name]
        SUMMARY.add(f"AWS calls, {name}", f"{calls['total']} ({calls['before_send']} before the send)")


def bench_load(questions: int, runs: int, clients: int, history: int) -> None:
    argv = [str(PARTS / "load.py"), "--questions", str(questions), "--runs", str(runs)]
    argv += ["--clients", str(clients), "--history", str(history)]
    figures = _script_json(argv, env={"BATON_BENCH_JSON": "1"})
    SUMMARY.add(
        f"answers/s, {clients} clients, {questions} pending, {history}x history",
        f"{figures['answers_per_s']:.1f}/s",
        f"peak RSS {figures['peak_rss_mb']:.0f} MB",
    )
    # the stack's CPU per answer bounds what an idle machine reaches (one process: 1000 / ms answers/s)
    SUMMARY.add(
        f"  stack CPU per answer, p50 / p95, Ctrl-C ({history}x history)",
        f"{figures['cpu_ms_per_answer']:.1f} ms",
        f"{figures['p50_ms']:.0f} / {figures['p95_ms']:.0f} ms, Ctrl-C {figures['stop_s']:.1f} s, "
        f"load {figures['load_average']:.1f}",
    )


def bench_cost_model(samples: int, *, quick: bool = False) -> None:
    """bench/parts/cost_model.py in its own process (its own stack): its table, then one row per pause kind
    (`quick`: all but the review's, a minute of builds)."""
    sys.path.insert(0, str(PARTS))
    import cost_model

    quick_flag = ["--quick"] if quick else []
    figures = _script_json([str(PARTS / "cost_model.py"), "--samples", str(samples), "--json", *quick_flag])
    LIVES.update(figures)  # the scaling section checks its recorded profile against these lives
    cost_model.print_table(figures)
    for kind in figures["kinds"]:
        SUMMARY.add(
            f"USD of {figures['lives']:,} lives, {kind['kind']}",
            f"{kind['usd']['total']:.4f}",
            f"{kind['calls']} AWS calls (floor {kind['lower_bound_calls']}), {kind['write_units']} WRU,"
            f" {kind['state_transitions']} transitions",
        )


LIVES: dict[str, Any] = {}  # the cost model's figures, once its section ran
DRIFTED: list[str] = []  # what the scaling section found drifted: the bench fails at its end


def bench_scaling() -> None:
    """bench/parts/scaling_sim.py in this process (pure arithmetic, milliseconds): its table, one summary row
    per scenario as it is today, and its recorded call profile against the cost model's lives of this run."""
    sys.path.insert(0, str(PARTS))
    import scaling_sim

    rows = scaling_sim.simulate(scaling_sim.PROFILE, scaling_sim.load_quotas())
    scaling_sim.print_table(rows)
    for row in rows:
        if row["mitigation"] == "today":
            SUMMARY.add(
                f"scaling: {row['load']}",
                f"first limit at {row['first_limit_answers_per_s']:,} answers/s",
                f"{row['first_limit']}; hard: {row['first_hard_limit']} at {row['first_hard_limit_answers_per_s']:,}",
            )
    if LIVES:
        drifted = scaling_sim.drift_from_lives(scaling_sim.PROFILE, LIVES["kinds"])
        DRIFTED.extend(drifted)
        SUMMARY.add("scaling profile vs this run's lives", "DRIFTED: " + "; ".join(drifted) if drifted else "matches")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small n for CI (one sample per import, no callgrind)")
    parser.add_argument("--samples", type=int, default=5, help="fresh interpreters per import figure (default 5)")
    parser.add_argument("--critical-samples", type=int, default=50, help="critical-path samples (default 50)")
    parser.add_argument("--no-callgrind", action="store_true", help="skip the instruction counts")
    parser.add_argument("--only", help="comma-separated section names (default: every section)")
    args = parser.parse_args()
    samples = 1 if args.quick else args.samples
    callgrind = not (args.quick or args.no_callgrind)
    load, began = os.getloadavg()[0], time.perf_counter()
    print(f"load average at start: {load:.2f} on {os.cpu_count()} CPUs")
    pending, runs, history = (24, 3, 2) if args.quick else (1000, 100, 10)
    sections: list[tuple[str, Callable[[], None]]] = [
        ("cold imports", lambda: bench_cold_imports(samples, callgrind)),
        ("CLI", lambda: bench_cli(samples if args.quick else max(samples, 5), callgrind)),
        ("HTTP adapter", lambda: bench_http_adapter(20 if args.quick else 100)),
        ("baton dev", bench_baton_dev),
        *([] if args.quick else [("stack start", bench_stack_start)]),
        ("critical path", lambda: bench_critical(3 if args.quick else args.critical_samples)),
        ("load", lambda: bench_load(pending, runs, 8, 0)),
        ("load with history", lambda: bench_load(pending, runs, 8, history)),
        # three lives a kind even when quick: one life under a loaded CI can retry a transaction (its median cannot)
        ("cost model", lambda: bench_cost_model(3, quick=args.quick)),
        ("scaling", bench_scaling),
    ]
    if args.only:
        wanted = {name.strip() for name in args.only.split(",")}
        unknown = wanted - {name for name, _ in sections}
        if unknown:
            parser.error(f"--only: no such section {sorted(unknown)}; the sections: {[n for n, _ in sections]}")
        sections = [(name, section) for name, section in sections if name in wanted]
    took = []
    for name, section in sections:
        started = time.perf_counter()
        section()
        took.append(f"{name} {time.perf_counter() - started:.0f} s")
    mode = "quick (CI: small n)" if args.quick else "full"
    SUMMARY.print(f"summary, {mode}, one run; load average {load:.2f} at start, {os.getloadavg()[0]:.2f} at end")
    print(f"  bench took {time.perf_counter() - began:.0f} s: " + ", ".join(took))
    if DRIFTED:  # bench/parts/scaling_sim.py's PROFILE no longer describes Baton's lives
        sys.exit(
            "scaling profile drifted (re-record: uv run python bench/parts/scaling_sim.py --record): "
            + "; ".join(DRIFTED)
        )


if __name__ == "__main__":
    main()
