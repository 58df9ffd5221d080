"""`baton dev` holds open pauses without a thread each (issue 33): its executions, deadline timers and
requests are greenlets on one OS thread (baton/local/cooperative.py). moto gives each execution a thread
that waits for its task token, so without it every parked gate below held a thread, and its deadline
timer another."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import start_local_stack, stop_local_stack, wait_for

PARKED = 40


def _os_threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError(f"no Threads line for process {pid}")


def test_parked_gates_and_their_timers_hold_no_thread(tmp_path: Path) -> None:
    stack = start_local_stack(tmp_path / "dev")
    try:
        pid = stack.process.pid
        with stack.client() as client:
            idle = _os_threads(pid)
            runs = [f"coop-{n}" for n in range(PARKED)]
            for run_id in runs:
                client.start_run("human_pause", {"prompt": "go?", "timeout_seconds": 3600}, run_id=run_id)
            wait_for(lambda: all(client.get_run(r)["status"] == "paused_waiting_human" for r in runs), timeout=60)
            parked = _os_threads(pid)
            assert parked <= idle + 2, f"{PARKED} parked gates took {parked - idle} OS threads"

            for run_id in runs:
                assert client.resume(run_id, {"ok": True})["resumed"] is True
            wait_for(lambda: all(client.get_run(r)["status"] == "succeeded" for r in runs), timeout=60)
            assert _os_threads(pid) <= idle + 2
    finally:
        assert stop_local_stack(stack) == 0
