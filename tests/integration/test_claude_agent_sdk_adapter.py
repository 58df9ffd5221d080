"""The Claude Agent SDK adapter (baton/integrations/claude_agent_sdk.py): its `can_use_tool` callback called
as the SDK calls it, with the package's own types, through the SDK client into the real resolver on moto
(an httpx MockTransport); a person answers when the callback's first long-poll arrives. Approve and edit
allow (the edit with `updated_input`) only after consuming the approval of that exact input; a denial,
a wait that ends first, the deadline's default and an unreachable Baton deny with the reason."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny, ToolPermissionContext

from baton.api import deps
from baton.api.auth import agent_token
from baton.client.sdk import Client
from baton.domain.tool_calls import ToolCall
from baton.integrations.claude_agent_sdk import baton_can_use_tool
from tests.integration.resolver import ResolverOnMoto

if TYPE_CHECKING:
    from claude_agent_sdk import PermissionResult

    from baton.models import Interaction
    from tests.integration.conftest import MotoStack

TOKEN = "local-secret"
RUN = "agent-sdk-1"
COMMAND = {"command": "rm -rf build/", "description": "Remove the build directory"}


class Api(ResolverOnMoto):
    """The resolver on moto, served to the SDK, and a person answering at the callback's first long-poll."""

    def __init__(self, stack: MotoStack) -> None:
        super().__init__(stack)
        self.client = Client("http://baton.test", agent_token(TOKEN, RUN), transport=httpx.MockTransport(self.handle))
        self.on_first_poll: list[Callable[[str], None]] = []  # given the approval's id

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode()
        if request.method == "GET" and "/tool-approvals/" in path:
            while self.on_first_poll:
                self.on_first_poll.pop(0)(path.split("?")[0].rsplit("/", 1)[1])
        return self.dispatch(request)

    def answers(self, answer: dict[str, Any]) -> Callable[[str], None]:
        def answer_it(approval_id: str) -> None:
            status, body = self.call("POST", f"/api/runs/{RUN}/interactions/{approval_id}/answer", {"answer": answer})
            assert status == 200, body

        return answer_it

    def approvals(self) -> list[Interaction]:
        return self.core.store.list_run_interactions(RUN, kind="tool_approval")


@pytest.fixture
def api(moto_stack: MotoStack) -> Iterator[Api]:
    yield Api(moto_stack)
    deps.set_services_provider(deps._default_provider)


def ask(client: Client, wait_seconds: float = 5, **kwargs: Any) -> PermissionResult:
    callback = baton_can_use_tool(client, RUN, wait_seconds=wait_seconds, **kwargs)

    async def as_the_sdk_calls_it() -> PermissionResult:
        return await callback("Bash", dict(COMMAND), ToolPermissionContext(tool_use_id="toolu_01ABC"))

    return asyncio.run(as_the_sdk_calls_it())


def test_approved_is_allow_after_consuming_the_approval_of_this_exact_input(api: Api) -> None:
    api.on_first_poll.append(api.answers({"decision": "approve"}))
    assert ask(api.client) == PermissionResultAllow(updated_input=None)
    [approval] = api.approvals()
    assert approval.state.reason == "consumed"
    assert approval.state.answer["digest"] == ToolCall(tool="Bash", arguments=COMMAND).digest


def test_an_edit_is_allow_with_the_updated_input_it_consumed(api: Api) -> None:
    edited = {"command": "rm -rf build/tmp", "description": "Remove only the temp dir"}
    api.on_first_poll.append(api.answers({"decision": "edit", "arguments": edited}))
    assert ask(api.client) == PermissionResultAllow(updated_input=edited)
    [approval] = api.approvals()
    assert approval.state.reason == "consumed"
    assert approval.state.answer["digest"] == ToolCall(tool="Bash", arguments=edited).digest


def test_a_denial_is_deny_with_the_persons_reason(api: Api) -> None:
    api.on_first_poll.append(api.answers({"decision": "deny", "reason": "not on the shared box"}))
    assert ask(api.client) == PermissionResultDeny(message="not on the shared box")
    [approval] = api.approvals()
    assert approval.state.reason != "consumed"


def test_still_pending_when_the_wait_ends_is_deny_and_a_repeat_finds_the_same_approval(api: Api) -> None:
    denied = ask(api.client, wait_seconds=0)
    assert isinstance(denied, PermissionResultDeny) and "has not yet decided" in denied.message
    api.on_first_poll.append(api.answers({"decision": "approve"}))
    assert ask(api.client) == PermissionResultAllow(updated_input=None)
    assert len(api.approvals()) == 1


def test_unanswered_at_the_deadline_is_deny(api: Api) -> None:
    assert isinstance(ask(api.client, wait_seconds=0, timeout_seconds=60), PermissionResultDeny)
    api.clock.advance(61)
    denied = ask(api.client, wait_seconds=0, timeout_seconds=60)
    assert isinstance(denied, PermissionResultDeny) and "nobody answered by the deadline" in denied.message


def test_an_unreachable_baton_is_deny() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client = Client("http://baton.test", "t", transport=httpx.MockTransport(refuse))
    denied = ask(client)
    assert isinstance(denied, PermissionResultDeny) and "could not approve" in denied.message
