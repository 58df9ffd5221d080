"""The local stack under load: N pending questions over R runs, answered by C concurrent clients.

Starts `baton dev` in its own process (as a developer runs it: data kept in a throwaway state dir),
posts the questions (external runs, `POST /api/runs/{id}/questions`), then C threads answer every one
of them. Prints answers/s, the answer latency (median, p95), the stack's peak RSS (VmHWM of its process)
and how long Ctrl-C took to end it while clients were still asking and answering.
With `--history H` the same runs first get H rounds of as many questions, asked and answered before
the measured round, so the measured answers meet H times their number in history (`--history 10`:
"at 10x history"; a flat figure means the answer's cost does not grow with the run's history).
`--quick` is a small run for CI (the figures are printed, never judged).
Targets (not asserted): >= 50 answers/s, peak RSS < 1 GB.

Usage: uv run python bench/parts/load.py [--questions 1000] [--runs 100] [--clients 8] [--history 0] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _start_stack(state_dir: Path, extra_env: dict[str, str]) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    log = (state_dir / "dev.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "baton.cli.main", "dev", "--port", "0", "--no-demo", "--state-dir", str(state_dir)],
        cwd=ROOT,
        env={**os.environ, **extra_env},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    state_file = state_dir / "local.json"
    deadline = time.monotonic() + 120
    while not state_file.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"baton dev did not start:\n{(state_dir / 'dev.log').read_text()}")
        time.sleep(0.1)
    return process, json.loads(state_file.read_text())


def _rss_mb(pid: int, field: str) -> float:
    """VmRSS (now) or VmHWM (peak) of a process, in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1))))]


def _ask_all(client: Any, runs: int, questions: int, clients: int) -> list[tuple[str, str]]:
    def ask(n: int) -> tuple[str, str]:
        run_id = f"load-{n % runs:03d}"
        return run_id, client.ask_async(run_id, "draft", f"question {n}?").interaction_id

    with ThreadPoolExecutor(clients) as pool:
        return list(pool.map(ask, range(questions)))


def _answer_all(client: Any, pending: list[tuple[str, str]], clients: int) -> tuple[float, list[float]]:
    latencies: list[float] = []
    lock = threading.Lock()

    def answer(item: tuple[str, str]) -> None:
        started = time.perf_counter()
        client.answer(item[0], item[1], "yes")
        took = time.perf_counter() - started
        with lock:
            latencies.append(took)

    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(answer, pending))
    return time.perf_counter() - started, latencies


def _keep_busy(client: Any, clients: int) -> None:
    """`clients` threads asking and answering until the stack goes away; returns once they are going."""
    stopped = threading.Event()

    def loop(n: int) -> None:
        k = 0
        while not stopped.is_set():
            try:
                run_id = f"busy-{n}"
                asked = client.ask_async(run_id, "draft", f"busy {k}?")
                client.answer(run_id, asked.interaction_id, "yes")
            except Exception:  # the stack is stopping: that is the point
                stopped.set()
            k += 1

    for n in range(clients):
        threading.Thread(target=loop, args=(n,), daemon=True).start()
    time.sleep(1.0)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--history", type=int, default=0, help="rounds asked and answered before the measured one")
    parser.add_argument("--quick", action="store_true", help="40 questions over 4 runs, 4 clients, 1 round of history")
    args = parser.parse_args()
    if args.quick:
        args.questions, args.runs, args.clients, args.history = 40, 4, 4, 1
    return args


def main() -> None:
    args = _arguments()

    from baton.client.sdk import Client

    with tempfile.TemporaryDirectory(prefix="baton-bench-load-") as tmp:
        process, state = _start_stack(Path(tmp), {})
        try:
            with Client(state["api_url"], state["token"], timeout=120) as client:
                for _round in range(args.history):  # history: answered rounds in the same runs, unmeasured
                    _answer_all(client, _ask_all(client, args.runs, args.questions, args.clients), args.clients)
                asked_at = time.perf_counter()
                pending = _ask_all(client, args.runs, args.questions, args.clients)
                ask_seconds = time.perf_counter() - asked_at
                rss_pending = _rss_mb(process.pid, "VmRSS")
                cpu_before, load_before = _cpu_seconds(process.pid), os.getloadavg()[0]
                seconds, latencies = _answer_all(client, pending, args.clients)
                stack_cpu, load_after = _cpu_seconds(process.pid) - cpu_before, os.getloadavg()[0]
                left = sum(len(client.pending_questions(f"load-{r:03d}")) for r in range(args.runs))
                peak = _rss_mb(process.pid, "VmHWM")
            _keep_busy(Client(state["api_url"], state["token"]), args.clients)  # Ctrl-C is measured under load
        finally:
            stop_started = time.perf_counter()
            process.send_signal(signal.SIGINT)
            try:
                code = process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                code = None
            stop_seconds = time.perf_counter() - stop_started
    count = len(latencies)
    print(
        f"local stack under load: {args.questions} pending questions over {args.runs} runs, {args.clients} clients, "
        f"history {args.history}x ({args.history * args.questions} answered before)"
    )
    print(f"  asked                  {ask_seconds:7.1f} s   ({args.questions / ask_seconds:6.1f} questions/s)")
    print(f"  answered               {seconds:7.1f} s   ({count / seconds:6.1f} answers/s, target >= 50)")
    print(
        f"  answer latency         median {statistics.median(latencies) * 1000:6.1f} ms   "
        f"p95 {_percentile(latencies, 95) * 1000:6.1f} ms"
    )
    # The stack is one Python process: its handlers share one core (the GIL), so the CPU an answer costs
    # it bounds the answers/s an idle machine can reach, whatever else the machine is doing meanwhile.
    cpu_ms = 1000 * stack_cpu / count
    print(
        f"  stack CPU per answer   {cpu_ms:7.1f} ms   (one core's ceiling {1000 / cpu_ms:6.1f} answers/s; "
        f"load average {load_before:.1f} -> {load_after:.1f} on {os.cpu_count()} cores)"
    )
    print(f"  still pending after    {left} (expected 0)")
    print(f"  stack RSS              {rss_pending:7.0f} MB with all pending, peak {peak:7.0f} MB (target < 1024)")
    exited = f"exit code {code}" if code is not None else "did not exit: killed"
    print(f"  Ctrl-C under load → exited {stop_seconds:5.2f} s   ({exited}; {args.clients} clients still asking)")
    if os.environ.get("BATON_BENCH_JSON"):
        figures = {"answers_per_s": count / seconds, "cpu_ms_per_answer": cpu_ms, "peak_rss_mb": peak}
        latency = {"p50_ms": statistics.median(latencies) * 1000, "p95_ms": _percentile(latencies, 95) * 1000}
        print(json.dumps({**figures, **latency, "stop_s": stop_seconds, "load_average": load_after}))


if __name__ == "__main__":
    main()
