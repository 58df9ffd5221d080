"""How fast a policy answers an allowed tool call (issue 31 item 5), on the embedded local stack (moto as
AWS, Baton's handlers in-process, the HTTP API on 127.0.0.1):

  hook      `baton hook claude-code` as Claude Code runs it: the whole process, from its start with the
            PreToolUse event on stdin to its exit with "allow" printed (Python's start and imports, the
            tool approval's request, its read, its consume): what Claude Code waits for; and the
            process's CPU (user + system), which depends far less on the machine's load
  API       `POST /api/runs/{run}/tool-approvals` answered at once (the response's status "answered")
  decide()  the engine alone: `Policy.decide` of the same call, in this process (no stack, no AWS call)

each with the policy (examples/policy/tools.cedar, `ls*` allowed by its rule `read-only`) and without one.
Without a policy the same call waits for a person, which times a person; the fastest path without a policy
is a remembered grant ("always allow Bash in this run", given once by a person) answering it at once, so
that is what the policy is put next to. Each of the two stacks runs in its own process (a handler's
services and the policy they read are per process), one after the other. Each sample is a new call
(`ls -la /tmp/<n>`: a repeat would find its approval). Median and p95; figures printed, never asserted
(the outcome of every call is: allow, by the rule or by the grant). Beside them, counts that do not
depend on the machine's load: the API requests one hook process makes, and the AWS calls the API's
handler makes for one hook call and for one API call.

Usage: uv run python bench/parts/policy_latency.py [--hooks 20] [--requests 50] [--decides 1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parents[2]
POLICY_FILE = ROOT / "examples" / "policy" / "tools.cedar"
RUN = "bench-policy"
Arm = Literal["policy", "grant"]
ARMS: dict[Arm, str] = {"policy": "policy allows", "grant": "no policy, a grant"}


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1))))]


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 3), "p95": round(_percentile(values, 95), 3), "n": len(values)}


def _call(n: int) -> dict[str, Any]:
    return {"tool": "Bash", "arguments": {"command": f"ls -la /tmp/{n}"}}


class ApiWork:
    """The API requests the stack served and the AWS calls their handlers made (botocore `before-call`
    on every client, counted only on a thread inside the API handler): counts, not timings."""

    def __init__(self) -> None:
        self.requests = 0
        self.aws_calls = 0
        self._serving = threading.local()

    def install(self) -> None:
        """Before the stack starts: every botocore client made from now on counts its calls."""
        import botocore.session

        original, work = botocore.session.Session.create_client, self

        def create_client(session: Any, *args: Any, **kwargs: Any) -> Any:
            client = original(session, *args, **kwargs)
            client.meta.events.register("before-call.*.*", work._called)
            return client

        botocore.session.Session.create_client = create_client  # type: ignore[method-assign,assignment]

    def _called(self, **_: Any) -> None:
        if getattr(self._serving, "api", False):
            self.aws_calls += 1

    def watch(self, stack: Any) -> None:
        original, work = stack.dispatcher.invoke, self

        def invoke(function_name: str, event: Any) -> Any:
            if function_name != "api":
                return original(function_name, event)
            work.requests += 1
            work._serving.api = True
            try:
                return original(function_name, event)
            finally:
                work._serving.api = False

        stack.dispatcher.invoke = invoke

    def mark(self) -> tuple[int, int]:
        return self.requests, self.aws_calls


def _hook(api_url: str, token: str, n: int) -> tuple[float, float]:
    """One `baton hook claude-code` process on a new allowed call: its wall time and its CPU (user +
    system, the figure to read on a loaded machine), in ms."""
    event = {
        "session_id": RUN,
        "cwd": "/home/dev/app",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": _call(n)["arguments"],
        "tool_use_id": f"toolu_bench_{n}",
    }
    env = {**os.environ, "BATON_API_URL": api_url, "BATON_TOKEN": token, "BATON_RUN": RUN}
    env.pop("BATON_HOOK_HEADLESS", None)
    argv = [sys.executable, "-m", "baton.cli.main", "hook", "claude-code", "--wait", "30"]
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, input=json.dumps(event), capture_output=True, text=True, check=False)
    took = (time.perf_counter() - started) * 1000
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime + cpu_after.ru_stime - cpu_before.ru_stime) * 1000
    decided = json.loads(done.stdout)["hookSpecificOutput"] if done.returncode == 0 else {}
    if decided.get("permissionDecision") != "allow":
        raise RuntimeError(f"the hook did not allow call {n}: {done.stdout}{done.stderr}")
    return took, cpu


def _arm(arm: Arm, hooks: int, requests: int) -> dict[str, Any]:
    """One stack, with the policy or without it (then a person's remembered grant): the samples."""
    import httpx

    from baton.api.auth import operator_token
    from baton.local.stack import LocalStack

    policy_env = {"BATON_POLICY_FILE": str(POLICY_FILE), "BATON_POLICY_MODE": "enforce"} if arm == "policy" else {}
    state_dir = Path(tempfile.mkdtemp(prefix=f"baton-bench-{arm}-"))
    work = ApiWork()
    work.install()
    stack = LocalStack(api_port=0, state_dir=state_dir, data="off", extra_env=policy_env)
    info = stack.start()
    work.watch(stack)
    path = f"/api/runs/{RUN}/tool-approvals"
    headers = {"Authorization": f"Bearer {info.token}"}
    try:
        with httpx.Client(base_url=info.api_url, headers=headers, timeout=30) as http:

            def request(n: int) -> dict[str, Any]:
                asked = http.post(path, json={"call": _call(n), "reason": "bench", "timeout_seconds": 600})
                view: dict[str, Any] = asked.json()
                if asked.status_code not in (200, 201):
                    raise RuntimeError(f"{asked.status_code}: {asked.text}")
                return view

            if arm == "grant":  # a person approves the first call and remembers Bash for the run
                first = request(-1)
                alice = {"Authorization": f"Bearer {operator_token(info.token, 'alice')}"}
                remember = {"scope": "run", "expires_in_seconds": 3600}
                answer = {"answer": {"decision": "approve", "remember": remember}}
                done = http.post(
                    f"/api/runs/{RUN}/interactions/{first['interaction_id']}/answer", json=answer, headers=alice
                )
                if done.status_code != 200:
                    raise RuntimeError(f"the grant: {done.status_code} {done.text}")
            expected = "policy" if arm == "policy" else "grant"
            request(-2)  # warm: the first request of a route imports what it needs
            api_ms: list[float] = []
            started_with = work.mark()
            for n in range(requests):
                started = time.perf_counter()
                view = request(n)
                api_ms.append((time.perf_counter() - started) * 1000)
                if view["status"] != "answered" or view["decision"]["outcome"] != expected:
                    raise RuntimeError(f"call {n} was not answered at once by the {expected}: {view}")
            api_done = work.mark()
            hook_ms, hook_cpu_ms = zip(
                *(_hook(info.api_url, info.token, requests + n) for n in range(hooks)), strict=True
            )
            hooks_done = work.mark()
    finally:
        stack.stop()
    return {
        "api_aws_calls": (api_done[1] - started_with[1]) / requests,
        "hook_requests": (hooks_done[0] - api_done[0]) / hooks,
        "hook_aws_calls": (hooks_done[1] - api_done[1]) / hooks,
        "api_ms": _summary(api_ms),
        "hook_ms": _summary(list(hook_ms)),
        "hook_cpu_ms": _summary(list(hook_cpu_ms)),
        "answered_by": expected,
    }


def _decide(count: int) -> dict[str, float]:
    """The engine's own time on the allowed call, in ms (the policy loaded once, as the handlers keep it)."""
    from baton.contracts.policy import PolicyQuery
    from baton.policy.engine import Policy

    policy = Policy.load(POLICY_FILE.read_text(encoding="utf-8"))
    query = PolicyQuery(target="Bash", arguments={"command": "ls -la"}, agent="claude-code", run_id=RUN)
    if policy.decide(query).outcome != "allow":
        raise RuntimeError("the example policy does not allow `ls -la`")
    took = []
    for _ in range(count):
        started = time.perf_counter()
        policy.decide(query)
        took.append((time.perf_counter() - started) * 1000)
    return _summary(took)


def _in_child(arm: Arm, hooks: int, requests: int) -> dict[str, Any]:
    argv = [__file__, "--arm", arm, "--hooks", str(hooks), "--requests", str(requests)]
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the {arm} arm failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout[done.stdout.rindex("\n{") + 1 if "\n{" in done.stdout else 0 :])
    return figures


