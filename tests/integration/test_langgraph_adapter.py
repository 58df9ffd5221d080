"""The LangGraph adapter (baton/integrations/langgraph.py) against the real packages: a `create_agent`
graph with LangChain's `HumanInTheLoopMiddleware`, a fake chat model that calls a real tool recording its
runs, and the SQLite checkpointer in a file. Baton is the real resolver on moto, reached by the SDK
through an httpx MockTransport; a person answers through the API. Each "process" is a fresh graph, model
and checkpointer connection: the first runs to the interrupt and posts the approval, the second resumes
from the checkpoint. Approve and edit run the tool once with the approved arguments; a denial and the
deadline's default never run it (the model reads the reason); a call changed since its approval is
refused."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver

from baton.api import deps
from baton.api.auth import agent_token
from baton.client.sdk import Client
from baton.errors import ConflictError
from baton.integrations.langgraph import Approval, approvals_for, resume_value, resume_when_answered
from tests.integration.resolver import ResolverOnMoto

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from tests.integration.conftest import MotoStack

TOKEN = "local-secret"
RUN = "lg-thread-1"
CALL = {"path": "notes.md", "text": "hello"}
MODES = ["batched", "per_call"]


class ToolCallingModel(GenericFakeChatModel):
    """The fake chat model, given tools as a real one is (it answers from its scripted messages)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingModel:
        return self


class Api(ResolverOnMoto):
    """The resolver on moto, served to the SDK, and a person answering through it."""

    def __init__(self, stack: MotoStack) -> None:
        super().__init__(stack)
        self.client = Client("http://baton.test", agent_token(TOKEN, RUN), transport=httpx.MockTransport(self.handle))
        self.sent: list[str] = []  # the SDK's calls, "METHOD path" (no query)

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode()
        self.sent.append(f"{request.method} {path.split('?')[0]}")
        return self.dispatch(request)

    def answer(self, approval_id: str, answer: dict[str, Any]) -> None:
        status, body = self.call("POST", f"/api/runs/{RUN}/interactions/{approval_id}/answer", {"answer": answer})
        assert status == 200, body


class Agent:
    """One process's agent: a fresh model, tool and checkpointer connection over the same SQLite file."""

    def __init__(self, db: Path, mode: str, replies: list[AIMessage], runs: list[dict[str, Any]]) -> None:
        @tool
        def write_file(path: str, text: str) -> str:
            """Write text to a file."""
            runs.append({"path": path, "text": text})
            return f"wrote {len(text)} characters to {path}"

        self.connection = sqlite3.connect(db, check_same_thread=False)
        self.graph = create_agent(
            ToolCallingModel(messages=iter(replies)),
            tools=[write_file],
            middleware=[HumanInTheLoopMiddleware(interrupt_on={"write_file": True}, interrupt_mode=mode)],  # type: ignore[arg-type]
            checkpointer=SqliteSaver(self.connection),
        )
        self.config: RunnableConfig = {"configurable": {"thread_id": RUN}}

    def close(self) -> None:
        self.connection.close()


def wants_to_write(arguments: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "write_file", "args": arguments, "id": "call_1"}])


@pytest.fixture
def api(moto_stack: MotoStack) -> Iterator[Api]:
    yield Api(moto_stack)
    deps.set_services_provider(deps._default_provider)


