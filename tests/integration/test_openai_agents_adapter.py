"""baton.integrations.openai_agents on the real OpenAI Agents SDK, driven by its own offline model
(agents.testing.ScriptedModel), against the resolver on moto through the SDK client (an httpx
MockTransport, as tests/unit/test_claude_code_hook.py). Each "process" is a fresh agent, model and
adapter sharing nothing but the run id and Baton, where the paused run is kept by default (or a state
file, the option): kill-and-resume runs the approved tool once, a denial's reason reaches the model, an
edit is refused, the deadline denies, a changed call is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from agents import Agent, ModelBehaviorError, RunConfig, RunContextWrapper, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from baton.api import deps
from baton.api.auth import agent_token
from baton.client.sdk import Client
from baton.errors import ConflictError
from baton.integrations.openai_agents import (
    AskSettings,
    BatonApprovals,
    NothingToResumeError,
    Outcome,
    state_key,
)
from tests.integration.resolver import ResolverOnMoto

if TYPE_CHECKING:
    from agents.testing import ModelCall

    from tests.integration.conftest import MotoStack

TOKEN = "local-secret"
RUN = "agents-1"
CALL = {"path": "notes.md", "text": "hello"}
OFFLINE = RunConfig(tracing_disabled=True)  # the SDK's traces go to OpenAI's servers: none here
IN_BATON = None  # the adapter's default: the paused run is kept in Baton with the run
KEY = state_key("s1")


class Api(ResolverOnMoto):
    """The resolver on moto, what the SDK client's requests reach, and a person answering."""

    def __init__(self, stack: MotoStack) -> None:
        super().__init__(stack)
        self.sent: list[tuple[str, str]] = []
        self.on_long_poll: list[dict[str, Any]] = []  # answers a person gives when the adapter waits

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode()
        self.sent.append((request.method, path.split("?")[0]))
        if request.method == "GET" and "waitSeconds=" in path and self.on_long_poll:
            self.answer(path.split("?")[0].rsplit("/", 1)[1], self.on_long_poll.pop(0))
        return self.dispatch(request)

    def client(self) -> Client:
        return Client("http://baton.test", agent_token(TOKEN, RUN), transport=httpx.MockTransport(self.handle))

    def answer(self, approval_id: str, answer: dict[str, Any]) -> None:
        status, body = self.call("POST", f"/api/runs/{RUN}/interactions/{approval_id}/answer", {"answer": answer})
        assert status == 200, body

    def approvals(self) -> list[Any]:
        return self.core.store.list_run_interactions(RUN, kind="tool_approval")

    def saved(self, state: Path | None) -> bool:
        """Whether a paused run is kept: in Baton (`state` None) or in the file."""
        return self.core.store.get_agent_state(RUN, KEY) is not None if state is None else state.exists()


@pytest.fixture
def api(moto_stack: MotoStack) -> Iterator[Api]:
    yield Api(moto_stack)
    deps.set_services_provider(deps._default_provider)


class Process:
    """One agent process: its own tool, model and adapter; only Baton (and a state file, if named) outlive it."""

    def __init__(
        self, api: Api, state: Path | None, *steps: Any, tool: str = "Write text to a file.", wait_seconds: float = 0
    ) -> None:
        self.written: list[dict[str, str]] = []

        def write_file(path: str, text: str) -> str:
            self.written.append({"path": path, "text": text})
            return f"wrote {len(text)} characters to {path}"

        write_file.__doc__ = tool  # its argument docs are part of the tool's schema, so of the call's digest
        self.model = ScriptedModel(steps)
        tools = [function_tool(write_file, needs_approval=True)]
        self.agent = Agent(name="writer", instructions="Write files.", tools=tools, model=self.model)
        self.baton = BatonApprovals(
            api.client(), RUN, state, AskSettings(session="s1", timeout_seconds=60, wait_seconds=wait_seconds)
        )

    def start(self) -> Outcome:
        return self.baton.run_sync(self.agent, "save my notes", run_config=OFFLINE)

    def resume(self) -> Outcome:
        return self.baton.resume_sync(self.agent, run_config=OFFLINE)


def asks_to_write(arguments: dict[str, str] = CALL) -> list[Any]:
    return [function_call("write_file", arguments, call_id="call_1")]