def _print(figures: dict[str, Any]) -> None:
    print(f"policy latency, an allowed call (`ls -la`), median / p95 ms; policy {POLICY_FILE.relative_to(ROOT)}")
    for name, key, what in (
        ("hook", "hook_ms", "`baton hook claude-code`, the whole process"),
        ("hook CPU", "hook_cpu_ms", "the hook process's user + system CPU"),
        ("API", "api_ms", "POST .../tool-approvals, answered at once"),
    ):
        line = "  ".join(
            f"{ARMS[arm]} {figures[arm][key]['median']:.1f} / {figures[arm][key]['p95']:.1f}" for arm in ARMS
        )
        print(f"  {name:<9}{line}   (n={figures['policy'][key]['n']}; {what})")
    for arm, label in ARMS.items():
        got = figures[arm]
        print(
            f"  {label}: per hook call {got['hook_requests']:g} API requests, {got['hook_aws_calls']:g} AWS calls;"
            f" per API call {got['api_aws_calls']:g} AWS calls"
        )
    engine = figures["decide_ms"]
    print(
        f"  decide() {engine['median'] * 1000:.0f} / {engine['p95'] * 1000:.0f} us (n={engine['n']}; the engine alone)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hooks", type=int, default=20, help="hook processes per arm")
    parser.add_argument("--requests", type=int, default=50, help="API requests per arm")
    parser.add_argument("--decides", type=int, default=1000, help="decide() calls")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--arm", choices=list(ARMS), help=argparse.SUPPRESS)  # one stack: the parent's child
    args = parser.parse_args()
    if args.arm:
        print(json.dumps(_arm(args.arm, args.hooks, args.requests)))
        return
    figures: dict[str, Any] = {arm: _in_child(arm, args.hooks, args.requests) for arm in ARMS}
    figures["decide_ms"] = _decide(args.decides)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        _print(figures)


if __name__ == "__main__":
    main()
