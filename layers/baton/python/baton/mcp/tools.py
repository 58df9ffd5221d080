"""The MCP tools an agent sees: one argument model and one description per tool.

The descriptions are what a model reads to decide how to call a tool, so each says what it returns and
what to do next. The argument models are the door (`extra="forbid"`, the shared field types of
`baton/domain/fields.py`): a bad argument is refused with the field named before any work. The run is
never an argument: it comes from the connection's credentials (`baton/mcp/http.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from baton.domain import fields
from baton.domain.approval import ApprovalPolicy
from baton.domain.interrupt_fields import GateAction, Prompt
from baton.domain.ladder import AwaitLadderFields, LadderFields, OnTimeout

APPROVAL_ARG = (
    "A quorum: {approvals: N, approvers: [names or group:<name>], rejection: any|majority, approve_option}. "
    "The question is answered once N approvers agree (or the rejection rule is met); you cannot approve it."
)
DEFAULT_NODE = "agent"  # the node an agent's questions are asked from when it does not name one


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AskAsyncArgs(_Args, LadderFields):
    """A ladder (remind_after, escalate_after + escalate_to, on_timeout {"default": ...}) needs timeout_seconds."""

    question: str = Field(description="The question for a person (at most 4000 characters).")
    options: list[str] | None = Field(default=None, description="Choices to offer, when the answer is a choice.")
    allow_free_text: bool | None = Field(
        default=None, description="Accept answers outside the options. Default: true without options, false with."
    )
    node: fields.NodeName = Field(
        default=DEFAULT_NODE, description="Who asks (answers are queued for this node). Default: agent."
    )
    approval: ApprovalPolicy | None = Field(default=None, description=APPROVAL_ARG)
    timeout_seconds: fields.TimeoutSeconds | None = Field(
        default=None, description="The question's own deadline, which its ladder counts to (optional otherwise)."
    )


class AwaitArgs(_Args, AwaitLadderFields):
    """The ladder (first call only, like the deadline): remind_after / escalate_after + escalate_to about the
    questions still open; on_timeout "fail" or "use_question_defaults" (each takes its own declared default)."""

    timeout_seconds: fields.TimeoutSeconds = Field(
        description="The overall deadline of this wait, in seconds (mandatory). The first call sets it; later "
        "calls keep the deadline the server stored."
    )
    from_node: fields.ScopeNode = Field(
        default=None, description="Only this node's questions. Absent: every question of the run."
    )


class AskUserArgs(_Args, LadderFields):
    """The question's ladder (first call only): remind_after / escalate_after + escalate_to, counted to
    timeout_seconds; on_timeout {"default": <answer>} is taken at the deadline (outcome timed_out_default)."""

    question: str | None = Field(default=None, description="The question (omit when continuing with question_id).")
    options: list[str] | None = Field(default=None, description="Choices to offer.")
    allow_free_text: bool | None = Field(default=None, description="Accept answers outside the options.")
    timeout_seconds: fields.TimeoutSeconds = Field(
        description="The overall deadline in seconds (mandatory; kept by the server from the first call)."
    )
    question_id: str | None = Field(
        default=None,
        max_length=64,
        description="Keep waiting for a question an earlier ask_user posted (from its pending result).",
    )
    approval: ApprovalPolicy | None = Field(default=None, description=APPROVAL_ARG)


class InterruptArgs(_Args, LadderFields):
    """remind_after / escalate_after + escalate_to are walked by the interrupt's own timer."""

    prompt: Prompt = Field(description="What the person is asked to decide or edit.")
    json_schema: dict[str, Any] | None = Field(default=None, description="A JSON Schema the value must match.")
    schema_: dict[str, Any] | None = Field(
        default=None, alias="schema", description='Light form: {"type": ..., "enum": [...]} (json_schema wins).'
    )
    state: dict[str, Any] | None = Field(default=None, description="A state snapshot the person may inspect and edit.")
    timeout_seconds: fields.TimeoutSeconds = Field(description="Deadline of the pause in seconds (mandatory).")
    approval: ApprovalPolicy | None = Field(
        default=None,
        description="A quorum: each resume approves, each cancel rejects; resolved once `approvals` approvers "
        "agree (with the value of the resume that met it). You cannot approve it.",
    )
    action: GateAction | None = Field(
        default=None,
        description="The action this pause gates: the policy in force decides it at once (a rule's allow resolves "
        "it with onAllow, a deny with onDeny; an ask goes to the rule's approvers). Each value must match the schema.",
    )
    on_timeout: OnTimeout = Field(
        default="fail",
        description='At the deadline: "fail" (the interrupt times out) or {"default": <a value the schema '
        "accepts>}: that value is taken and marked timed_out_default (nobody's answer).",
    )

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RequestToolApprovalArgs(_Args, LadderFields):
    """The ladder counts to timeout_seconds; on_timeout {"default": {"decision": "approve" | "deny"}} is taken
    at the deadline (deny unless declared). Mirrors `ToolApprovalRequest` (the API's), flattened."""

    tool: str = Field(min_length=1, max_length=200, description="The tool you are about to call.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Its arguments, exactly as you will call it.")
    arguments_schema: dict[str, Any] | None = Field(
        default=None, description="The tool's argument JSON Schema: a person's edit is validated against it."
    )
    risk: Literal["low", "medium", "high"] = Field(default="medium", description="How much the call can break.")
    reason: str = Field(min_length=1, max_length=2000, description="Why you want to run it.")
    session: str | None = Field(
        default=None, min_length=1, max_length=200, description="Your session (a remembered grant's scope)."
    )
    timeout_seconds: fields.TimeoutSeconds = Field(description="Mandatory bound: then the default is taken.")


