"""Triage at volume in Chromium (issue 32 item 2): a mixed selection of questions and tool approvals, a
bulk action that names the items it skips, a preview with one line per item of exactly what will be sent,
the confirm, and each item's result (one of them answered through the API between the preview and the
confirm: "already denied by local-operator: not now"); then the same by keyboard alone (x, b, Enter, Enter, Esc),
and Esc on the preview sends nothing and gives the focus back. A tool call's arguments read in its row as a
command and as a key/value tree."""

from __future__ import annotations

import uuid

from playwright.sync_api import Page, expect

from baton.contracts.tool_approvals import ToolApprovalRequest
from baton.domain.tool_calls import ToolCall
from tests.browser.conftest import LIVE_SECONDS, agent, shoot
from tests.e2e.conftest import LocalStackProcess

WIDE = {"width": 1366, "height": 900}  # the desktop width


def _ask_tool(stack: LocalStackProcess, run_id: str, tool: str, arguments: dict[str, object]) -> str:
    request = ToolApprovalRequest(call=ToolCall(tool=tool, arguments=arguments), reason="triage", timeout_seconds=600)
    return agent(stack, run_id).request_tool_approval(run_id, request).interaction_id


def _shoot_wide(page: Page, name: str) -> None:
    page.set_viewport_size(WIDE)
    shoot(page, name)  # at the width set here, then at 375 px


def test_a_mixed_selection_previews_one_line_each_and_reports_each_result(stack: LocalStackProcess, page: Page) -> None:
    run_id = f"ui-triage-{uuid.uuid4().hex[:8]}"
    question = agent(stack, run_id).ask_async(run_id, "draft", "Ship it?", options=["yes", "no"]).interaction_id
    bash = _ask_tool(stack, run_id, "Bash", {"command": "make release", "timeout": 120})
    write = _ask_tool(stack, run_id, "Write", {"path": "notes.md", "options": {"mode": "append", "lines": 3}})

    page.goto(f"{stack.api_url}/inbox/#/")
    page.get_by_role("textbox", name="Filter by run").fill(run_id)
    expect(page.locator("li.item")).to_have_count(3, timeout=LIVE_SECONDS * 1000)
    # The arguments read well in the row: a command as a command, the rest as key: value, nested as a tree.
    bash_row, write_row = page.locator(f'[data-item-id="{bash}"]'), page.locator(f'[data-item-id="{write}"]')
    expect(bash_row.get_by_label("Command for Bash")).to_have_text("$ make release")
    expect(bash_row.get_by_label("Arguments for Bash")).to_have_text("timeout:120")
    expect(write_row.get_by_label("Arguments for Write")).to_contain_text("path:notes.md")
    expect(write_row.get_by_label("Arguments for Write")).to_contain_text("mode:append")

    page.get_by_role("checkbox", name="Select question: Ship it?").check()
    page.get_by_role("checkbox", name="Select tool call: Bash make release").check()
    page.get_by_role("checkbox", name="Select tool call: Write").check()
    bulk = page.get_by_role("region", name="Bulk answer")
    expect(bulk).to_contain_text("3 selected")
    expect(bulk.get_by_role("note")).to_contain_text("an answer goes to the 1 question")
    expect(bulk.get_by_role("button", name="Answer 1 question: yes")).to_be_visible()
    bulk.get_by_role("button", name="Approve 2 tool calls").click()

    preview = page.get_by_role("dialog", name="Send to 2 items?")
    lines = preview.get_by_role("list", name="What will be sent").locator("li")
    expect(lines).to_have_count(3)  # one line per selected item, the skipped one named
    expect(preview.locator(f'[data-preview-id="{bash}"]')).to_have_text("tool_approval approve Bash make release")
    expect(preview.locator(f'[data-preview-id="{write}"]')).to_have_text(
        'tool_approval approve Write options: {"lines":3,"mode":"append"}, path: notes.md'
    )
    expect(preview.locator(f'[data-preview-id="{question}"]')).to_have_text(
        "question skip — Ship it? (not a tool approval)"
    )
    expect(preview.get_by_role("button", name="Confirm: send 2 answers")).to_be_focused()
    _shoot_wide(page, "triage-preview")
    assert stack.client().get_tool_approval(run_id, bash).status == "pending"  # nothing sent before the confirm

    # Another operator decides one of them first (the CLI, Slack): its line reports the 409's winner.
    stack.client().answer(run_id, write, {"decision": "deny", "reason": "not now"})
    preview.get_by_role("button", name="Confirm: send 2 answers").click()
    results = page.get_by_role("dialog", name="Results")
    expect(results.locator(f'[data-preview-id="{bash}"]')).to_contain_text("→ approved")
    # the 409's winner, a tool call's decision in words
    expect(results.locator(f'[data-preview-id="{write}"] .result')).to_have_text(
        "→ already denied by local-operator: not now"
    )
    expect(results.locator(f'[data-preview-id="{write}"] [data-result="error"]')).to_have_count(1)
    expect(results.locator(f'[data-preview-id="{question}"] .result')).to_have_count(0)  # skipped: nothing sent
    expect(results.get_by_role("button", name="Close")).to_be_focused()
    _shoot_wide(page, "triage-results")

    bash_view, write_view = (stack.client().get_tool_approval(run_id, iid) for iid in (bash, write))
    assert bash_view.decision is not None and bash_view.decision.decision == "approve"
    assert write_view.decision is not None and (write_view.decision.decision, write_view.decision.reason) == (
        "deny",
        "not now",
    )
    assert {q.interaction_id for q in stack.client().pending_questions(run_id)} == {question}


