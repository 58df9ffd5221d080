"""The OpenAI Agents SDK's tool approvals answered through Baton (issue 30): `pip install 'baton[openai-agents]'`.

Declare the tools that need a person with the SDK's own `needs_approval` (True, or its per-call function),
then run the agent through `BatonApprovals.run` instead of `Runner.run`. When the run stops with
interruptions, each becomes a Baton tool approval (a repeat of the same call finds the same approval), and
the serialised `RunState` is saved with the approvals' ids, so the process can exit. `resume` (in this
process or a new one) loads it and, once every approval is decided, applies the decisions and continues:

- approve: the approval is consumed with the digest of the call in the saved state, right before the run
  goes on to run it (single use; a changed call is refused and rejected), then `RunState.approve`;
- deny, or the deadline's default: `RunState.reject` with the reason, which the model sees;
- edit: rejected, telling the model the edited arguments (this SDK runs only the call the model made);
- anything else (cancelled, an error reaching Baton, a refused consume): rejected. An unanswered approval
  never lets the tool run: `resume` returns `paused` and leaves the state as it was.

The state is kept in a file the caller names (`state_path`, written atomically, mode 0600): Baton's tool
approvals have no field for an agent's opaque state yet. It holds the conversation: keep it private.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agents import FunctionTool, Runner, RunState

from baton.contracts.tool_approvals import ToolApprovalRequest, ToolApprovalView
from baton.domain.tool_calls import Risk, ToolCall

if TYPE_CHECKING:
    from agents import Agent, ToolApprovalItem

    from baton.client.tool_approvals import ToolApprovalCalls

STATE_FORMAT = 1


class NothingToResumeError(Exception):
    """`resume` found no saved run at the state path (never paused, or already finished)."""


@dataclass(frozen=True)
class Outcome:
    """How far the run got. `paused`: waiting on `approvals` (their Baton ids); call `resume` later.
    `finished`: the run's `final_output`; the saved state is removed."""

    status: Literal["paused", "finished"]
    final_output: Any = None
    approvals: tuple[str, ...] = field(default=())


def edit_refused(arguments: dict[str, Any]) -> str:
    shown = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
    return (
        "A person edited this call's arguments, but this agent can only run the call as it was made, so it "
        f"was not run. The arguments the person approved: {shown}. Call the tool again with them if you still "
        "need it (that call needs its own approval)."
    )


@dataclass(frozen=True)
class AskSettings:
    """How each approval is asked: its session (a session grant's scope), deadline (then denied), risk and
    asking agent's label; `wait_seconds`: how long this process long-polls pending approvals before pausing."""

    session: str | None = None
    timeout_seconds: int = 3600
    risk: Risk = "medium"
    agent_label: str = "openai-agents"
    wait_seconds: float = 0