class GetInterruptArgs(_Args):
    interrupt_id: str = Field(min_length=1, max_length=64, description="The id `interrupt` returned.")


class DrainArgs(_Args):
    node: fields.NodeName = Field(default=DEFAULT_NODE, description="Whose answers to take. Default: agent.")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    args: type[_Args]
    description: str
    read_only: bool = False
    # May the call be a durable MCP task (the `task` param; baton/mcp/tasks.py)? "required": only as one.
    task_support: Literal["forbidden", "optional", "required"] = "forbidden"


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "ask_user_async",
        AskAsyncArgs,
        "Post a question for a person and return AT ONCE with its id: 'question posted; keep working'. "
        "Front-load every question you will need, then keep working; collect answers later with "
        "await_answers or drain_messages. Called as a task, the task is the question: poll tasks/get, read "
        "the answer with tasks/result.",
        task_support="optional",
    ),
    ToolSpec(
        "await_answers",
        AwaitArgs,
        "Collect the answers to your questions. All answered: the answers inline (status 'answered'). Otherwise "
        "it waits at most about 20 seconds and returns status 'pending' with the open questions, waited_s and "
        "the overall deadline: keep working, or call again. The deadline is set by the first call's "
        "timeout_seconds and kept by the server; past it, status 'timed_out' names the unanswered questions "
        "(with on_timeout 'use_question_defaults', each question that declared a default takes it instead). "
        "remind_after / escalate_after nudge the people meanwhile.",
    ),
    ToolSpec(
        "ask_user",
        AskUserArgs,
        "Ask a person and wait for the answer: for hard stops only. Returns the answer (status 'answered'), or "
        "after at most about 20 seconds status 'pending' with question_id: call ask_user again with that "
        "question_id (the question is not posted twice) until it is answered or its deadline passes "
        "(status 'timed_out'; with on_timeout {'default': ...} the default is the answer, outcome "
        "'timed_out_default': nobody's answer). Called as a task, it returns at once with the task; "
        "tasks/result gives the answer once it is completed.",
        task_support="optional",
    ),
    ToolSpec(
        "interrupt",
        InterruptArgs,
        "Pause for a typed decision: a person resolves it with a value (checked against json_schema or "
        "schema) and may edit `state`. Returns the resolution (status 'answered' with value and state; or "
        "'cancelled' with the reason, timed_out true if its deadline passed), or after at most about 20 "
        "seconds status 'pending' with interrupt_id: poll with get_interrupt.",
    ),
    ToolSpec(
        "get_interrupt",
        GetInterruptArgs,
        "Wait at most about 20 seconds for an interrupt of this run to be resolved; returns the same result "
        "shapes as interrupt ('pending' means call again).",
        read_only=True,
    ),
    ToolSpec(
        "drain_messages",
        DrainArgs,
        "Take the answers queued for a node, oldest first; each answer is delivered exactly once (a second "
        "drain does not return it again). Returns at once.",
    ),
    ToolSpec(
        "request_tool_approval",
        RequestToolApprovalArgs,
        "Ask a person to approve a tool call before you run it. Call it as a task (it is durable: reconnect "
        "and poll tasks/get with the task id). tasks/result gives the decision: approve (run exactly the "
        "returned arguments, once; an edit changed them), or deny with the reason (do not run it). An "
        "unanswered approval is denied at its deadline unless on_timeout declares otherwise.",
        task_support="required",
    ),
)
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