def test_the_keyboard_only_path_and_esc_sends_nothing(stack: LocalStackProcess, page: Page) -> None:
    run_id = f"ui-triage-keys-{uuid.uuid4().hex[:8]}"
    asking = agent(stack, run_id)
    first = asking.ask_async(run_id, "draft", "Merge A?", options=["yes", "no"]).interaction_id
    second = asking.ask_async(run_id, "draft", "Merge B?", options=["yes", "no"]).interaction_id
    page.goto(f"{stack.api_url}/inbox/#/")
    page.get_by_role("textbox", name="Filter by run").fill(run_id)
    rows = page.locator("li.item")
    expect(rows).to_have_count(2, timeout=LIVE_SECONDS * 1000)
    page.locator("h1").click()  # keys go to the page, not to the filter field

    page.keyboard.press("x")  # newest first: Merge B
    page.keyboard.press("j")
    page.keyboard.press("x")
    expect(page.get_by_role("region", name="Bulk answer")).to_contain_text("2 selected")
    page.keyboard.press("b")
    answer_all = page.get_by_role("button", name="Answer all: yes")
    expect(answer_all).to_be_focused()

    # Esc on the preview: nothing sent, the focus back on the action that opened it.
    page.keyboard.press("Enter")
    preview = page.get_by_role("dialog", name="Send to 2 items?")
    expect(preview.get_by_role("button", name="Confirm: send 2 answers")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(answer_all).to_be_focused()
    assert {q.interaction_id for q in stack.client().pending_questions(run_id)} == {first, second}

    page.keyboard.press("Enter")
    expect(preview.locator("li")).to_have_count(2)
    expect(preview.locator(f'[data-preview-id="{first}"]')).to_have_text("question answer yes — Merge A?")
    page.keyboard.press("Enter")
    results = page.get_by_role("dialog", name="Results")
    for iid in (first, second):
        expect(results.locator(f'[data-preview-id="{iid}"]')).to_contain_text("→ answered with yes")
    _shoot_wide(page, "triage-keyboard-results")
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    assert stack.client().pending_questions(run_id) == []


def test_deny_with_one_reason_and_a_refused_answer_says_why(stack: LocalStackProcess, page: Page) -> None:
    run_id = f"ui-triage-deny-{uuid.uuid4().hex[:8]}"
    asking = agent(stack, run_id)
    open_text = asking.ask_async(run_id, "draft", "Release name?").interaction_id
    closed = asking.ask_async(run_id, "draft", "Region?", options=["eu", "us"], allow_free_text=False).interaction_id
    push = _ask_tool(stack, run_id, "Bash", {"command": "git push --force"})
    page.goto(f"{stack.api_url}/inbox/#/")
    page.get_by_role("textbox", name="Filter by run").fill(run_id)
    expect(page.locator("li.item")).to_have_count(3, timeout=LIVE_SECONDS * 1000)
    for checkbox in ("Select question: Release name?", "Select question: Region?", "Select tool call: Bash"):
        page.get_by_role("checkbox", name=checkbox).check()
    bulk = page.get_by_role("region", name="Bulk answer")

    # A deny needs its reason (the agent reads it); Enter in the reason opens the preview.
    bulk.get_by_role("button", name="Deny 1 tool call…").click()
    bulk.get_by_role("textbox", name="Reason to deny (the agent reads it)").fill("not on main")
    page.keyboard.press("Enter")
    preview = page.get_by_role("dialog", name="Send to 1 item?")
    expect(preview.locator(f'[data-preview-id="{push}"]')).to_have_text(
        "tool_approval deny: not on main — Bash git push --force"
    )
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog", name="Results").locator(f'[data-preview-id="{push}"] .result')).to_have_text(
        "→ denied: not on main"
    )
    page.keyboard.press("Escape")
    view = stack.client().get_tool_approval(run_id, push)
    assert view.decision is not None and (view.decision.decision, view.decision.reason) == ("deny", "not on main")

    # A typed answer: the question that takes no free text refuses it, with the server's reason.
    expect(page.locator("li.item")).to_have_count(2, timeout=LIVE_SECONDS * 1000)
    for checkbox in ("Select question: Release name?", "Select question: Region?"):
        page.get_by_role("checkbox", name=checkbox).check()
    bulk.get_by_role("textbox", name="Answer for the selected questions").fill("first light")
    bulk.get_by_role("button", name="Answer 2 selected").click()
    page.get_by_role("button", name="Confirm: send 2 answers").click()
    results = page.get_by_role("dialog", name="Results")
    expect(results.locator(f'[data-preview-id="{open_text}"] .result')).to_have_text("→ answered with first light")
    expect(results.locator(f'[data-preview-id="{closed}"] .result')).to_contain_text("→ refused: ")
    _shoot_wide(page, "triage-refused")
    assert {q.interaction_id for q in stack.client().pending_questions(run_id)} == {closed}
