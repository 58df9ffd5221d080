"""Which AWS access each deployed function gets, by capability. Least privilege: a function gets only
the capabilities listed for it; `FunctionSpec.aws_access` (when set) wins over the defaults here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal, get_args

if TYPE_CHECKING:
    from collections.abc import Iterable

    from baton.workflows.resources import FunctionSpec

Capability = Literal[
    "table",  # read/write Baton's table (grant_read_write_data)
    "topic",  # publish to the notifications topic (and use its KMS key for that)
    "start_execution",  # start/describe/stop executions of Baton's state machines (hosted runs)
    # states:SendTaskSuccess/Failure on Baton's state machines (resume a gate), DescribeExecution of their
    # executions (a release whose task is gone asks whether the run ended: Core.release_gate),
    # StopExecution of the gates' timers (a release stops its gate's timer: infra/capabilities/functions.py
    # _grant_timer_stop), and on a
    # user's own machine with Baton gates once it is granted (infra/gate.py BatonGate.grant_resume)
    "send_task",
    "merge_build",  # codebuild:StartBuild on the merge project
    "slack_secret",  # read the Slack webhook URL (SSM parameter or Secrets Manager secret)
    "webhook_secret",  # read the webhook signing secret (SSM parameter)
    "companion_model",  # bedrock:InvokeModel on the configured review-companion model (when configured)
    # states:StartExecution on the gates' timer machine only (baton.services.deadlines), and StopExecution of
    # its executions (a settled pause stops its own timer: an answer, a cancel, an agent's withdrawal)
    "deadline_timer",
]
CAPABILITIES: Final[tuple[str, ...]] = get_args(Capability)

DEFAULT_ACCESS: Final[tuple[str, ...]] = ("table", "topic")

ACCESS_BY_NAME: Final[dict[str, tuple[str, ...]]] = {
    "api": ("table", "topic", "start_execution", "send_task", "deadline_timer"),  # tool-form awaits' timers
    "park": ("table", "topic", "deadline_timer"),
    "demo_agent": ("table", "topic", "deadline_timer"),  # its questions' remind_after/escalate_after/on_timeout
    "interrupt_park": ("table", "topic", "deadline_timer", "send_task"),  # a policy rule resumes it at create
    "gate_timeout": ("table", "topic"),
    "notify_console": (),
    "notify_slack": ("slack_secret",),
    "notify_webhook": ("webhook_secret",),
    # The review gate's build Lambdas park the task token in the table and start the CodeBuild build
    # (which never sees the token); diff_start releases a gate with nothing to diff at once, and
    # build_finished (the build's state-change rule) sends the parked token.
    "merge_start": ("table", "topic", "merge_build"),
    "diff_start": ("table", "merge_build", "send_task"),
    "build_finished": ("table", "send_task"),
    "review_turn": ("table", "topic", "companion_model"),
}

# Functions run on a schedule by default (FunctionSpec.schedule wins when set).
SCHEDULES: Final[dict[str, str]] = {
    "reconcile": "rate(1 minute)",
    "interrupt_sweeper": "rate(1 minute)",
}


def schedule_for(spec: FunctionSpec) -> str | None:
    return spec.schedule if spec.schedule is not None else SCHEDULES.get(spec.name)


def token_senders(specs: Iterable[FunctionSpec]) -> tuple[str, ...]:
    """The functions that send gates' task tokens (their `send_task` capability): the roles a user's own
    state machine with Baton gates must let resume it (infra/gate.py BatonGate.grant_resume)."""
    return tuple(spec.name for spec in specs if "send_task" in access_for(spec))


def access_for(spec: FunctionSpec) -> tuple[str, ...]:
    access = spec.aws_access if spec.aws_access is not None else ACCESS_BY_NAME.get(spec.name, DEFAULT_ACCESS)
    unknown = set(access) - set(CAPABILITIES)
    if unknown:
        raise ValueError(f"function {spec.name}: unknown aws_access {sorted(unknown)}; expected {CAPABILITIES}")
    return tuple(access)
