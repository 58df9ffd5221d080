"""Where the CPU of one resume and one last answer goes, on one local stack (moto as AWS, Baton's
handlers in-process), as `scripts/bench_critical_path.py` measures them.

Parks `--samples` plain pauses (human_pause) and as many await gates with one question (await_answers),
then resumes each pause and answers each gate's question over HTTP. Only the API handler's thread is
profiled, and only inside `stack.dispatcher.invoke("api")` for those requests (cProfile profiles the
thread that enables it): so the figures are the request's own CPU, the emulator's work for its AWS calls
included (moto runs in that thread), the Step Functions engine's (other threads) not.

For each operation it prints:
- the request thread's CPU per request (median) and how much of it is spent inside botocore calls,
  split into the emulator's side (`BaseClient._make_request`, what runs between the `before-call` and
  `after-call` hooks: the request sent, moto's work on it, the response parsed) and botocore's own
  around it (`_make_api_call` minus that: serialisation, endpoint resolution, hooks); and the rest,
  split into Baton's services (what the route hands them: the snapshot read, the resume, the answer)
  and what runs outside them (Powertools' resolver, routing, the request and response models, the
  logger's context);
- each request's AWS calls in order, counted by sequence (a retried transaction shows as a longer one);
- the top functions by own time and by cumulative time (cProfile, totals over the samples).

Timings under a profiler run slower than without it, and cProfile charges each Python call its own cost
(it reads the thread's CPU clock at every call and return), so code made of many small calls (botocore's
parameter validation, moto's expression walks) looks several times dearer than it is: read the profile
for where to look, and the `--split-only` figures (or an A/B alternating per request in one process) for
what a change saves. `scripts/bench_critical_path.py` gives the figures against the floors.

With `--split-only` no profiler runs: the CPU split alone, at the request's real speed.

Usage: uv run python scripts/profile_answer_path.py [--samples 50] [--top 25] [--only resume|answer]
       [--split-only] [--dump DIR]  (writes each operation's pstats file there, for snakeviz or pstats)
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

_profiled = threading.local()
_MERGED = ("complete", "off")  # a parked wait's carry once its re-check is done


@dataclass
class _Operation:
    """What one operation's profiled requests cost, request by request."""

    # The thread's CPU clock, not cProfile's default wall clock: a call that releases the GIL (os.urandom,
    # a lock) would otherwise be charged with the time other threads held it.
    profile: cProfile.Profile = field(default_factory=lambda: cProfile.Profile(time.thread_time))
    request_cpu: list[float] = field(default_factory=list)  # thread CPU seconds inside invoke("api")
    emulator_cpu: list[float] = field(default_factory=list)  # _make_request, summed per request
    botocore_cpu: list[float] = field(default_factory=list)  # _make_api_call, summed per request
    service_cpu: list[float] = field(default_factory=list)  # inside the route's service calls, botocore's included
    calls: list[int] = field(default_factory=list)
    sequences: Counter[tuple[str, ...]] = field(default_factory=Counter)  # each request's AWS calls, in order