def tool_output_seen(call: ModelCall) -> str:
    """What the model was told the tool call gave (its output, or the rejection)."""
    outputs = [i for i in call.input if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert outputs, call.input
    return str(outputs[-1]["output"])


def paused_on_one_approval(api: Api, state: Path | None, *, arguments: dict[str, str] = CALL) -> str:
    """Process 1: runs until the approval is pending, saves its state and exits."""
    first = Process(api, state, asks_to_write(arguments))
    outcome = first.start()
    assert outcome.status == "paused" and first.written == [] and api.saved(state)
    [approval] = api.approvals()
    assert outcome.approvals == (approval.interaction_id,) and approval.state.status == "pending"
    assert approval.request.tool.call.arguments == arguments and approval.request.tool.session == "s1"
    return str(approval.interaction_id)


@pytest.mark.parametrize("in_file", [False, True], ids=["kept-in-baton", "state-file"])
def test_kill_and_resume_runs_the_approved_tool_once(api: Api, tmp_path: Path, in_file: bool) -> None:
    state = tmp_path / "run.json" if in_file else IN_BATON
    approval = paused_on_one_approval(api, state)
    if state is None:  # process 2 has only the run id: the run, its approvals and its conversation are in Baton
        assert not any(tmp_path.iterdir())
        assert api.core.store.get_agent_state(RUN, KEY) is not None
    else:
        assert state.stat().st_mode & 0o077 == 0  # the conversation is in it: private
        assert api.core.store.get_agent_state(RUN, KEY) is None
    still = Process(api, state)  # a restart before anyone answers: nothing runs, nothing is asked again
    assert still.resume() == Outcome("paused", approvals=(approval,)) and still.written == []
    assert len(api.approvals()) == 1

    api.answer(approval, {"decision": "approve", "reason": "fine"})
    second = Process(api, state, [assistant_message("Saved.")])
    assert second.resume() == Outcome("finished", "Saved.")
    assert second.written == [CALL]  # once, with the approved arguments
    assert tool_output_seen(second.model.calls[0]) == "wrote 5 characters to notes.md"
    assert ("POST", f"/api/runs/{RUN}/tool-approvals/{approval}/consume") in api.sent
    [used] = api.approvals()
    assert used.state.reason == "consumed" and len(api.approvals()) == 1
    assert not api.saved(state)
    with pytest.raises(NothingToResumeError):
        Process(api, state).resume()


def test_answered_while_this_process_waits_the_run_goes_on_at_once(api: Api) -> None:
    state = IN_BATON
    api.on_long_poll.append({"decision": "approve"})
    one = Process(api, state, asks_to_write(), [assistant_message("Saved.")], wait_seconds=5)
    assert one.start() == Outcome("finished", "Saved.")
    assert one.written == [CALL] and not api.saved(state)
    [used] = api.approvals()
    assert used.state.reason == "consumed"


def test_a_crash_after_the_tool_ran_never_runs_it_again(api: Api) -> None:
    state = IN_BATON
    approval = paused_on_one_approval(api, state)
    api.answer(approval, {"decision": "approve"})
    second = Process(api, state, RuntimeError("the model's service is down"))
    with pytest.raises(RuntimeError):  # the tool ran, then the run died before its state was saved again
        second.resume()
    assert second.written == [CALL] and api.saved(state)
    third = Process(api, state, [assistant_message("ok")])
    assert third.resume().status == "finished" and third.written == []  # the approval was used: single use
    assert "already used" in tool_output_seen(third.model.calls[0])


def test_a_repeat_of_the_same_call_finds_the_same_approval(api: Api) -> None:
    approval = paused_on_one_approval(api, IN_BATON)
    again = Process(api, IN_BATON, asks_to_write())  # the run started over: the same call
    assert again.start() == Outcome("paused", approvals=(approval,))
    assert len(api.approvals()) == 1


def test_a_denial_never_runs_the_tool_and_the_model_sees_the_reason(api: Api) -> None:
    state = IN_BATON
    approval = paused_on_one_approval(api, state)
    api.answer(approval, {"decision": "deny", "reason": "not the shared notes"})
    second = Process(api, state, [assistant_message("I did not save them.")])
    assert second.resume() == Outcome("finished", "I did not save them.")
    assert second.written == []
    assert tool_output_seen(second.model.calls[0]) == "not the shared notes"
    assert not any(path.endswith("/consume") for _, path in api.sent)


def test_an_edit_is_refused_with_a_clear_message_and_never_runs(api: Api) -> None:
    state = IN_BATON
    approval = paused_on_one_approval(api, state)
    edited = {"path": "safe.md", "text": "hello"}
    api.answer(approval, {"decision": "edit", "arguments": edited})
    second = Process(api, state, [assistant_message("ok")])
    assert second.resume().status == "finished" and second.written == []
    seen = tool_output_seen(second.model.calls[0])
    assert "edited" in seen and "not run" in seen and '"path": "safe.md"' in seen
    assert not any(path.endswith("/consume") for _, path in api.sent)


def test_unanswered_at_the_deadline_the_tool_never_runs(api: Api) -> None:
    state = IN_BATON
    paused_on_one_approval(api, state)
    api.clock.advance(61)
    second = Process(api, state, [assistant_message("Nobody answered.")])
    assert second.resume() == Outcome("finished", "Nobody answered.")
    assert second.written == []
    assert "nobody answered by the deadline" in tool_output_seen(second.model.calls[0])
    [approval] = api.approvals()
    assert approval.state.outcome == "timed_out_default"


def test_a_changed_call_is_refused_by_the_digest_and_never_runs(api: Api) -> None:
    state = IN_BATON
    approval = paused_on_one_approval(api, state)
    api.answer(approval, {"decision": "approve"})
    # Process 2 runs a changed tool (its schema says more): the call about to run is not the approved one.
    changed = "Write text to a file.\n\nArgs:\n    path: anywhere on the disk.\n    text: the text."
    second = Process(api, state, [assistant_message("refused")], tool=changed)
    assert second.resume().status == "finished" and second.written == []
    seen = tool_output_seen(second.model.calls[0])
    assert "refused to let this call run" in seen and "approved another call" in seen
    assert ("POST", f"/api/runs/{RUN}/tool-approvals/{approval}/consume") in api.sent
    [unused] = api.approvals()
    assert unused.state.reason != "consumed"  # still unused: it approved another call


def test_a_call_changed_in_the_saved_state_never_runs(api: Api) -> None:
    state = IN_BATON
    approval = paused_on_one_approval(api, state)
    api.answer(approval, {"decision": "approve"})
    kept = api.core.store.get_agent_state(RUN, KEY)
    assert kept is not None  # edited where it is kept, after the approval
    changed = kept.state.replace("notes.md", "/etc/passwd")
    api.core.store.put_agent_state(RUN, KEY, changed, expected_version=kept.version, at=api.core.now())
    second = Process(api, state, [assistant_message("refused")])
    with pytest.raises(ModelBehaviorError):  # Baton refused the consume, and the SDK the changed call
        second.resume()
    assert second.written == []
    assert ("POST", f"/api/runs/{RUN}/tool-approvals/{approval}/consume") in api.sent
    [unused] = api.approvals()
    assert unused.state.reason != "consumed"


def test_an_error_reaching_baton_denies(api: Api, tmp_path: Path) -> None:
    state = tmp_path / "run.json"  # the state file: the paused run loads although Baton is unreachable
    approval = paused_on_one_approval(api, state)
    api.answer(approval, {"decision": "approve"})
    second = Process(api, state, [assistant_message("failed")])

    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("no route to Baton", request=request)

    second.baton.client = Client("http://baton.test", "t", transport=httpx.MockTransport(unreachable))
    assert second.resume().status == "finished" and second.written == []
    assert "could not approve" in tool_output_seen(second.model.calls[0])


def test_a_needs_approval_function_still_decides_which_calls_ask(api: Api, tmp_path: Path) -> None:
    async def only_outside_tmp(_ctx: RunContextWrapper[Any], params: dict[str, Any], _call_id: str) -> bool:
        return not str(params["path"]).startswith("/tmp/")

    ran: list[str] = []

    @function_tool(needs_approval=only_outside_tmp)
    def write_file(path: str, text: str) -> str:
        """Write text to a file."""
        ran.append(path)
        return "ok"

    model = ScriptedModel(
        [asks_to_write({"path": "/tmp/x", "text": "t"}), [assistant_message("done")]],
    )
    agent = Agent(name="writer", tools=[write_file], model=model)
    outcome = BatonApprovals(api.client(), RUN).run_sync(agent, "go", run_config=OFFLINE)
    assert outcome == Outcome("finished", "done") and ran == ["/tmp/x"] and api.approvals() == []


def test_two_processes_resuming_one_run_cannot_both_go_on(api: Api) -> None:
    """Each write of the kept state names the version its process read: the slower one's is refused."""
    approval = paused_on_one_approval(api, IN_BATON)
    first, second = Process(api, IN_BATON), Process(api, IN_BATON)
    assert first.baton.paused() and second.baton.paused()  # both read the same version
    assert first.resume() == Outcome("paused", approvals=(approval,))  # it wrote the state again
    with pytest.raises(ConflictError) as refused:
        second.baton.state.save({"format": 1, "run_id": RUN, "approvals": {}, "run_state": "{}"})
    assert refused.value.details["version"] == 2  # 1: the pause, 2: the first resume
    assert first.baton.paused() and second.written == []


def test_a_session_outside_the_keys_alphabet_is_kept_under_its_digest() -> None:
    assert state_key(None) == "openai-agents" and state_key("s1") == "openai-agents.s1"
    assert state_key("user@example.com/42").startswith("openai-agents.") and "@" not in state_key("user@x")
    assert state_key("a b") != state_key("a c")