class BatonApprovals:
    """Runs an agent whose tool approvals a person answers through Baton (see the module's docstring)."""

    def __init__(
        self, client: ToolApprovalCalls, run_id: str, state_path: str | Path, settings: AskSettings | None = None
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.state_path = Path(state_path)
        self.settings = settings or AskSettings()

    async def run(self, agent: Agent[Any], input: str | list[Any], **run_options: Any) -> Outcome:
        """`Runner.run(agent, input)`, pausing in Baton at each tool call that needs approval."""
        result = await Runner.run(agent, input, **run_options)
        if not result.interruptions:
            self._clear()
            return Outcome("finished", result.final_output)
        return await self._drive(agent, result.to_state(), {}, run_options)

    async def resume(self, agent: Agent[Any], **run_options: Any) -> Outcome:
        """Continue the saved run once its approvals are decided (`paused` while any is pending)."""
        try:
            saved = json.loads(self.state_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise NothingToResumeError(f"no paused run is saved at {self.state_path}") from None
        state = await RunState.from_string(agent, saved["run_state"])
        if not state.get_interruptions():
            raise NothingToResumeError(f"the run saved at {self.state_path} waits on no approval")
        return await self._drive(agent, state, dict(saved["approvals"]), run_options)

    def run_sync(self, agent: Agent[Any], input: str | list[Any], **run_options: Any) -> Outcome:
        return asyncio.run(self.run(agent, input, **run_options))

    def resume_sync(self, agent: Agent[Any], **run_options: Any) -> Outcome:
        return asyncio.run(self.resume(agent, **run_options))

    async def _drive(
        self, agent: Agent[Any], state: RunState[Any, Any], approvals: dict[str, str], run_options: dict[str, Any]
    ) -> Outcome:
        final_output: Any = None  # the caller passes a state with interruptions: the loop runs at least once
        while items := state.get_interruptions():
            views = [self._approval(item, approvals) for item in items]
            self._save(state, approvals)  # durable from here on: the process may exit while a person decides
            views = self._waited(views)
            pending = [v.interaction_id for v in views if isinstance(v, ToolApprovalView) and v.status == "pending"]
            if pending:
                return Outcome("paused", approvals=tuple(pending))
            for item, view in zip(items, views, strict=True):
                self._decide(state, item, view)
            result = await Runner.run(agent, state, **run_options)
            state, final_output, approvals = result.to_state(), result.final_output, {}
        self._clear()
        return Outcome("finished", final_output)

    def _approval(self, item: ToolApprovalItem, approvals: dict[str, str]) -> ToolApprovalView | Exception:
        """The Baton approval of this interruption: the one saved for it, else asked (a repeat finds it)."""
        try:
            call_id = _call_id(item)
            if call_id in approvals:
                return self.client.get_tool_approval(self.run_id, approvals[call_id])
            request = ToolApprovalRequest(
                call=tool_call(item),
                risk=self.settings.risk,
                reason=f"The agent {item.agent.name} wants to run {item.tool_name}",
                agent=self.settings.agent_label,
                session=self.settings.session,
                timeout_seconds=self.settings.timeout_seconds,
            )
            view = self.client.request_tool_approval(self.run_id, request)
            approvals[call_id] = view.interaction_id
            return view
        except Exception as err:  # decided below as a rejection: the tool never runs on an error
            return err

    def _waited(self, views: list[ToolApprovalView | Exception]) -> list[ToolApprovalView | Exception]:
        """The views after waiting up to `wait_seconds` in all for the pending ones to be decided."""
        until = time.monotonic() + self.settings.wait_seconds
        waited: list[ToolApprovalView | Exception] = []
        for view in views:
            if isinstance(view, ToolApprovalView) and view.status == "pending" and until - time.monotonic() >= 1:
                try:
                    view = self.client.wait_tool_approval(
                        self.run_id, view.interaction_id, wait_seconds=until - time.monotonic()
                    )
                except Exception as err:
                    view = err
            waited.append(view)
        return waited

    def _decide(self, state: RunState[Any, Any], item: ToolApprovalItem, view: ToolApprovalView | Exception) -> None:
        if isinstance(view, Exception):
            state.reject(item, rejection_message=f"Baton could not approve this tool call ({view}); it was not run.")
            return
        decision = view.decision
        if view.status != "answered" or decision is None:
            state.reject(item, rejection_message=f"The approval {view.interaction_id} is {view.status}: not run.")
        elif decision.decision == "deny":
            state.reject(item, rejection_message=decision.reason or "A person denied this tool call.")
        elif decision.decision == "edit":
            state.reject(item, rejection_message=edit_refused(decision.arguments))
        else:
            try:  # bound to the call in this state, the one the run goes on to execute
                self.client.consume_tool_approval(self.run_id, view.interaction_id, tool_call(item).digest)
            except Exception as err:
                state.reject(item, rejection_message=f"Baton refused to let this call run ({err}); it was not run.")
                return
            state.approve(item)

    def _save(self, state: RunState[Any, Any], approvals: dict[str, str]) -> None:
        saved = {"format": STATE_FORMAT, "run_id": self.run_id, "approvals": approvals, "run_state": state.to_string()}
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.state_path.parent, prefix=f".{self.state_path.name}.")
        try:  # mkstemp's file is 0600; the rename makes a crash leave the old state or the new, never half
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(saved, out)
            Path(tmp).replace(self.state_path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _clear(self) -> None:
        self.state_path.unlink(missing_ok=True)


def _call_id(item: ToolApprovalItem) -> str:
    call_id = item.call_id
    if not call_id:
        raise ValueError(f"the {item.tool_name} call has no call id")
    return call_id


def tool_call(item: ToolApprovalItem) -> ToolCall:
    """The call an interruption will run, as Baton digests it: the tool, its arguments, its JSON Schema."""
    arguments = json.loads(item.arguments or "{}")
    if not isinstance(arguments, dict) or not item.tool_name:
        raise ValueError(f"the {item.tool_name} call's arguments are not a JSON object")
    schema = next(
        (t.params_json_schema for t in item.agent.tools if isinstance(t, FunctionTool) and t.name == item.tool_name),
        None,
    )
    return ToolCall(tool=item.tool_name, arguments=arguments, arguments_schema=schema)
