"""The inbox list's filters and search in Chromium (issue 11: "filters and search"), and what each item
holds up: a question a hosted run's await gate waits on says "blocks gate await" in its row, read from
the one Query of the inbox page (`baton/services/inbox.py`)."""

from __future__ import annotations

import uuid

import httpx
from playwright.sync_api import Page, expect

from baton.api.auth import operator_token
from baton.client.sdk import Client
from tests.browser.conftest import LIVE_SECONDS, agent, shoot
from tests.conftest import wait_for
from tests.e2e.conftest import LocalStackProcess


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _inbox_item(stack: LocalStackProcess, run_id: str) -> dict[str, object] | None:
    headers = {"Authorization": f"Bearer {stack.token}"}
    page = httpx.get(f"{stack.api_url}/api/inbox", params={"run": run_id}, headers=headers, timeout=10).json()
    items: list[dict[str, object]] = page["items"]
    return items[0] if items else None


def test_filters_and_search_narrow_the_list_and_a_row_says_what_it_blocks(stack: LocalStackProcess, page: Page) -> None:
    run_id = _unique("ui-filter")
    asking = agent(stack, run_id)
    asking.ask_async(run_id, "draft", "Which database engine?", options=["postgres", "dynamodb"])
    asking.ask_async(run_id, "plan", "Which rollout window?", options=["today", "monday"])
    session = _unique("ui-claimed")
    interrupt = stack.client().create_interrupt(session_id=session, prompt="Confirm the rollback plan")
    with Client(stack.api_url, operator_token(stack.token, "bob")) as bob:
        bob.claim_interrupt(interrupt.interrupt_id)

    page.goto(f"{stack.api_url}/inbox/#/")
    rows = page.locator("li.item")
    page.get_by_role("textbox", name="Filter by run").fill(run_id)
    expect(rows).to_have_count(2)
    page.get_by_role("textbox", name="Filter by node").fill("plan")
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("Which rollout window?")
    page.get_by_role("textbox", name="Filter by node").fill("")
    page.get_by_role("searchbox", name="Search").fill("database")
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("Which database engine?")
    expect(rows.nth(0)).not_to_contain_text("blocks")  # nothing waits on it: no "blocks run ..." line
    shoot(page, "list-filtered")
    page.get_by_role("searchbox", name="Search").fill("")
    page.get_by_label("Filter by age").select_option("60")  # both were asked seconds ago
    expect(rows).to_have_count(0)
    page.get_by_label("Filter by age").select_option("")
    expect(rows).to_have_count(2)

    # Another operator's claim: shown in the row, and the claim filter decides on it.
    page.get_by_role("textbox", name="Filter by run").fill("")
    page.get_by_label("Filter by kind").select_option("interrupt")
    page.get_by_role("searchbox", name="Search").fill(session)
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("claimed by bob")
    page.get_by_label("Filter by claim").select_option("me")
    expect(rows).to_have_count(0)
    page.get_by_label("Filter by claim").select_option("unclaimed")
    expect(rows).to_have_count(0)
    page.get_by_label("Filter by claim").select_option("")
    expect(rows).to_have_count(1)

    # A hosted run's await gate parked on its question: the row names the gate it holds up.
    hosted = _unique("ui-blocks")
    config = {"from": "draft", "node": "draft", "timeout_seconds": 300, "questions": [{"question": "Ship it?"}]}
    stack.client().start_run("await_answers", config, run_id=hosted)
    blocked = wait_for(
        lambda: (
            (item := _inbox_item(stack, hosted)) is not None and item["blocks"] == {"gate": "await", "run_id": hosted}
        ),
        timeout=30,
    )
    assert blocked
    page.get_by_label("Filter by kind").select_option("")
    page.get_by_role("searchbox", name="Search").fill("")
    page.get_by_role("textbox", name="Filter by run").fill(hosted)
    expect(rows).to_have_count(1, timeout=LIVE_SECONDS * 1000)
    expect(rows.nth(0)).to_contain_text(f"blocks gate await, run {hosted}")
    # What the filters hid was not settled: nothing of the earlier listings shows as "Just settled".
    expect(page.locator("[data-settled-id]")).to_have_count(0)
    shoot(page, "list-blocks")


def test_a_row_that_shows_up_while_the_operator_types_in_a_filter_leaves_the_keys_in_the_filter(
    stack: LocalStackProcess, page: Page
) -> None:
    run_id = _unique("ui-typing")
    agent(stack, run_id).ask_async(run_id, "draft", "Keep the focus?", options=["yes", "no"])
    page.goto(f"{stack.api_url}/inbox/#/")
    run_filter = page.get_by_role("textbox", name="Filter by run")
    run_filter.fill(run_id)  # the list empties and loads again: its first row mounts as the focused one
    expect(page.locator("li.item")).to_have_count(1)
    expect(run_filter).to_be_focused()
    page.keyboard.press("a")  # typed into the filter: not the shortcut that answers the row with "yes"
    expect(run_filter).to_have_value(f"{run_id}a")
    assert _inbox_item(stack, run_id) is not None  # still waiting: nothing answered it
