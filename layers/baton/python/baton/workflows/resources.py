"""What Baton deploys, declared once: the functions, their SNS subscriptions, the state machines and
the substitutions that wire them. The CDK stack and the local stack both build from this."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from baton.workflows.source_tree import source_tree

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    description: str
    timeout_seconds: int = 30
    memory_mb: int = 512
    # SNS channel whose notifications this function receives (a filtered topic subscription).
    subscribes_to_channel: str | None = None
    # Extra environment names this function reads (beyond the shared Baton settings).
    extra_env: tuple[str, ...] = field(default_factory=tuple)
    # AWS access the deployed function needs, by capability (see infra/permissions.py): "table",
    # "topic", "start_execution", "send_task", "merge_build", "slack_secret", "webhook_secret",
    # "deadline_timer".
    # None = the deployment's default for this function name (table + topic for unknown names).
    aws_access: tuple[str, ...] | None = None
    # EventBridge schedule expression when deployed, e.g. "rate(1 minute)". None = the deployment's
    # default for this function name (infra/permissions.py SCHEDULES), else not scheduled.
    schedule: str | None = None

    @property
    def directory(self) -> Path:
        return source_tree().function_dir(self.name)

    @property
    def substitution(self) -> str:
        """ASL placeholder for this function's ARN: park -> ParkFunctionArn."""
        return "".join(part.capitalize() for part in self.name.split("_")) + "FunctionArn"


# What the Slack app's functions read (baton/channels/slack/config.py); notify_slack reads them too.
SLACK_APP_ENV: tuple[str, ...] = (
    "SLACK_SIGNING_SECRET",
    "SLACK_BOT_TOKEN",
    "SLACK_APP_SECRET_ARN",
    "SLACK_CHANNEL",
    "SLACK_API_URL",
    "BATON_SLACK_OPERATORS",
    "BATON_SLACK_OPERATORS_PARAMETER",
    "BATON_SLACK_WORKER_FUNCTION",
    "BATON_SLACK_WORKER_INVOKE",
    "BATON_INBOX_URL",
)

