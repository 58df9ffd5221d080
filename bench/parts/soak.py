"""Does the local stack's memory stay flat? A soak: `baton dev` in its own process (as `load.py` starts it),
then rounds of requests that keep `--open` pauses open while others are answered, up to `--requests`.

Three kinds of open pause, a third each, every one with a long deadline (nothing times out during the soak):
  await       an async question on its own run, then the await tool (`POST /api/runs/{id}/await`): a
              pending `await` interaction and its deadline timer (a Step Functions Wait in moto)
  interrupt   `POST /api/v1/interrupts`: an SDK interrupt (a stored pause: no execution, no timer)
  gate        a `human_pause` run (`POST /api/runs`): its execution parked on the gate's task token and
              the gate's deadline timer
Once `--open` are open, each round answers the oldest (the question; the interrupt's or the gate's resume) and opens as
many new ones, so the open count holds while the finished ones pile up behind it.

Every round prints: requests done, open pauses, the stack's RSS (VmRSS; peak VmHWM at the end), its thread
count, its journal's bytes on disk and the requests/s of the round. Memory that grows with the finished
pauses (not the open ones) shows as RSS rising while the open count holds.
Target (issue 33): 100,000 requests and 10,000 open pauses in < 1.5 GB, threads not one per pause.
Not part of `make test` or `make bench` (minutes at the defaults; the real run is far longer).

Usage: uv run python bench/parts/soak.py [--requests 4000] [--open 400] [--round 500] [--clients 4]
       uv run python bench/parts/soak.py --requests 100000 --open 10000     # the real run (hours here)
"""

from __future__ import annotations

import argparse
import collections
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import _rss_mb, _start_stack

DAY_SECONDS = 86_400
Pause = tuple[str, str, str]  # (kind, run or session id, interaction or interrupt id)


def _threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return -1


def _open_one(client: Any, n: int) -> tuple[Pause, int]:
    """One new open pause (await, interrupt, gate in turn) and the requests it took."""
    if n % 3 == 1:
        interrupt = client.create_interrupt(session_id=f"soak-i-{n}", prompt=f"go {n}?", timeout_ms=DAY_SECONDS * 1000)
        return ("interrupt", f"soak-i-{n}", interrupt.interrupt_id), 1
    if n % 3 == 2:
        run_id = f"soak-g-{n}"
        client.start_run("human_pause", {"prompt": f"go {n}?", "timeout_seconds": DAY_SECONDS}, run_id=run_id)
        return ("gate", run_id, ""), 1
    run_id = f"soak-a-{n}"
    asked = client.ask_async(run_id, "draft", f"question {n}?")
    client.await_once(run_id, timeout=DAY_SECONDS)
    return ("await", run_id, asked.interaction_id), 2


def _close_one(client: Any, pause: Pause) -> int:
    kind, owner, pause_id = pause
    if kind == "interrupt":
        client.resume_interrupt(pause_id, {"ok": True})
    elif kind == "gate":
        client.resume(owner, {"ok": True})
    else:
        client.answer(owner, pause_id, "yes")
    return 1


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000, help="requests in all")
    parser.add_argument("--open", type=int, default=400, help="open pauses held once reached")
    parser.add_argument("--round", type=int, default=500, help="requests per printed round")
    parser.add_argument("--clients", type=int, default=4)
    return parser.parse_args()


def _round(
    client: Any, open_pauses: collections.deque[Pause], *, clients: int, target: int, budget: int, n: int
) -> tuple[int, int]:
    """About `budget` requests: open pauses up to `target`, then close the oldest and open as many new ones.
    Returns (requests made, the next pause number)."""
    closing = []
    opening = max(0, target - len(open_pauses))
    if opening * 2 < budget:  # at the target: churn (close one, open one: ~2.5 requests a pair)
        pairs = min(len(open_pauses), max(1, (budget - opening * 2) * 2 // 5))
        closing = [open_pauses.popleft() for _ in range(pairs)]
        opening += pairs
    else:
        opening = max(1, budget // 2)
    numbers = range(n, n + opening)
    with ThreadPoolExecutor(clients) as pool:
        made = sum(pool.map(lambda p: _close_one(client, p), closing))
        for pause, cost in pool.map(lambda k: _open_one(client, k), numbers):
            open_pauses.append(pause)
            made += cost
    return made, n + opening


def main() -> None:
    args = _arguments()

    from baton.client.sdk import Client

    with tempfile.TemporaryDirectory(prefix="baton-bench-soak-") as tmp:
        process, state = _start_stack(Path(tmp), {})
        pid = process.pid
        started = time.monotonic()
        print(f"soak: {args.requests} requests, {args.open} open pauses held, {args.clients} clients")
        print("  elapsed  requests   open   RSS MB  threads  journal KB   req/s")
        try:
            with Client(state["api_url"], state["token"], timeout=120) as client:
                open_pauses: collections.deque[Pause] = collections.deque()
                done, n = 0, 0
                print(f"  {0:6.0f}s  {0:8d} {0:6d} {_rss_mb(pid, 'VmRSS'):8.0f} {_threads(pid):8d}")
                while done < args.requests:
                    round_started = time.monotonic()
                    made, n = _round(
                        client,
                        open_pauses,
                        clients=args.clients,
                        target=args.open,
                        budget=min(args.round, args.requests - done),
                        n=n,
                    )
                    done += made
                    rate = made / (time.monotonic() - round_started)
                    journal_kb = sum(p.stat().st_size for p in Path(tmp).glob("*journal*")) / 1024
                    print(
                        f"  {time.monotonic() - started:6.0f}s  {done:8d} {len(open_pauses):6d} "
                        f"{_rss_mb(pid, 'VmRSS'):8.0f} {_threads(pid):8d} {journal_kb:11.0f} {rate:7.1f}",
                        flush=True,
                    )
                print(f"  peak RSS {_rss_mb(pid, 'VmHWM'):.0f} MB (target < 1536 at 100,000 requests, 10,000 open)")
        except Exception:
            log = (Path(tmp) / "dev.log").read_text(errors="replace").splitlines()
            print("soak failed; the stack's last log lines:", *log[-40:], sep="\n  ", file=sys.stderr)
            raise
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()


if __name__ == "__main__":
    main()
