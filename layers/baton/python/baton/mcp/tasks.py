"""Durable MCP tasks: a task-augmented `tools/call` (the `task` param of the 2025-11-25 revision, the
wire the `io.modelcontextprotocol/tasks` extension keeps for handshake clients) answers with a task
handle instead of waiting. The task IS the Baton interaction the call posted (a question or a tool
approval), stored in the table before the handle goes out, so nothing about it lives in the server:
a client that disconnects re-attaches by task id on any new session, on the local stack and on the
deployed `mcp` Lambda alike.

The task id names the run and the interaction (`bt1.<base64url>.<check>`): the check makes an edited
id fail loudly; the authority is the connection's bound run, and an id naming another run is refused
(403) before anything is read. Status, from the interaction's: pending -> working (a person, not the
MCP client, supplies the input, so not `input_required`); answered (also a default taken at the
deadline, or a remembered grant) -> completed; timed out without a default -> failed; cancelled ->
cancelled.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp_types.jsonrpc import INVALID_PARAMS

from baton.errors import ForbiddenError, NotFoundError
from baton.mcp.rpc_error import McpError

if TYPE_CHECKING:
    from baton.mcp.agent import AgentTools
    from baton.mcp.tools import RequestToolApprovalArgs
    from baton.models import Interaction

TASK_KINDS = ("question", "tool_approval")
TASK_ID_PREFIX = "bt1"
POLL_INTERVAL_MS = 2000
RELATED_TASK = "io.modelcontextprotocol/related-task"
_STATUS: dict[str, types.TaskStatus] = {
    "pending": "working",
    "answered": "completed",
    "timed_out": "failed",
    "cancelled": "cancelled",
}


def keep_ttl(result: object, dumped: dict[str, Any]) -> dict[str, Any]:
    """A task's `ttl` is required on the wire (null: kept as long as its run), which the server's
    `exclude_none` dump would drop."""
    if isinstance(result, types.Task):  # tasks/get and tasks/cancel answer with the task itself
        dumped.setdefault("ttl", None)
    elif isinstance(result, types.CreateTaskResult):
        dumped["task"].setdefault("ttl", None)
    elif isinstance(result, types.ListTasksResult):
        for task in dumped["tasks"]:
            task.setdefault("ttl", None)
    return dumped


class CreatedTask(types.CreateTaskResult):
    """The task handle, also readable as a tool result: the SDK's client checks a 2025-11-25 `tools/call`
    answer against `CallToolResult` (its core tables leave tasks out), and a model that reads the content
    learns the task id. A task-aware client reads `task`."""

    content: list[types.ContentBlock]
    structured_content: dict[str, Any]


class TaskIdError(ValueError):
    """A task id that is not one this server issued (malformed, or edited after it was issued)."""


def _check(body: str) -> str:
    return hashlib.sha256(f"{TASK_ID_PREFIX}.{body}".encode()).hexdigest()[:16]


def encode_task_id(run_id: str, interaction_id: str) -> str:
    raw = json.dumps([run_id, interaction_id], separators=(",", ":")).encode()
    body = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    return f"{TASK_ID_PREFIX}.{body}.{_check(body)}"


def decode_task_id(task_id: str) -> tuple[str, str]:
    """(run id, interaction id) of a task id this server issued; TaskIdError otherwise."""
    prefix, _, rest = task_id.partition(".")
    body, _, check = rest.partition(".")
    if prefix != TASK_ID_PREFIX or not body or check != _check(body):
        raise TaskIdError(task_id)
    try:
        decoded = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (binascii.Error, ValueError):
        raise TaskIdError(task_id) from None
    if not (isinstance(decoded, list) and len(decoded) == 2 and all(isinstance(p, str) for p in decoded)):
        raise TaskIdError(task_id)
    return decoded[0], decoded[1]


def _status_message(i: Interaction) -> str:
    st = i.state
    if st.status == "pending":
        return f"waiting for a person's answer (deadline {i.expires_at})"
    if st.status == "answered":
        return "taken at the deadline: the declared default" if st.outcome else f"answered by {st.answered_by}"
    if st.status == "timed_out":
        return f"nobody answered by the deadline {i.expires_at}"
    return f"cancelled by {st.answered_by}" + (f": {st.reason}" if st.reason else "")


class McpTasks:
    """tasks/get, tasks/result, tasks/cancel and tasks/list over the bound run's interactions."""

    def __init__(self, tools: AgentTools) -> None:
        self.tools = tools

    @property
    def run_id(self) -> str:
        return self.tools.run_id

    def task(self, i: Interaction) -> types.Task:
        return types.Task(
            task_id=encode_task_id(i.run_id, i.interaction_id),
            status=_STATUS[i.state.status],
            status_message=_status_message(i),
            created_at=i.created_at,
            last_updated_at=i.state.answered_at or i.created_at,
            ttl=None,  # kept with its run
            poll_interval=POLL_INTERVAL_MS,
        )

    def start(self, tool: str, args: Any) -> CreatedTask:
        """A task-augmented call: its interaction posted (stored before this returns), its task handle."""
        if tool == "request_tool_approval":
            interaction_id = self._request_approval(args)
        elif tool == "ask_user":
            asked = self.tools.continued_question if args.question_id else self.tools.posted_question
            interaction_id = asked(args)[0]
        else:
            interaction_id = str(self.tools.ask_user_async(args).data["interaction_id"])
        task = self.task(self._load(interaction_id))
        data = {"task_id": task.task_id, "status": task.status}
        text = f"task {task.task_id} created ({task.status}): poll tasks/get; tasks/result gives the outcome"
        return CreatedTask(task=task, content=[types.TextContent(type="text", text=text)], structured_content=data)

    def _request_approval(self, args: RequestToolApprovalArgs) -> str:
        """The approval of this exact call (a repeat of a call still open finds the same one)."""
        from baton.contracts.tool_approvals import ToolApprovalRequest
        from baton.services.tool_approvals import ToolApprovalService

        # The request's own fields by the same names; the call's three nest under `call`.
        fields = {name: value for name, value in args if value is not None}
        call = {name: fields.pop(name) for name in ("tool", "arguments", "arguments_schema") if name in fields}
        body = ToolApprovalRequest.model_validate({**fields, "call": call})
        approval, _ = ToolApprovalService(self.tools.services.core).request(
            self.run_id, body, caller=self.tools.caller.principal
        )
        return approval.interaction_id

    def _load(self, interaction_id: str) -> Interaction:
        found = self.tools.services.core.store.get_interaction(self.run_id, interaction_id)
        if found is None or found.request.kind not in TASK_KINDS:
            raise NotFoundError(f"no task {interaction_id} in run {self.run_id}", details={"field": "taskId"})
        if found.request.kind == "tool_approval":  # a read past its deadline takes the declared default
            from baton.services.tool_approvals import ToolApprovalService

            found = ToolApprovalService(self.tools.services.core).get(self.run_id, interaction_id)
        return found

    def of(self, params: dict[str, Any]) -> Interaction:
        """The interaction `params.taskId` names: -32602 for an id this server did not issue, 403 for another
        run's, 404 for none."""
        task_id = types.GetTaskRequestParams.model_validate(params).task_id
        try:
            run_id, interaction_id = decode_task_id(task_id)
        except TaskIdError:
            raise McpError(INVALID_PARAMS, "not a task id this server issued", {"field": "taskId"}) from None
        if run_id != self.run_id:
            raise ForbiddenError(
                f"task {task_id} belongs to another run; this connection is bound to run {self.run_id}",
                details={"field": "taskId", "run_id": self.run_id},
            )
        return self._load(interaction_id)

    # ---- the methods ---------------------------------------------------------------------------
    def get(self, params: dict[str, Any]) -> types.GetTaskResult:
        return types.GetTaskResult.model_validate(self.task(self.of(params)).model_dump())

    def list(self, _: dict[str, Any]) -> types.ListTasksResult:
        store = self.tools.services.core.store
        found = [i for kind in TASK_KINDS for i in store.list_run_interactions(self.run_id, kind=kind)]
        found.sort(key=lambda i: (i.created_at, i.interaction_id))
        return types.ListTasksResult(tasks=[self.task(i) for i in found])

    def cancel(self, params: dict[str, Any]) -> types.CancelTaskResult:
        from baton.services.withdrawals import withdraw

        i = self.of(params)
        cancelled = withdraw(self.tools.services.core, i, by=self.tools.caller.principal)
        return types.CancelTaskResult.model_validate(self.task(cancelled).model_dump())

    def result(self, params: dict[str, Any]) -> types.CallToolResult:
        """The original call's result once the task is terminal; waits within the call's bound first."""
        i = self.of(params)
        started = self.tools.policy.monotonic()
        if i.state.status == "pending":
            latest: list[Interaction] = [i]

            def settled() -> bool:
                latest[0] = self._load(i.interaction_id)
                return latest[0].state.status != "pending"

            self.tools.poll(settled, started, i.expires_at)
            i = latest[0]
        if i.state.status == "pending":
            task = self.task(i)
            raise McpError(
                INVALID_PARAMS,
                "the task is not finished yet: poll tasks/get and ask for the result once it is completed",
                {"taskId": task.task_id, "status": task.status},
            )
        return self.outcome(i)

    @staticmethod
    def outcome(i: Interaction) -> types.CallToolResult:
        """The original call's result of a terminal task."""
        data, text = _payload(i)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text + "\n" + json.dumps(data, default=str))],
            structured_content=data,
            is_error=i.state.status != "answered",
            _meta={RELATED_TASK: {"taskId": encode_task_id(i.run_id, i.interaction_id)}},
        )


