"""How fast is an answer? From a human's answer to the agent going on, by every door, on the embedded
local stack (moto as AWS, Baton's handlers in-process; figures printed, never asserted):

  critical path     parts/critical_path.py: resume and last answer -> SUCCEEDED against the bare
                    SendTaskSuccess round trip and the one-write floor of each one's own workflow (median,
                    p95, n=50), the CPU of each request's thread (in AWS calls and outside)
  questions         parts/question_life.py: an async question's answer -> HTTP response (token sent) and
                    -> gate resumed (execution ended), n=30
  mcp               parts/mcp_door.py: the MCP door's ask_user_async call and how long await_answers holds
  slack             parts/slack_ack.py: a signed button click's ack (Slack's limit: 3 s) and the worker's answer
  timers            parts/timers.py: the answer nobody gives: how late a gate's deadline, a gate's ladder
                    and a question's ladder act after their due time
  policy            parts/policy_latency.py: an allowed tool call answered by a policy rule, through
                    `baton hook claude-code` (the whole process) and `POST .../tool-approvals`, next to the
                    same call without a policy answered by a remembered grant (the fastest path without a
                    policy); the engine's own decide() (median, p95)

Usage: uv run python bench/answer_latency.py [--quick] [--only critical path,questions,mcp,slack,timers,policy]
The closing summary table of `make bench` (bench/summary.py) repeats the critical path beside the rest.
"""

from __future__ import annotations

from parts import sections

SECTIONS: list[sections.Section] = [
    ("critical path", ["parts/critical_path.py", "--samples", "50"], ["parts/critical_path.py", "--quick"]),
    ("questions", ["parts/question_life.py"], ["parts/question_life.py", "--samples", "3"]),
    ("mcp", ["parts/mcp_door.py"], ["parts/mcp_door.py", "--calls", "3", "--waits", "1", "--bound", "2"]),
    ("slack", ["parts/slack_ack.py"], ["parts/slack_ack.py", "--samples", "3"]),
    (
        "timers",
        ["parts/timers.py"],
        ["parts/timers.py", "--gates", "2", "--questions", "2", "--timeout", "5", "--ladder-timeout", "7"],
    ),
    (
        "policy",
        ["parts/policy_latency.py"],
        ["parts/policy_latency.py", "--hooks", "2", "--requests", "3", "--decides", "50"],
    ),
]

if __name__ == "__main__":
    sections.run(__doc__ or "", SECTIONS)
