"""LangGraph's human-in-the-loop, answered through Baton's tool approvals (issue 30).

LangChain's `HumanInTheLoopMiddleware` pauses a graph with an `interrupt` before a gated tool call runs:
one per model turn listing its action requests (`interrupt_mode="batched"`, resumed with
`{"decisions": [...]}`), or one per call (`"per_call"`, resumed with one decision). The graph's
checkpointer keeps the pause, so any process can resume it with `Command(resume={interrupt_id: value})`.

`approvals_for` posts one Baton tool approval per action request, its session the interrupt's id: a
repeat of the same call (a later look, or another process after a restart) finds the same approval, a
pending or approved one through the POST, a denied one through the run's events (the POST finds only
usable ones). `resume_value` turns the answered approvals into the resume value, consuming each
allowing one with the digest of the call that will run (a call that changed since it was approved is
refused: ConflictError, nothing resumes). Approve -> approve; edit -> edit with the edited arguments;
deny (a person's, or the default Baton takes at the deadline) -> reject with the reason as the message
the model sees. `resume_when_answered` does both and resumes the graph. Nothing here ever approves what
a person did not.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from langgraph.types import Command

from baton.contracts.tool_approvals import ToolApprovalRequest
from baton.domain.tool_calls import Risk, ToolCall
from baton.errors import NotFoundError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from langchain_core.runnables import RunnableConfig
    from langgraph.types import Interrupt, StateSnapshot

    from baton.client.sdk import Client
    from baton.contracts.tool_approvals import ToolApprovalView

AGENT = "langgraph"
EVENTS_PAGE = 100
MAX_REASON = 2000  # ToolApprovalRequest.reason's bound: the middleware's description repeats the arguments
DENIED = "A person denied this tool call through Baton; it was not run."


class ResumableGraph(Protocol):
    """What of a compiled LangGraph graph the adapter uses (a `CompiledStateGraph` is one)."""

    def get_state(self, config: RunnableConfig) -> StateSnapshot: ...

    def invoke(self, input: Any, config: RunnableConfig | None = None) -> Any: ...


@dataclass(frozen=True)
class ActionRequest:
    """One tool call a human-in-the-loop interrupt asks about."""

    interrupt_id: str
    tool: str
    arguments: dict[str, Any]
    description: str | None
    allowed: frozenset[str]  # approve, edit, reject, respond
    batched: bool  # resumed inside {"decisions": [...]}, in order

    @property
    def call(self) -> ToolCall:
        return ToolCall(tool=self.tool, arguments=self.arguments)


@dataclass(frozen=True)
class Approval:
    action: ActionRequest
    view: ToolApprovalView


def action_requests(interrupts: Sequence[Interrupt]) -> list[ActionRequest]:
    """The tool calls that `HumanInTheLoopMiddleware`'s interrupts ask about, in order (others are skipped)."""
    found: list[ActionRequest] = []
    for pause in interrupts:
        value = pause.value
        if not isinstance(value, dict):
            continue
        if value.get("type") == "tool_approval":  # per_call: the schema limits the decisions
            allowed = frozenset(_allowed_in(pause)) or frozenset({"approve", "edit", "reject"})
            found.append(
                ActionRequest(pause.id, value["name"], value["args"], value.get("description"), allowed, False)
            )
            continue
        configs = {c["action_name"]: frozenset(c["allowed_decisions"]) for c in value.get("review_configs", [])}
        for a in value.get("action_requests", []):
            allowed = configs.get(a["name"], frozenset())
            found.append(ActionRequest(pause.id, a["name"], a["args"], a.get("description"), allowed, True))
    return found


def _allowed_in(pause: Interrupt) -> list[str]:
    """The decision types a per-call interrupt's response schema accepts: its discriminator's, or the one
    a single-decision schema names."""
    schema = pause.response_schema
    if not isinstance(schema, dict):
        return []
    mapping = schema.get("discriminator", {}).get("mapping")
    if isinstance(mapping, dict):
        return [str(name) for name in mapping]
    named = schema.get("properties", {}).get("type", {}).get("const")
    return [named] if isinstance(named, str) else []


def approvals_for(
    client: Client,
    run_id: str,
    interrupts: Sequence[Interrupt],
    *,
    timeout_seconds: int = 3600,
    risk: Risk = "medium",
) -> list[Approval]:
    """One Baton tool approval per action request (a repeat of the same call finds the same approval).
    Unanswered by `timeout_seconds`, Baton takes the default: deny."""
    actions = action_requests(interrupts)
    decided = _decided_earlier(client, run_id, {a.interrupt_id for a in actions}) if actions else {}
    approvals = []
    for action in actions:
        if (found := decided.get((action.interrupt_id, action.call.digest))) is not None:
            approvals.append(Approval(action, found))
            continue
        request = ToolApprovalRequest(
            call=action.call,
            risk=risk,
            reason=(action.description or f"The LangGraph agent wants to run {action.tool}.")[:MAX_REASON],
            agent=AGENT,
            session=action.interrupt_id,
            timeout_seconds=timeout_seconds,
        )
        approvals.append(Approval(action, client.request_tool_approval(run_id, request)))
    return approvals