FUNCTIONS: tuple[FunctionSpec, ...] = (
    FunctionSpec(
        "api",
        "Baton HTTP API (Powertools resolver)",
        timeout_seconds=29,
        extra_env=(
            "BATON_AGENT_PRINCIPAL_PATTERN",
            "BATON_INPUT_SCHEMAS",
            "BATON_MERGE_RUNNER",
            "BATON_MERGE_REPOSITORY",
            "BATON_NOTIFY_CHANNELS",  # the doors where a question is created: an unwired channel is a 422
            "BATON_ALLOWED_ORIGINS",  # the pages besides its own that may call it (baton/domain/origins.py)
            "BATON_WEBAUTHN_RP_ID",  # passkeys: a high risk approve takes one (baton/services/passkeys.py)
        ),
    ),
    # The agent tools over MCP (baton/mcp): POST /mcp, each call held at most ~20 s (API Gateway cuts at 29 s).
    FunctionSpec(
        "mcp",
        "Baton MCP server: the agent tools over stateless Streamable HTTP",
        timeout_seconds=29,
        extra_env=("BATON_AGENT_PRINCIPAL_PATTERN", "BATON_NOTIFY_CHANNELS", "BATON_ALLOWED_ORIGINS"),
        aws_access=("table", "topic", "deadline_timer"),  # a question's remind_after/escalate_after/on_timeout
    ),
    FunctionSpec("park", "Registers a gate's task token and what it asks"),
    FunctionSpec("gate_timeout", "Records what timed out at a gate and returns the Fail cause"),
    FunctionSpec("notify_console", "Prints notifications (console channel)", subscribes_to_channel="console"),
    FunctionSpec(
        "notify_slack",
        "Posts notifications to Slack as Block Kit",
        subscribes_to_channel="slack",
        extra_env=("SLACK_WEBHOOK_URL", "SLACK_WEBHOOK_PARAMETER", "SLACK_WEBHOOK_SECRET_ARN", *SLACK_APP_ENV),
    ),
    FunctionSpec(
        "notify_webhook",
        "POSTs signed notifications to a webhook",
        subscribes_to_channel="webhook",
        extra_env=("WEBHOOK_URL", "WEBHOOK_SECRET", "WEBHOOK_SECRET_PARAMETER"),
    ),
    # Per-recipient mail with signed answer links (baton/channels/email); its SES and secret grants are
    # made by infra/capabilities/email_links.py; the table holds each recipient's sent mark (MAILED#).
    FunctionSpec(
        "notify_email",
        "Mails each email recipient their own notification with a signed answer link (SES v2)",
        subscribes_to_channel="email",
        extra_env=(
            "BATON_EMAIL_RECIPIENTS",
            "BATON_EMAIL_SENDER",
            "BATON_EMAIL_LINK_TTL_SECONDS",
            "BATON_EMAIL_OUTBOX",
        ),
        aws_access=("table",),
    ),
    # The review-and-merge gate (statemachines/review_gate.asl.json).
    FunctionSpec(
        "review_turn",
        "Review gate: a companion turn (first turn on the diff, or an answer to the operator)",
        timeout_seconds=120,
        extra_env=("BATON_COMPANION", "BATON_COMPANION_MODEL", "BATON_MERGE_RUNNER", "BATON_MERGE_REPOSITORY"),
    ),
    FunctionSpec(
        "review_park",
        "Review gate: parks the task token and asks the operator",
        # sends an action stored before the token was parked; starts the gate's timer
        aws_access=("table", "topic", "send_task", "deadline_timer"),
    ),
    FunctionSpec(
        "merge_start",
        "Review gate: parks the token and starts the merge build (CodeBuild, or a local subprocess)",
        extra_env=("BATON_MERGE_RUNNER", "BATON_MERGE_PROJECT", "BATON_MERGE_REPOSITORY"),
    ),
    FunctionSpec(
        "diff_start",
        "Review gate: parks the token and starts the bounded-diff build (CodeBuild, or a local subprocess)",
        extra_env=("BATON_MERGE_RUNNER", "BATON_MERGE_PROJECT", "BATON_MERGE_REPOSITORY"),
    ),
    FunctionSpec(
        "build_finished",
        "Review gate: a diff or merge build ended (its state-change event); sends the parked token once",
        extra_env=("BATON_MERGE_RUNNER",),
    ),
    FunctionSpec("merge_record", "Review gate: records the merge outcome on the run"),
    # Async questions and the await gate (statemachines/await_answers.asl.json, baton.workflows.gate_states).
    FunctionSpec(
        "await_gate",
        "Await gate: parks the task token until no question in scope is pending (re-checks after parking)",
        # releases at once when everything is already answered; starts the gate's timer
        aws_access=("table", "topic", "send_task", "deadline_timer"),
    ),
    FunctionSpec("await_timeout", "Await gate: records the unanswered questions and returns the Fail cause"),
    FunctionSpec(
        "reconcile",
        "Releases parked await gates whose questions are all answered (scheduled every minute)",
        aws_access=("table", "topic", "send_task"),
        schedule="rate(1 minute)",
    ),
    FunctionSpec(
        "run_lifecycle",
        "Records a run's end when its execution ends (EventBridge: Step Functions execution status change)",
        aws_access=("table", "topic"),
    ),
    FunctionSpec("demo_agent", "Demo 'draft' node: posts its questions and returns at once with their ids"),
    # Interrupts (statemachines/interrupt.asl.json, baton.services.interrupts).
    FunctionSpec("interrupt_park", "Interrupt: creates the interrupt and parks the task token"),
    FunctionSpec("interrupt_fail", "Interrupt: marks a timed-out/cancelled interrupt and returns the Fail cause"),
    # Every gate's timer (statemachines/gate_deadline.asl.json, baton.services.deadlines).
    FunctionSpec(
        "gate_deadline",
        "Ends a parked gate at Baton's deadline when its timer fires (BatonDeadlinePassed)",
        aws_access=("table", "topic", "send_task"),
    ),
    FunctionSpec(
        "interrupt_sweeper",
        "Times out SDK interrupts past their deadline (scheduled every minute; Query on the pending index)",
        timeout_seconds=60,
        schedule="rate(1 minute)",
    ),
    # The Slack app (baton/channels/slack): POST /slack/interactions acks at once, the worker answers after.
    FunctionSpec(
        "slack_interactions",
        "Slack app: verifies a signed interaction, refuses replays, acks, hands the answer to the worker",
        timeout_seconds=10,
        extra_env=SLACK_APP_ENV,
        aws_access=("table",),  # + invoke the worker and read the app's secrets (infra/capabilities/slack.py)
    ),
    FunctionSpec(
        "slack_worker",
        "Slack app: answers a click or a modal as the mapped operator, then updates the message in place",
        timeout_seconds=60,
        # with passkeys set up, a high risk approve from Slack is refused (it cannot carry one): say so there
        extra_env=(*SLACK_APP_ENV, "BATON_WEBAUTHN_RP_ID"),
        aws_access=("table", "send_task"),  # the API's answer path: store the answer, send the parked token
    ),
)