class _Recorder:
    """Profiles the API handler's thread while `current` names an operation."""

    def __init__(self, *, profiling: bool) -> None:
        self.profiling = profiling
        self.current: _Operation | None = None
        self._emulator = 0.0
        self._botocore = 0.0
        self._service = 0.0
        self._service_depth = 0
        self._calls = 0
        self._sequence: list[str] = []

    def wrap_botocore(self) -> None:
        """Every client's calls, timed in the thread that makes them: `_make_api_call` is the whole call,
        `_make_request` the part between botocore's before-call and after-call hooks (the request sent,
        the emulator's work on it, the response parsed)."""
        from botocore.client import BaseClient

        make_api_call, make_request = BaseClient._make_api_call, BaseClient._make_request
        recorder = self

        def _make_api_call(client: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
            if not getattr(_profiled, "on", False):
                return make_api_call(client, operation_name, api_params)
            recorder._sequence.append(f"{client.meta.service_model.service_name}.{operation_name}")
            started = time.thread_time()
            try:
                return make_api_call(client, operation_name, api_params)
            finally:
                recorder._botocore += time.thread_time() - started
                recorder._calls += 1

        def _make_request(client: Any, *args: Any, **kwargs: Any) -> Any:
            if not getattr(_profiled, "on", False):
                return make_request(client, *args, **kwargs)
            started = time.thread_time()
            try:
                return make_request(client, *args, **kwargs)
            finally:
                recorder._emulator += time.thread_time() - started

        BaseClient._make_api_call = _make_api_call  # type: ignore[method-assign]
        BaseClient._make_request = _make_request  # type: ignore[method-assign]

    def wrap_services(self) -> None:
        """What the routes hand to Baton's services (the snapshot read, the resume, the answer), timed as
        one: the request's CPU outside them is Powertools' resolver, routing, the request and response
        models and the logger's context."""
        from baton.adapters.dynamo import DynamoStore
        from baton.services.questions import QuestionService
        from baton.services.runs import RunService

        recorder = self
        for owner, name in ((DynamoStore, "snapshot_run"), (RunService, "resume"), (QuestionService, "answer")):
            method = getattr(owner, name)

            def timed(*args: Any, _method: Any = method, **kwargs: Any) -> Any:
                if not getattr(_profiled, "on", False) or recorder._service_depth:
                    return _method(*args, **kwargs)
                recorder._service_depth += 1
                started = time.thread_time()
                try:
                    return _method(*args, **kwargs)
                finally:
                    recorder._service += time.thread_time() - started
                    recorder._service_depth -= 1

            setattr(owner, name, timed)

    def wrap_invoke(self, stack: Any) -> None:
        original = stack.dispatcher.invoke
        recorder = self

        def invoke(function_name: str, event: Any) -> Any:
            operation = recorder.current
            if function_name != "api" or operation is None:
                return original(function_name, event)
            recorder._emulator = recorder._botocore = recorder._service = 0.0
            recorder._calls = 0
            recorder._sequence = []
            _profiled.on = True
            started = time.thread_time()
            if recorder.profiling:
                operation.profile.enable()
            try:
                return original(function_name, event)
            finally:
                if recorder.profiling:
                    operation.profile.disable()
                operation.request_cpu.append(time.thread_time() - started)
                _profiled.on = False
                operation.emulator_cpu.append(recorder._emulator)
                operation.botocore_cpu.append(recorder._botocore)
                operation.service_cpu.append(recorder._service)
                operation.calls.append(recorder._calls)
                operation.sequences[tuple(recorder._sequence)] += 1

        stack.dispatcher.invoke = invoke


def _await_all(items: list[Any], done: Callable[[Any], bool], what: str, timeout: float = 120) -> None:
    """Poll until `done` holds for every item (each checked again only while it does not)."""
    deadline = time.monotonic() + timeout
    waiting = list(items)
    while waiting := [item for item in waiting if not done(item)]:
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {len(waiting)} {what}")
        time.sleep(0.01)


def _report(name: str, operation: _Operation, top: int, dump: Path | None) -> None:
    ms = 1000.0
    request = statistics.median(operation.request_cpu) * ms
    emulator = statistics.median(operation.emulator_cpu) * ms
    botocore = statistics.median(operation.botocore_cpu) * ms
    services = statistics.median(s - b for s, b in zip(operation.service_cpu, operation.botocore_cpu, strict=True)) * ms
    outside = statistics.median(r - s for r, s in zip(operation.request_cpu, operation.service_cpu, strict=True)) * ms
    print(f"== {name}: {len(operation.request_cpu)} requests, {statistics.median(operation.calls):.0f} AWS calls each")
    profiled = "profiled" if operation.profile.getstats() else "not profiled"
    print(
        f"  request thread CPU (median, {profiled}) {request:6.1f} ms: inside botocore calls {botocore:5.1f} ms "
        f"(emulator side, _make_request {emulator:5.1f} ms; botocore around it "
        f"{botocore - emulator:5.1f} ms), the rest {request - botocore:5.1f} ms"
    )
    print(
        f"  the rest: Baton's services without their botocore calls {services:5.1f} ms; outside the services "
        f"(Powertools' resolver, routing, models, logger) {outside:5.1f} ms"
    )
    for sequence, count in operation.sequences.most_common():
        print(f"  {count:3d} x {len(sequence)} calls: {', '.join(sequence)}")
    if not operation.profile.getstats():
        return
    for sort, title in (("tottime", "own time"), ("cumulative", "cumulative time")):
        out = io.StringIO()
        stats = pstats.Stats(operation.profile, stream=out)
        stats.sort_stats(sort).print_stats(top)
        print(f"  -- top {top} by {title} (totals over the requests)")
        lines = out.getvalue().splitlines()
        start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
        for line in lines[start:]:
            if line.strip():
                print("  " + line)
    if dump is not None:
        dump.mkdir(parents=True, exist_ok=True)
        operation.profile.dump_stats(str(dump / f"{name.replace(' ', '_')}.pstats"))


def _parked_pauses(client: Any, count: int, stamp: int) -> list[str]:
    """`count` plain pauses started and parked (the resume's runs)."""
    pauses = []
    for n in range(count):
        run_id = f"profile-pause-{n}-{stamp}"
        client.start_run("human_pause", {"prompt": "profile?", "timeout_seconds": 600}, run_id=run_id)
        pauses.append(run_id)
    _await_all(pauses, lambda run_id: client.get_run(run_id).status == "paused_waiting_human", "pauses")
    return pauses


def _parked_gates(client: Any, store: Any, count: int, stamp: int) -> list[tuple[str, str]]:
    """`count` await gates with one question each, parked and done merging their carried answers
    (baton/services/gate_answers.py), as a person finds them: (run id, the question's id)."""
    runs = []
    for n in range(count):
        run_id = f"profile-gate-{n}-{stamp}"
        payload = {"node": "draft", "from": "draft", "timeout_seconds": 600, "questions": [{"question": "Q?"}]}
        client.start_run("await_answers", payload, run_id=run_id)
        runs.append(run_id)
    _await_all(runs, lambda run_id: bool(client.pending_questions(run_id)), "questions")
    _await_all(runs, lambda run_id: getattr(store.get_wait(run_id, "await"), "carry", None) in _MERGED, "parks")
    return [(run_id, client.pending_questions(run_id)[0].interaction_id) for run_id in runs]


def _run(args: argparse.Namespace, recorder: _Recorder, operations: dict[str, _Operation]) -> None:
    from baton.client.sdk import Client
    from baton.local.stack import LocalStack
    from baton.runtime.wiring import services

    stack = LocalStack(api_port=0, state_dir=Path(tempfile.mkdtemp(prefix="baton-profile-")), data="off")
    info = stack.start()
    recorder.wrap_invoke(stack)
    client = Client(info.api_url, info.token, timeout=60)
    try:
        stamp = int(time.time() * 1000)
        count = args.samples + 1  # one more of each, untimed: a route's first request loads its module
        pauses = _parked_pauses(client, count, stamp) if args.only in (None, "resume") else []
        gates = _parked_gates(client, services().core.store, count, stamp) if args.only in (None, "answer") else []
        for profiled in (False, True):
            recorder.current = operations["resume"] if profiled else None
            for run_id in pauses[1:] if profiled else pauses[:1]:
                assert client.resume(run_id, {"ok": True}).resumed
            recorder.current = operations["last answer"] if profiled else None
            for run_id, interaction_id in gates[1:] if profiled else gates[:1]:
                assert client.answer(run_id, interaction_id, "A").resumed
        recorder.current = None
    finally:
        client.close()
        stack.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--only", choices=["resume", "answer"], default=None)
    parser.add_argument("--split-only", action="store_true", help="no cProfile: the CPU split alone, unslowed")
    parser.add_argument("--dump", type=Path, default=None, help="directory for the pstats files")
    args = parser.parse_args()

    recorder = _Recorder(profiling=not args.split_only)
    recorder.wrap_botocore()
    recorder.wrap_services()
    operations = {"resume": _Operation(), "last answer": _Operation()}
    _run(args, recorder, operations)
    for name, operation in operations.items():
        if operation.request_cpu:
            _report(name, operation, args.top, args.dump)


if __name__ == "__main__":
    main()