def _decided_earlier(client: Client, run_id: str, sessions: set[str]) -> dict[tuple[str, str], ToolApprovalView]:
    """This adapter's decided, unused approvals of these interrupts, by (session, digest), from the run's
    events: a denial is not found by a repeat's POST, which would ask the person again."""
    found: dict[tuple[str, str], ToolApprovalView] = {}
    after: str | None = None
    while True:
        try:
            page = client.events(run_id, after=after, limit=EVENTS_PAGE)
        except NotFoundError:  # the run's first approval creates it
            return found
        for event in page.events:
            data = event.data
            if event.type != "human_input_requested" or data.get("kind") != "tool_approval":
                continue
            if data.get("node") != AGENT:
                continue
            view = client.get_tool_approval(run_id, str(data["interaction_id"]))
            if view.session in sessions and view.status != "pending" and not view.consumed:
                found[(view.session, view.digest)] = view
        if not page.next or len(page.events) < EVENTS_PAGE:  # a short page is the last (`next` is always set)
            return found
        after = page.next


def wait_answered(
    client: Client,
    run_id: str,
    approvals: Sequence[Approval],
    *,
    wait_seconds: float,
    monotonic: Callable[[], float] = time.monotonic,
) -> list[Approval]:
    """The approvals as they are once all are decided or `wait_seconds` (shared) have passed."""
    until = monotonic() + max(0.0, wait_seconds)
    waited = []
    for a in approvals:
        view = a.view
        if view.status == "pending":
            left = max(0.0, until - monotonic())
            view = client.wait_tool_approval(run_id, view.interaction_id, wait_seconds=left, monotonic=monotonic)
        waited.append(Approval(a.action, view))
    return waited


def resume_value(client: Client, run_id: str, approvals: Sequence[Approval]) -> dict[str, Any] | None:
    """`Command(resume=...)`'s value, keyed by interrupt id; None while any approval is still pending.
    Each allowed call's approval is consumed (single use) with the digest of the call that will run."""
    if any(a.view.status == "pending" for a in approvals):
        return None
    batched: dict[str, list[dict[str, Any]]] = {}
    value: dict[str, Any] = {}
    for a in approvals:
        decided = _decision(client, run_id, a)
        if a.action.batched:
            value[a.action.interrupt_id] = {"decisions": batched.setdefault(a.action.interrupt_id, [])}
            batched[a.action.interrupt_id].append(decided)
        else:
            value[a.action.interrupt_id] = decided
    return value


def _decision(client: Client, run_id: str, approval: Approval) -> dict[str, Any]:
    """The middleware's decision for one answered approval: never an approve a person did not give."""
    action, view = approval.action, approval.view
    decided = view.decision
    if view.status != "answered" or decided is None:
        return _reject(action, f"The Baton approval {view.interaction_id} is {view.status}; the call was not run.")
    if decided.decision == "deny":
        return _reject(action, decided.reason or DENIED)
    if decided.decision == "edit" and "edit" not in action.allowed:
        return _reject(action, f"A person edited this {action.tool} call, which may not be edited; it was not run.")
    runs = action.call if decided.decision == "approve" else action.call.with_arguments(decided.arguments)
    consumed = client.consume_tool_approval(run_id, view.interaction_id, runs.digest)
    if decided.decision == "approve":
        return {"type": "approve"}
    return {"type": "edit", "edited_action": {"name": action.tool, "args": consumed.arguments}}


def _reject(action: ActionRequest, message: str) -> dict[str, Any]:
    if "reject" not in action.allowed:
        raise ValueError(f"{action.tool} may not be rejected, and Baton did not approve it: not resuming")
    return {"type": "reject", "message": message}


def resume_when_answered(
    graph: ResumableGraph,
    config: RunnableConfig,
    client: Client,
    run_id: str,
    *,
    wait_seconds: float,
    timeout_seconds: int = 3600,
    risk: Risk = "medium",
) -> Any | None:
    """Ask Baton about the graph's pending tool calls, wait up to `wait_seconds`, and once all are decided
    resume the graph: its result (it may pause again). None while someone has still to decide (call
    again later, from this process or another: the same approvals are found), or when nothing is paused."""
    interrupts = graph.get_state(config).interrupts
    approvals = approvals_for(client, run_id, interrupts, timeout_seconds=timeout_seconds, risk=risk)
    if not approvals:
        return None
    value = resume_value(client, run_id, wait_answered(client, run_id, approvals, wait_seconds=wait_seconds))
    return None if value is None else graph.invoke(Command(resume=value), config)
