"""Strands Agents (`pip install 'baton[strands-agents]'`): a hook provider on `BeforeToolCallEvent` that asks
Baton to approve each tool call and raises Strands' interrupt while a person decides.

The first pass posts the tool approval (a repeat of the same call finds the same one; a remembered grant
answers at once) and waits up to `wait_seconds`. Still pending: it records the approval in the agent's state
(`agent.state`, kept by a session manager with the interrupt) and raises the interrupt, so the process may
exit. `resume_responses(agent)` answers the interrupts whose approvals are decided; `agent(responses)` then
re-runs the hook, which reads the decision from Baton, never from the response. Approved: the approval is
consumed with the digest of the call about to run (the server refuses another call), then the tool runs.
Edited: the tool runs with the person's arguments. Denied, unanswered at the deadline (Baton takes the
default, deny), pending on a resume, or any error: the tool is cancelled with a reason the model sees."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strands.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from strands.interrupt import InterruptException

from baton.contracts.tool_approvals import ToolApprovalRequest
from baton.domain.tool_calls import ToolCall

if TYPE_CHECKING:
    from collections.abc import Iterable

    from strands import Agent
    from strands.types.interrupt import InterruptResponseContent

    from baton.client.tool_approvals import ToolApprovalCalls
    from baton.contracts.tool_approvals import ToolApprovalView
    from baton.domain.tool_calls import Risk

INTERRUPT_NAME = "baton.tool_approval"
STATE_KEY = "baton_tool_approvals"  # agent.state: {toolUseId: {"interaction_id", "interrupt_id"}}


class BatonToolApprovals(HookProvider):
    """Every tool call of the agent (or only `tools`) waits for a person's approval in Baton's run `run_id`."""

    def __init__(
        self,
        client: ToolApprovalCalls,
        run_id: str,
        *,
        tools: Iterable[str] | None = None,
        timeout_seconds: int = 3600,
        wait_seconds: float = 0.0,
        risk: Risk = "medium",
        session: str | None = None,
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.tools = frozenset(tools) if tools is not None else None  # None: every tool asks
        self.timeout_seconds = timeout_seconds
        self.wait_seconds = wait_seconds
        self.risk: Risk = risk
        self.session = session

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.before_tool_call)

    def before_tool_call(self, event: BeforeToolCallEvent) -> None:
        name = event.tool_use["name"]
        if self.tools is not None and name not in self.tools:
            return
        try:
            self._decide(event, name)
        except InterruptException:
            raise  # the pause itself: the agent stops with the interrupt
        except Exception as err:  # whatever went wrong, the tool does not run
            event.cancel_tool = f"Baton could not approve this {name} call ({err}); it was not run."

    def resume_responses(self, agent: Agent, *, wait_seconds: float = 0.0) -> list[InterruptResponseContent]:
        """The interrupt responses of the approvals now decided (`agent(responses)` resumes with them); empty
        while every approval is still pending. Waits up to `wait_seconds` on each pending one."""
        responses: list[InterruptResponseContent] = []
        for asked in _asked(agent).values():
            view = self.client.wait_tool_approval(self.run_id, asked["interaction_id"], wait_seconds=wait_seconds)
            if view.status != "pending":
                response = {"interaction_id": view.interaction_id, "status": view.status}
                responses.append({"interruptResponse": {"interruptId": asked["interrupt_id"], "response": response}})
        return responses

    def _decide(self, event: BeforeToolCallEvent, name: str) -> None:
        call = ToolCall(tool=name, arguments=dict(event.tool_use["input"] or {}), arguments_schema=_schema(event))
        tool_use_id = event.tool_use["toolUseId"]
        asked = _asked(event.agent).get(tool_use_id)
        if asked is not None:  # resumed: the approval this call's interrupt stands for, never a new one
            event.interrupt(INTERRUPT_NAME)  # raises again when the resume brought no response for it
            view = self.client.wait_tool_approval(self.run_id, asked["interaction_id"], wait_seconds=self.wait_seconds)
            _forget(event.agent, tool_use_id)
        else:
            request = ToolApprovalRequest(
                call=call,
                risk=self.risk,
                reason=f"The Strands agent {event.agent.name!r} wants to run {name}.",
                agent=_node_name(event.agent.name),
                session=self.session,
                timeout_seconds=self.timeout_seconds,
            )
            found = self.client.request_tool_approval(self.run_id, request)
            view = self.client.wait_tool_approval(self.run_id, found.interaction_id, wait_seconds=self.wait_seconds)
            if view.status == "pending":
                self._interrupt(event, view)
        self._apply(event, call, view)

    def _interrupt(self, event: BeforeToolCallEvent, view: ToolApprovalView) -> None:
        reason: dict[str, Any] = {"baton_run": self.run_id, "interaction_id": view.interaction_id}
        reason |= {"tool": view.tool, "arguments": view.arguments, "digest": view.digest}
        try:
            event.interrupt(INTERRUPT_NAME, reason=reason)
        except InterruptException as pause:
            asked = _asked(event.agent)
            asked[event.tool_use["toolUseId"]] = {
                "interaction_id": view.interaction_id,
                "interrupt_id": pause.interrupt.id,
            }
            event.agent.state.set(STATE_KEY, asked)
            raise

    def _apply(self, event: BeforeToolCallEvent, call: ToolCall, view: ToolApprovalView) -> None:
        decision = view.decision
        if view.status == "pending":
            event.cancel_tool = (
                f"A person has not yet decided on this {call.tool} call (Baton approval {view.interaction_id}); "
                "it was not run."
            )
        elif view.status != "answered" or decision is None:
            event.cancel_tool = f"The approval {view.interaction_id} is {view.status}: the call was not run."
        elif decision.decision == "deny":
            by = "Baton's deadline default" if decision.outcome == "timed_out_default" else decision.decided_by
            event.cancel_tool = f"Denied by {by or 'a person'}: {decision.reason or 'no reason given'}"
        elif decision.decision == "edit" and call.digest != view.digest:
            event.cancel_tool = f"This {call.tool} call is not the one approval {view.interaction_id} was asked for."
        else:
            # Approve: the digest of the call as it stands (the server refuses a changed one). Edit: the
            # person's arguments, which then replace the call's.
            runs = call.with_arguments(decision.arguments) if decision.decision == "edit" else call
            allowed = self.client.consume_tool_approval(self.run_id, view.interaction_id, runs.digest)
            event.tool_use["input"] = allowed.arguments


def _asked(agent: Any) -> dict[str, dict[str, str]]:
    asked = agent.state.get(STATE_KEY)
    return dict(asked) if isinstance(asked, dict) else {}


def _forget(agent: Any, tool_use_id: str) -> None:
    asked = _asked(agent)
    asked.pop(tool_use_id, None)
    agent.state.set(STATE_KEY, asked)


def _schema(event: BeforeToolCallEvent) -> dict[str, Any] | None:
    """The tool's argument JSON Schema (an edit is validated against it), when Strands knows the tool."""
    if event.selected_tool is None:
        return None
    schema = event.selected_tool.tool_spec.get("inputSchema", {}).get("json")
    return dict(schema) if isinstance(schema, dict) else None


def _node_name(agent_name: str) -> str:
    """The agent's name as a Baton node name (letters, digits, `_.:-`, starting with a letter or digit)."""
    cleaned = "".join(c if c.isascii() and (c.isalnum() or c in "_.:-") else "_" for c in agent_name)[:80]
    return cleaned if cleaned[:1].isalnum() else "agent"
