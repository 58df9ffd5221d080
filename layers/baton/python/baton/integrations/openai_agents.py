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

The state (the SDK's `RunState` and the approvals' ids) is kept in Baton by default, with the run
(`PUT /api/runs/{run}/agent-state/{key}`, the key `openai-agents.<session>`): only the run's own agent and
an operator can read it, so a new process needs nothing but the run id. Each write is conditional on
the version this process read, so two processes resuming one run cannot both go on (a ConflictError).
`state=` a path keeps it in that file instead (written atomically, mode 0600). It holds the
conversation: keep it private.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agents import FunctionTool, Runner, RunState

from baton.contracts.agent_state import AGENT_STATE_KEY_PATTERN
from baton.contracts.tool_approvals import ToolApprovalRequest, ToolApprovalView
from baton.domain.tool_calls import Risk, ToolCall

if TYPE_CHECKING:
    from agents import Agent, ToolApprovalItem

    from baton.client.sdk import Client

STATE_FORMAT = 1


class NothingToResumeError(Exception):
    """`resume` found no saved run (never paused, or already finished)."""


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
        self, client: Client, run_id: str, state: str | Path | None = None, settings: AskSettings | None = None
    ) -> None:
        """`state`: None keeps the paused run in Baton with the run (`state_key`); a path, in that file."""
        self.client = client
        self.run_id = run_id
        self.settings = settings or AskSettings()
        self.state: SavedState = (
            BatonState(self, state_key(self.settings.session)) if state is None else FileState(Path(state))
        )

    def paused(self) -> bool:
        """Whether a paused run is saved (a `resume` has something to continue)."""
        return self.state.load() is not None

    async def run(self, agent: Agent[Any], input: str | list[Any], **run_options: Any) -> Outcome:
        """`Runner.run(agent, input)`, pausing in Baton at each tool call that needs approval."""
        result = await Runner.run(agent, input, **run_options)
        if not result.interruptions:
            self._clear()
            return Outcome("finished", result.final_output)
        return await self._drive(agent, result.to_state(), {}, run_options)

    async def resume(self, agent: Agent[Any], **run_options: Any) -> Outcome:
        """Continue the saved run once its approvals are decided (`paused` while any is pending)."""
        saved = self.state.load()
        if saved is None:
            raise NothingToResumeError(f"no paused run is saved in {self.state.where}")
        state = await RunState.from_string(agent, saved["run_state"])
        if not state.get_interruptions():
            raise NothingToResumeError(f"the run saved in {self.state.where} waits on no approval")
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
        self.state.save(saved)

    def _clear(self) -> None:
        self.state.clear()


def state_key(session: str | None) -> str:
    """The key a run's paused state is kept under in Baton: one per session (a session outside the key's
    alphabet is named by its digest)."""
    if session is None:
        return "openai-agents"
    key = f"openai-agents.{session}"
    if AGENT_STATE_KEY_PATTERN.match(key):
        return key
    return f"openai-agents.{hashlib.sha256(session.encode()).hexdigest()}"


class SavedState(Protocol):
    """Where the paused run is kept between processes."""

    @property
    def where(self) -> str: ...
    def load(self) -> dict[str, Any] | None: ...
    def save(self, saved: dict[str, Any]) -> None: ...
    def clear(self) -> None: ...


class BatonState:
    """Kept in Baton with the run. Each write names the version this process last read or wrote (none
    at a fresh start), so a second process resuming the same run meanwhile makes this one's write a 409."""

    def __init__(self, approvals: BatonApprovals, key: str) -> None:
        self._approvals = approvals  # its client may be replaced after construction: read it at each call
        self.key = key
        self._version: int | None = None

    @property
    def where(self) -> str:
        return f"Baton (run {self._approvals.run_id}, agent state {self.key})"

    def load(self) -> dict[str, Any] | None:
        kept = self._approvals.client.get_agent_state(self._approvals.run_id, self.key)
        if kept is None:
            return None
        self._version = kept.version
        loaded: dict[str, Any] = json.loads(kept.state)
        return loaded

    def save(self, saved: dict[str, Any]) -> None:
        written = self._approvals.client.put_agent_state(
            self._approvals.run_id, self.key, json.dumps(saved), version=self._version
        )
        self._version = written.version

    def clear(self) -> None:
        self._approvals.client.delete_agent_state(self._approvals.run_id, self.key)
        self._version = None


class FileState:
    """Kept in a file the caller names: written atomically, mode 0600."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def where(self) -> str:
        return str(self.path)

    def load(self) -> dict[str, Any] | None:
        try:
            loaded: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        return loaded

    def save(self, saved: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:  # mkstemp's file is 0600; the rename makes a crash leave the old state or the new, never half
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(saved, out)
            Path(tmp).replace(self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


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