def _payload(i: Interaction) -> tuple[dict[str, Any], str]:
    """The structured result of a terminal task and the line a model reads first."""
    if i.request.kind == "tool_approval":
        return _decision(i)
    st = i.state
    base = {"question_id": i.interaction_id, "status": st.status}
    if st.status == "answered":
        data = {**base, "answer": st.answer}
        if st.outcome:  # nobody answered: the declared default was taken
            return {**data, "outcome": st.outcome}, f"nobody answered by the deadline: the default {st.answer!r}"
        return data, f"answered: {st.answer!r}"
    if st.status == "cancelled":
        return {**base, "reason": st.reason}, "the question was cancelled; decide without it"
    return {**base, "deadline": i.expires_at}, "nobody answered by the deadline; decide without it and say so"


def _decision(i: Interaction) -> tuple[dict[str, Any], str]:
    from baton.contracts.tool_approvals import ToolApprovalView

    view = ToolApprovalView.of(i)
    data = view.model_dump(mode="json", exclude_none=True)
    decision = view.decision
    if decision is None:
        return data, f"the tool approval ended without a decision ({i.state.status}); do not run the call"
    if decision.decision == "deny":
        return data, f"denied: {decision.reason or 'no reason given'}; do not run the call"
    return data, "approved: run exactly the call with the arguments below (once)"