# workflow name -> ASL file. Every file here is registered locally and deployed by CDK.
STATE_MACHINES: dict[str, str] = {
    "human_pause": "human_pause.asl.json",
    "interrupt": "interrupt.asl.json",
    "review_gate": "review_gate.asl.json",
    "await_answers": "await_answers.asl.json",
    "await_fanout_example": "await_fanout_example.asl.json",
    "demo": "demo_workflow.asl.json",
    "fix_loop_example": "fix_loop_example.asl.json",  # the demo's request_changes as a bounded fix loop
    # Not a workflow: every gate's timer, started by the parks (never by POST /api/runs).
    "gate_deadline": "gate_deadline.asl.json",
}


def state_machine_substitution(workflow: str) -> str:
    """ASL placeholder for a Baton state machine's ARN (review_gate -> ReviewGateStateMachineArn), so
    a workflow can run a whole gate as one `states:startExecution.sync:2` Task."""
    return "".join(part.capitalize() for part in workflow.split("_")) + "StateMachineArn"


def substitutions(
    function_arn: Callable[[FunctionSpec], str],
    state_machine_arn: Callable[[str], str],
    *,
    specs: Iterable[FunctionSpec] | None = None,
    workflows: Iterable[str] | None = None,
) -> dict[str, str]:
    """The ASL substitutions, built the same way by the local stack (baton.local.provision) and the CDK
    stack (infra/capabilities/gates.py): every function's placeholder -> its ARN and every Baton state
    machine's placeholder -> its ARN (known from its name, so a workflow can start another whatever the
    creation order). `specs`/`workflows` default to FUNCTIONS/STATE_MACHINES."""
    subs = {spec.substitution: function_arn(spec) for spec in (FUNCTIONS if specs is None else specs)}
    for workflow in STATE_MACHINES if workflows is None else workflows:
        subs[state_machine_substitution(workflow)] = state_machine_arn(workflow)
    return subs


# Input defaults per workflow, merged under the caller's input when a hosted run starts (ASL paths
# such as TimeoutSecondsPath must resolve, and a newcomer should not have to know every field).
WORKFLOW_DEFAULTS: dict[str, dict[str, object]] = {
    # `review` (the review gate's config: repo_path, run_branch, ...) has no default: `baton dev`
    # creates a throwaway repository for it (baton.cli.demo).
    "demo": {
        "questions": [
            {
                "question": "Which database should the new service use?",
                "options": ["postgres", "dynamodb"],
                "allow_free_text": False,
            },
            {"question": "What should the release be called?"},
        ],
        "work_seconds": 2,
        "gate_timeout_seconds": 3600,
        "interrupt_timeout_seconds": 3600,
        "review_timeout_seconds": 86400,
        "notify": ["console"],
    },
    "human_pause": {
        "prompt": "Approve this run?",
        "timeout_seconds": 3600,
        "notify": ["console"],
        "ladder": None,
        "approval": None,
    },
    "interrupt": {"prompt": "Review the state and resume", "timeout_seconds": 3600, "notify": ["console"]},
    "await_answers": {
        "gate": "await",
        "from": None,
        "timeout_seconds": 1800,
        "node": "agent",
        "questions": [],
        "delay_seconds": 0,
        "ladder": None,  # remind / escalate / use_question_defaults (baton.domain.ladder)
    },
    "await_fanout_example": {"items": [], "research_questions": [], "draft_questions": [], "timeout_seconds": 1800},
    "fix_loop_example": {"max_fix_loops": 5, "review_timeout_seconds": 86400},  # the seed's fix_loop(5)
}


def schedule_seconds(expression: str) -> int:
    """`rate(1 minute)` / `rate(5 minutes)` / `rate(30 seconds)` -> seconds (the local stack's timer)."""
    inner = expression.strip().removeprefix("rate(").removesuffix(")").split()
    if len(inner) != 2 or not inner[0].isdigit():
        raise ValueError(f"unsupported schedule {expression!r}: use rate(N unit)")
    unit = inner[1].rstrip("s")
    factor = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}.get(unit)
    if factor is None:
        raise ValueError(f"unsupported schedule unit in {expression!r}")
    return int(inner[0]) * factor


def function(name: str) -> FunctionSpec:
    for spec in FUNCTIONS:
        if spec.name == name:
            return spec
    raise KeyError(name)
