"""Baton's start-up benchmark: prints figures measured side by side in one run, asserts nothing about speed.

  cold import per function   a fresh interpreter imports functions/<name>/handler.py (with tracing off,
                             as a Lambda sandbox with POWERTOOLS_TRACE_DISABLED), against its libraries'
                             floor: the API against Powertools' resolver with validation + pydantic, a
                             gate/payload function against Powertools' Logger + parser, a notify function
                             against Logger + pydantic. With bytecode (what the bootstrap compiles) and,
                             for the API, without (a pycache prefix with nothing in it: no .pyc is read)
  instructions (callgrind)   the same imports counted by `valgrind --tool=callgrind` (reproducible where
                             wall time is not; the interpreter's own start is subtracted); full mode only
  CLI start                  `baton --help` against a bare two-command Typer app (wall and CPU)
  HTTP adapter               one small response over a kept-alive connection, with TCP_NODELAY (as the
                             adapter runs) and without it (the Nagle / delayed-ACK stall)
  baton dev                  `baton dev --no-demo` spawned until its API answers a request
  pause→resume round trip    resume request sent → execution SUCCEEDED (median, p95 over N runs)

Usage: uv run python scripts/bench.py [--quick] [--runs 50] [--samples 5] [--no-callgrind]
       --quick (CI): one sample of each, 5 round trips, no callgrind
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FUNCTIONS = ROOT / "functions"

# What each kind of function cannot import less than: the libraries its handler is built on.
FLOORS = {
    "api": (
        "import pydantic\n"
        "from aws_lambda_powertools import Logger\n"
        "from aws_lambda_powertools.event_handler import APIGatewayRestResolver\n"
        "APIGatewayRestResolver(enable_validation=True)\n"
    ),
    "gate": (
        "import pydantic\nfrom aws_lambda_powertools import Logger\n"
        "from aws_lambda_powertools.utilities.parser import parse\n"
    ),
    "notify": "import pydantic\nfrom aws_lambda_powertools import Logger\n",
}
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


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def floor_of(function: str) -> str:
    if function == "api":
        return "api"
    return "notify" if function.startswith("notify_") else "gate"


def import_code(function: str) -> str:
    return (
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('handler', {str(FUNCTIONS / function / 'handler.py')!r})\n"
        "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
    )


def timed(code: str, *, bytecode: bool = True) -> tuple[float, float]:
    """(wall, CPU) seconds a fresh interpreter spends running `code` (its own start excluded). CPU time
    is what the ratios use: on a loaded machine the wall time mostly measures the other processes."""
    wrapped = (
        "import time\nt, c = time.perf_counter(), time.process_time()\n"
        f"exec(compile({code!r}, 'bench', 'exec'))\n"
        "print(time.perf_counter() - t, time.process_time() - c)\n"
    )
    with tempfile.TemporaryDirectory() as empty:
        flags = [] if bytecode else ["-X", f"pycache_prefix={empty}"]
        result = subprocess.run(
            [sys.executable, *flags, "-c", wrapped],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, **LAMBDA_ENV},
            check=True,
        )
    wall, cpu = result.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def median_ms(code: str, samples: int, *, bytecode: bool = True) -> tuple[float, float]:
    """Median (wall, CPU) milliseconds over `samples` fresh interpreters."""
    measured = [timed(code, bytecode=bytecode) for _ in range(samples)]
    return statistics.median(w for w, _ in measured) * 1000, statistics.median(c for _, c in measured) * 1000


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


def bench_cold_imports(samples: int, callgrind: bool) -> None:
    names = sorted(p.parent.name for p in FUNCTIONS.glob("*/handler.py"))
    floors = {kind: median_ms(code, samples) for kind, code in FLOORS.items()}
    print(f"cold import, median of {samples} fresh interpreters, bytecode compiled, tracing off (ms)")
    for kind, (wall, cpu) in floors.items():
        print(f"  floor {kind:<18} {wall:7.1f} wall {cpu:7.1f} CPU")
    cpu_of: dict[str, float] = {}
    for name in names:
        wall, cpu = median_ms(import_code(name), samples)
        cpu_of[name] = cpu
        kind = floor_of(name)
        print(f"  {name:<24} {wall:7.1f} wall {cpu:7.1f} CPU   {cpu / floors[kind][1]:4.2f}x its floor ({kind}, CPU)")
    _, no_pyc = median_ms(import_code("api"), samples, bytecode=False)
    _, no_pyc_floor = median_ms(FLOORS["api"], samples, bytecode=False)
    print(
        f"  api without bytecode     {no_pyc:7.1f} CPU   ({no_pyc / cpu_of['api']:.1f}x the api with bytecode;"
        f" its floor without bytecode {no_pyc_floor:.1f} CPU)"
    )
    if not callgrind:
        return
    if shutil.which("valgrind") is None:
        print("  instructions: valgrind not installed")
        return
    base = instructions("pass") or 0
    print("cold import, instructions (callgrind, the interpreter's own start subtracted)")
    counted = {"floor api": FLOORS["api"], "floor gate": FLOORS["gate"], "api": import_code("api")}
    counted["park"] = import_code("park")
    figures = {label: (instructions(code) or 0) - base for label, code in counted.items()}
    for label, count in figures.items():
        kind = "api" if label == "api" else "gate"
        ratio = "" if label.startswith("floor") else f"   {count / figures[f'floor {kind}']:4.2f}x floor {kind}"
        print(f"  {label:<24} {count / 1e6:9.1f} M{ratio}")


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
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        print(f"baton dev until its API answers   {elapsed:6.2f} s   (HTTP {answered})")


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


def bench_round_trips(runs: int) -> None:
    import boto3

    from baton.client.sdk import Client
    from baton.local.stack import LocalStack

    with tempfile.TemporaryDirectory() as state_dir:
        stack = LocalStack(api_port=0, state_dir=Path(state_dir), data="off")
        info = stack.start()
        print(f"local-stack start() in this process   {info.startup_seconds:6.2f} s", end="")
        wait_for_workflows = getattr(stack, "wait_for_workflows", None)  # absent before they were deferred
        print(f"   (state machines created after it, in {wait_for_workflows():.2f} s)" if wait_for_workflows else "")
        try:
            sfn = boto3.client("stepfunctions")
            client = Client(info.api_url, info.token)
            round_trips: list[float] = []
            for n in range(runs):
                run_id = f"bench-{n}-{int(time.time())}"
                run = client.start_run(
                    "human_pause", {"prompt": "bench", "timeout_seconds": 120, "notify": ["email"]}, run_id=run_id
                )
                while client.get_run(run_id).status != "paused_waiting_human":
                    time.sleep(0.005)
                started = time.perf_counter()
                client.resume(run_id, {"ok": True})
                while sfn.describe_execution(executionArn=str(run.execution_arn))["status"] != "SUCCEEDED":
                    time.sleep(0.002)
                round_trips.append(time.perf_counter() - started)
            print(
                f"pause→resume round trip      median {statistics.median(round_trips) * 1000:7.1f} ms   "
                f"p95 {percentile(round_trips, 95) * 1000:7.1f} ms   (n={len(round_trips)}, resume request → SUCCEEDED)"
            )
        finally:
            stack.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one sample of each, 5 round trips, no callgrind (CI)")
    parser.add_argument("--runs", type=int, default=50, help="pause→resume round trips to measure (default 50)")
    parser.add_argument("--samples", type=int, default=5, help="fresh interpreters per import figure (default 5)")
    parser.add_argument("--no-callgrind", action="store_true", help="skip the instruction counts")
    args = parser.parse_args()
    samples = 1 if args.quick else args.samples
    callgrind = not (args.quick or args.no_callgrind)
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    bench_cold_imports(samples, callgrind)
    bench_cli(samples if args.quick else max(samples, 5), callgrind)
    bench_http_adapter(20 if args.quick else 100)
    bench_baton_dev()
    bench_round_trips(5 if args.quick else args.runs)


if __name__ == "__main__":
    main()