def first_process(api: Api, db: Path, mode: str, arguments: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    """Runs to the interrupt, posts the approval, finds nobody has answered yet, and stops: the approval's id."""
    agent = Agent(db, mode, [wants_to_write(arguments)], runs)
    try:
        paused = agent.graph.invoke({"messages": [{"role": "user", "content": "save my notes"}]}, agent.config)
        assert paused["__interrupt__"], paused
        assert resume_when_answered(agent.graph, agent.config, api.client, RUN, wait_seconds=0) is None
        [approval] = approvals_for(api.client, RUN, agent.graph.get_state(agent.config).interrupts)
    finally:
        agent.close()
    assert approval.view.status == "pending" and approval.view.tool == "write_file"
    return approval.view.interaction_id


def second_process(api: Api, db: Path, mode: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    agent = Agent(db, mode, [AIMessage(content="done")], runs)
    try:
        resumed = resume_when_answered(agent.graph, agent.config, api.client, RUN, wait_seconds=0)
        assert resumed is not None and "__interrupt__" not in resumed, resumed
        assert agent.graph.get_state(agent.config).interrupts == ()
        return dict(resumed)
    finally:
        agent.close()


def asked_approvals(api: Api) -> list[str]:
    """The ids of the tool approvals the run asked (a repeat that found one asked nothing)."""
    events = api.client.events(RUN).events
    return [str(e.data["interaction_id"]) for e in events if e.type == "human_input_requested"]


def tool_results(state: dict[str, Any]) -> list[str]:
    return [str(m.content) for m in state["messages"] if isinstance(m, ToolMessage)]


@pytest.mark.parametrize("mode", MODES)
def test_killed_after_asking_the_resumed_process_runs_the_approved_call_once(
    api: Api, tmp_path: Path, mode: str
) -> None:
    runs: list[dict[str, Any]] = []
    approval_id = first_process(api, tmp_path / "checkpoints.sqlite", mode, CALL, runs)
    assert runs == []
    api.answer(approval_id, {"decision": "approve", "reason": "notes are fine"})
    api.sent.clear()
    done = second_process(api, tmp_path / "checkpoints.sqlite", mode, runs)
    assert api.sent == [  # the run's events find the answered approval: no second ask
        f"GET /api/runs/{RUN}/events",
        f"GET /api/runs/{RUN}/tool-approvals/{approval_id}",
        f"POST /api/runs/{RUN}/tool-approvals/{approval_id}/consume",
    ]
    assert runs == [CALL]
    assert tool_results(done) == ["wrote 5 characters to notes.md"]
    assert asked_approvals(api) == [approval_id]  # the second process found the first one's approval
    view = api.client.get_tool_approval(RUN, approval_id)
    assert view.consumed and view.decision is not None and view.decision.decision == "approve"


@pytest.mark.parametrize("mode", MODES)
def test_an_edit_runs_the_edited_arguments_once(api: Api, tmp_path: Path, mode: str) -> None:
    runs: list[dict[str, Any]] = []
    approval_id = first_process(api, tmp_path / "checkpoints.sqlite", mode, CALL, runs)
    edited = {"path": "drafts/notes.md", "text": "hello"}
    api.answer(approval_id, {"decision": "edit", "arguments": edited})
    done = second_process(api, tmp_path / "checkpoints.sqlite", mode, runs)
    assert runs == [edited]
    [result] = tool_results(done)
    assert "a human reviewer replaced this tool call" in result and "drafts/notes.md" in result
    assert api.client.get_tool_approval(RUN, approval_id).consumed


@pytest.mark.parametrize("mode", MODES)
def test_a_denial_never_runs_the_tool_and_the_model_reads_the_reason(api: Api, tmp_path: Path, mode: str) -> None:
    runs: list[dict[str, Any]] = []
    db = tmp_path / "checkpoints.sqlite"
    agent = Agent(db, mode, [wants_to_write(CALL), AIMessage(content="ok, not saving")], runs)
    agent.graph.invoke({"messages": [{"role": "user", "content": "save my notes"}]}, agent.config)
    [asked] = approvals_for(api.client, RUN, agent.graph.get_state(agent.config).interrupts)
    api.answer(asked.view.interaction_id, {"decision": "deny", "reason": "notes.md is shared, use your own file"})
    done = resume_when_answered(agent.graph, agent.config, api.client, RUN, wait_seconds=0)
    agent.close()
    assert runs == []
    assert done is not None and done["messages"][-1].content == "ok, not saving"
    [result] = tool_results(done)
    assert "notes.md is shared, use your own file" in result
    assert not api.client.get_tool_approval(RUN, asked.view.interaction_id).consumed
    assert asked_approvals(api) == [asked.view.interaction_id]  # the denied one was found, not asked again


def test_unanswered_at_the_deadline_the_tool_never_runs(api: Api, tmp_path: Path) -> None:
    runs: list[dict[str, Any]] = []
    db = tmp_path / "checkpoints.sqlite"
    agent = Agent(db, "batched", [wants_to_write(CALL), AIMessage(content="giving up")], runs)
    agent.graph.invoke({"messages": [{"role": "user", "content": "save my notes"}]}, agent.config)
    kwargs: dict[str, Any] = {"wait_seconds": 0, "timeout_seconds": 60}
    assert resume_when_answered(agent.graph, agent.config, api.client, RUN, **kwargs) is None  # still pending
    api.clock.advance(61)
    done = resume_when_answered(agent.graph, agent.config, api.client, RUN, **kwargs)
    agent.close()
    assert runs == []
    assert done is not None and done["messages"][-1].content == "giving up"
    assert "nobody answered by the deadline" in tool_results(done)[0]
    [approval_id] = asked_approvals(api)
    decided = api.client.get_tool_approval(RUN, approval_id).decision
    assert decided is not None and (decided.decision, decided.outcome) == ("deny", "timed_out_default")


def test_a_call_changed_since_its_approval_is_refused_and_nothing_resumes(api: Api, tmp_path: Path) -> None:
    runs: list[dict[str, Any]] = []
    agent = Agent(tmp_path / "checkpoints.sqlite", "per_call", [wants_to_write(CALL)], runs)
    agent.graph.invoke({"messages": [{"role": "user", "content": "save my notes"}]}, agent.config)
    [asked] = approvals_for(api.client, RUN, agent.graph.get_state(agent.config).interrupts)
    api.answer(asked.view.interaction_id, {"decision": "approve"})
    answered = api.client.get_tool_approval(RUN, asked.view.interaction_id)
    changed = replace(asked.action, arguments={**CALL, "path": "/etc/passwd"})
    with pytest.raises(ConflictError, match="another call"):
        resume_value(api.client, RUN, [Approval(changed, answered)])
    agent.close()
    assert runs == []
    assert not api.client.get_tool_approval(RUN, asked.view.interaction_id).consumed


def test_a_long_call_is_still_asked_its_reason_cut_to_the_limit(api: Api, tmp_path: Path) -> None:
    runs: list[dict[str, Any]] = []
    long_call = {"path": "notes.md", "text": "x" * 3000}  # the middleware's description repeats the arguments
    agent = Agent(tmp_path / "checkpoints.sqlite", "batched", [wants_to_write(long_call)], runs)
    agent.graph.invoke({"messages": [{"role": "user", "content": "save my notes"}]}, agent.config)
    [asked] = approvals_for(api.client, RUN, agent.graph.get_state(agent.config).interrupts)
    agent.close()
    assert asked.view.status == "pending" and asked.view.arguments == long_call
    assert len(asked.view.reason) == 2000 and asked.view.reason.startswith("Tool execution requires approval")
