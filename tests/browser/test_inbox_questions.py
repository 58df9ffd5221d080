"""The inbox's list and question screens in Chromium: answering (and the 409 when another operator
answered first), a new item appearing live and a settled one leaving with who settled it, the keyboard
path, bulk answers, and the run view."""

from __future__ import annotations

import re
import time
import uuid

from playwright.sync_api import Page, expect

from tests.browser.conftest import LIVE_SECONDS, agent, shoot
from tests.e2e.conftest import LocalStackProcess


def _run(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _pending_ids(stack: LocalStackProcess, run_id: str) -> set[str]:
    return {q.interaction_id for q in stack.client().pending_questions(run_id)}


def test_answer_a_question_and_see_the_409_when_another_operator_answered_first(
    stack: LocalStackProcess, page: Page
) -> None:
    run_id = _run("ui-q")
    asking = agent(stack, run_id)
    first = asking.ask_async(run_id, "draft", "Which database?", options=["postgres", "dynamodb"]).interaction_id
    second = asking.ask_async(run_id, "draft", "Which region?", options=["eu-west-1", "us-east-1"]).interaction_id
    free = asking.ask_async(run_id, "draft", "What should the release be called?").interaction_id

    page.goto(f"{stack.api_url}/inbox/#/question/{run_id}/{first}")
    expect(page.get_by_role("heading", name="Which database?")).to_be_visible()
    shoot(page, "question")
    page.get_by_role("button", name="postgres").click()
    expect(page.get_by_role("status").filter(has_text="Answered with postgres.")).to_be_visible()
    assert first not in _pending_ids(stack, run_id)

    # Another operator answers while this screen is open: the click gets the 409, shown in place.
    page.goto(f"{stack.api_url}/inbox/#/question/{run_id}/{second}")
    expect(page.get_by_role("heading", name="Which region?")).to_be_visible()
    stack.client().answer(run_id, second, "us-east-1")
    page.get_by_role("button", name="eu-west-1").click()
    expect(page.get_by_role("alert")).to_have_text(
        "This question was already answered by local-operator with us-east-1."
    )
    shoot(page, "question-409")
    answered = [e for e in stack.client().events(run_id, limit=200).events if e.type == "interaction_answered"]
    winners = [(e.data["interaction_id"], e.data["answer"]) for e in answered]
    assert winners == [(first, "postgres"), (second, "us-east-1")]

    page.goto(f"{stack.api_url}/inbox/#/question/{run_id}/{free}")
    page.get_by_label("Your answer").fill("first light")
    page.get_by_role("button", name="Send answer").click()
    expect(page.get_by_role("status").filter(has_text="Answered with first light.")).to_be_visible()
    assert _pending_ids(stack, run_id) == set()


def test_a_new_item_appears_live_and_a_settled_one_says_who_answered(stack: LocalStackProcess, page: Page) -> None:
    run_id = _run("ui-live")
    page.goto(f"{stack.api_url}/inbox/#/")
    page.get_by_role("textbox", name="Filter by run").fill(run_id)
    expect(page.get_by_role("status").filter(has_text="Nothing is waiting")).to_be_visible()

    asked_at = time.monotonic()
    iid = agent(stack, run_id).ask_async(run_id, "draft", "Deploy tonight?", options=["yes", "no"]).interaction_id
    row = page.locator(f'[data-item-id="{iid}"]')
    expect(row).to_be_visible(timeout=LIVE_SECONDS * 1000)  # no reload, no refresh button
    assert time.monotonic() - asked_at < LIVE_SECONDS
    expect(row).to_contain_text("Deploy tonight?")
    expect(row).to_contain_text(run_id)
    expect(row).to_contain_text("node draft")
    shoot(page, "list")

    stack.client().answer(run_id, iid, "no")  # elsewhere: the CLI, another browser
    settled = page.locator(f'[data-settled-id="{iid}"]')
    expect(settled).to_contain_text("answered by local-operator with no", timeout=LIVE_SECONDS * 1000)
    expect(row).to_have_count(0)
    shoot(page, "list-settled")


def test_the_keyboard_path_and_a_bulk_answer(stack: LocalStackProcess, page: Page) -> None:
    run_id = _run("ui-keys")
    asking = agent(stack, run_id)
    ids = [
        asking.ask_async(run_id, "draft", f"Approve change {n}?", options=["approve", "reject"]).interaction_id
        for n in range(4)
    ]  # newest first in the list: change 3, 2, 1, 0
    page.goto(f"{stack.api_url}/inbox/#/")
    page.get_by_role("textbox", name="Filter by run").fill(run_id)
    rows = page.locator("li.item")
    expect(rows).to_have_count(4)
    page.locator("h1").click()  # keys go to the page, not to the filter field

    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    shoot(page, "keys-help")
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)

    page.keyboard.press("j")
    expect(rows.nth(1)).to_be_focused()
    page.keyboard.press("k")
    expect(rows.nth(0)).to_be_focused()
    page.keyboard.press("a")  # change 3: its first option
    expect(page.locator(f'[data-settled-id="{ids[3]}"]')).to_contain_text(
        "answered by local-operator with approve", timeout=LIVE_SECONDS * 1000
    )
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_be_focused()  # the focus stays in place: on change 2, now first
    page.keyboard.press("r")  # change 2: its second option
    expect(page.locator(f'[data-settled-id="{ids[2]}"]')).to_contain_text("with reject", timeout=LIVE_SECONDS * 1000)
    expect(rows).to_have_count(2, timeout=LIVE_SECONDS * 1000)

    page.keyboard.press("Enter")  # opens the focused item: change 1
    expect(page).to_have_url(re.compile(f"#/question/{run_id}/{ids[1]}$"))
    expect(page.get_by_role("heading", name="Approve change 1?")).to_be_visible()
    page.go_back()

    # Bulk: both left, selected by x and by their checkbox, answered with one value.
    expect(rows).to_have_count(2)
    page.locator("h1").click()
    page.keyboard.press("x")  # the focus is back on the first row: change 1
    expect(page.get_by_role("checkbox", name="Select question: Approve change 1?")).to_be_checked()
    page.get_by_role("checkbox", name="Select question: Approve change 0?").check()
    bulk = page.get_by_role("region", name="Bulk answer")
    expect(bulk).to_contain_text("2 selected")
    shoot(page, "list-bulk")
    bulk.get_by_role("button", name="Answer all: approve").click()
    preview = page.get_by_role("dialog", name="Send to 2 items?")  # nothing is sent before the confirm
    expect(preview.locator("li")).to_have_count(2)
    preview.get_by_role("button", name="Confirm: send 2 answers").click()
    expect(rows).to_have_count(0, timeout=LIVE_SECONDS * 1000)
    answers = {
        e.data["interaction_id"]: e.data["answer"]
        for e in stack.client().events(run_id, limit=200).events
        if e.type == "interaction_answered"
    }
    assert answers == {ids[3]: "approve", ids[2]: "reject", ids[1]: "approve", ids[0]: "approve"}

    # Single-key shortcuts switched off: j no longer moves, the choice survives a reload.
    extra = asking.ask_async(run_id, "draft", "One more?", options=["yes", "no"]).interaction_id
    expect(page.locator(f'[data-item-id="{extra}"]')).to_be_visible(timeout=LIVE_SECONDS * 1000)
    page.get_by_role("checkbox", name="Single-key shortcuts").uncheck()
    page.reload()
    expect(page.get_by_role("checkbox", name="Single-key shortcuts")).not_to_be_checked()
    page.get_by_role("textbox", name="Filter by run").fill(run_id)
    expect(rows).to_have_count(1)
    page.locator("h1").click()
    page.keyboard.press("a")
    page.keyboard.press("?")
    expect(page.get_by_role("dialog")).to_have_count(0)
    assert extra in _pending_ids(stack, run_id)


def test_the_run_view_shows_status_and_the_timeline(stack: LocalStackProcess, page: Page) -> None:
    run_id = _run("ui-run")
    iid = agent(stack, run_id).ask_async(run_id, "draft", "Proceed?", options=["yes", "no"]).interaction_id
    stack.client().answer(run_id, iid, "yes")
    page.goto(f"{stack.api_url}/inbox/#/run/{run_id}")
    expect(page.get_by_role("heading", name=f"Run {run_id}")).to_be_visible()
    timeline = page.get_by_role("list", name="Event timeline")
    expect(timeline).to_contain_text("human input requested")  # the event types in words (issue 32)
    expect(timeline).to_contain_text("interaction answered")
    expect(timeline).to_contain_text("by local-operator")
    expect(page.get_by_label("Run status")).not_to_be_empty()
    shoot(page, "run")
