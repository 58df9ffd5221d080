"""A tool approval in the Slack app (issue 30): the call shown as the tool, its risk, the agent's reason and
its command in a code block of bounded length; Approve is a button, Deny opens a modal whose reason is
required (the agent reads it); both answer through the tool approval service, as the API does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from baton.channels.slack.blocks import inbox_item_url, message_blocks
from baton.contracts.tool_approvals import ToolApprovalRequest
from baton.domain.tool_calls import ToolCall
from baton.services.tool_approvals import ToolApprovalService
from tests.unit.test_slack_interactions import Harness, _click

if TYPE_CHECKING:
    from baton.models import Interaction
    from baton.services.core import Core

RUN = "run-tools"


@pytest.fixture
def harness(core: Core) -> Harness:
    return Harness(core)


def _ask(core: Core, arguments: dict[str, Any]) -> Interaction:
    core.ensure_run(RUN)
    request = ToolApprovalRequest(
        call=ToolCall(tool="Bash", arguments=arguments), risk="high", reason="clean <first>", timeout_seconds=600
    )
    asked, _ = ToolApprovalService(core).request(RUN, request, caller="agent")
    return asked


def _deny(view: dict[str, Any], reason: str) -> dict[str, Any]:
    return {
        "type": "view_submission",
        "user": {"id": "U0ALICE"},
        "view": {
            "callback_id": view["callback_id"],
            "private_metadata": view["private_metadata"],
            "state": {"values": {"reason": {"value": {"type": "plain_text_input", "value": reason}}}},
        },
    }


def test_the_message_shows_the_command_and_approve_and_deny_buttons(harness: Harness) -> None:
    asked = _ask(harness.core, {"command": "rm -rf build/ && make release"})
    blocks = message_blocks(asked, inbox_url="http://inbox/")
    assert blocks[0]["text"]["text"] == "Tool call needs approval: Bash (high risk)"
    assert (
        blocks[1]["text"]["text"]
        == "*Bash* (high risk): clean &lt;first&gt;\n```rm -rf build/ &amp;&amp; make release```"
    )
    (actions,) = [b for b in blocks if b["type"] == "actions"]
    shown = [(e["text"]["text"], e["action_id"], e.get("style")) for e in actions["elements"]]
    assert shown == [("Approve", "baton_option_0", "primary"), ("Deny…", "baton_open_form", "danger")]
    assert inbox_item_url("http://inbox/", asked) == f"http://inbox/#/tool/{RUN}/{asked.interaction_id}"


def test_long_arguments_are_a_bounded_json_code_block(harness: Harness) -> None:
    asked = _ask(harness.core, {"path": "notes.md", "content": "x" * 5000})
    text = message_blocks(asked, inbox_url="http://inbox/")[1]["text"]["text"]
    assert len(text) <= 3000 and text.endswith("…```") and '"path": "notes.md"' in text


def test_approve_is_one_click_and_deny_needs_its_reason(harness: Harness) -> None:
    approved = _ask(harness.core, {"command": "make test"})
    assert harness.post(_click(RUN, approved.interaction_id, 0)).status == 200
    (job,) = harness.jobs.jobs
    assert harness.worker.run(job) == "approved by alice@example.com"
    view = ToolApprovalService(harness.core).get(RUN, approved.interaction_id)
    assert view.state.status == "answered" and view.state.answer["decision"] == "approve"

    denied = _ask(harness.core, {"command": "rm -rf /"})
    assert harness.post(_click(RUN, denied.interaction_id, None)).status == 200
    (modal,) = harness.slack.opened
    assert modal["title"]["text"] == "Deny the tool call" and modal["submit"]["text"] == "Deny"
    refused = harness.post(_deny(modal, "  "))
    assert refused.body == {"response_action": "errors", "errors": {"reason": "this field is required"}}
    assert harness.post(_deny(modal, "never outside build/")).status == 200
    job = harness.jobs.jobs[-1]
    assert harness.worker.run(job) == "denied by alice@example.com: never outside build/"
    stored = ToolApprovalService(harness.core).get(RUN, denied.interaction_id)
    assert stored.state.answer["decision"] == "deny" and stored.state.answer["reason"] == "never outside build/"


def test_the_webhook_message_shows_the_arguments_as_a_bounded_code_block(harness: Harness) -> None:
    from baton.notify.model import Notification
    from baton.notify.slack import build_blocks

    asked = _ask(harness.core, {"command": "make <all>", "content": "y" * 4000})
    note = Notification(event="human_input_requested", kind="tool_approval", run_id=RUN, prompt=asked.request.prompt)
    blocks = build_blocks(note)["blocks"]
    text = blocks[1]["text"]["text"]
    how = blocks[-1]["elements"][1]["text"]
    assert f"runs decide {RUN} &lt;interaction-id&gt; --approve | --deny '&lt;reason&gt;' | --edit" in how
    assert text.startswith("Allow the tool call Bash (high risk)? clean &lt;first&gt;\n```{")
    assert '"command": "make &lt;all&gt;"' in text and text.endswith("…```") and len(text) <= 3000
