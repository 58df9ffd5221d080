"""The inbox list's filters and search in Chromium (issue 11: "filters and search"), and what each item
holds up: a question a hosted run's await gate waits on says "blocks gate await" in its row, read from
the one Query of the inbox page (`baton/services/inbox.py`). A filtered page that comes back short with a
`next` (it read its 500 items) is followed, a few pages per load, and Load more goes on from its cursor."""

from __future__ import annotations

import uuid
from urllib.parse import parse_qs, urlparse

import httpx
from playwright.sync_api import Page, Route, expect

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


def test_a_short_filtered_page_is_followed_by_its_cursor_and_load_more_goes_on_from_the_last(
    stack: LocalStackProcess, page: Page
) -> None:
    """10,000 pending with my claims the oldest: each filtered page reads 500, finds none and says where it
    stopped (`next`). Stubbed with `page.route` (it would take thousands of items for real): the pages
    before the item are empty, each with a cursor."""
    run_id = _unique("ui-cursor")
    agent(stack, run_id).ask_async(run_id, "draft", "Rotate the signing key?", options=["yes", "no"])
    item = _inbox_item(stack, run_id)
    assert item is not None
    asked: list[tuple[str, str | None]] = []  # each stubbed request's claim filter and cursor
    # claimed=me: the item on the second page; unclaimed: on the fifth (past one load's 4 requests).
    empty_before = {"me": 1, "unclaimed": 4}

    def sparse(route: Route) -> None:
        query = parse_qs(urlparse(route.request.url).query)
        claimed = query.get("claimed", [""])[0]
        if claimed not in empty_before:
            route.continue_()
            return
        cursor = query.get("next", [None])[0]
        asked.append((claimed, cursor))
        at = int(cursor.rsplit("-", 1)[1]) if cursor else 0
        body: dict[str, object] = {"items": [], "count": 0, "next": f"{claimed}-{at + 1}", "as_of": item["created_at"]}
        if at == empty_before[claimed]:
            body.update(items=[item], count=1, next=None)
        route.fulfill(json=body)

    page.route(lambda url: "/api/inbox?" in url, sparse)
    page.goto(f"{stack.api_url}/inbox/#/")
    rows = page.locator("li.item")
    status = page.get_by_role("status")

    page.get_by_label("Filter by claim").select_option("me")
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("Rotate the signing key?")
    expect(status.filter(has_text="Nothing is waiting")).to_have_count(0)
    assert {cursor for claimed, cursor in asked if claimed == "me"} == {None, "me-1"}  # the empty page, its cursor

    page.get_by_label("Filter by claim").select_option("unclaimed")
    expect(status.filter(has_text="None found in the first 2,000 items read.")).to_be_visible()
    expect(rows).to_have_count(0)
    expect(status.filter(has_text="Nothing is waiting")).to_have_count(0)
    # A load follows 3 cursors and stops there (4 requests): no poll reads on past them.
    assert {cursor for claimed, cursor in asked if claimed == "unclaimed"} == {
        None,
        "unclaimed-1",
        "unclaimed-2",
        "unclaimed-3",
    }
    shoot(page, "list-none-found")
    page.get_by_role("button", name="Load more").click()
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("Rotate the signing key?")
    assert ("unclaimed", "unclaimed-4") in asked  # Load more went on from the last cursor
    # A poll reads from the top again, as deep: the item stays, and nothing shows as "Just settled".
    page.wait_for_timeout(2500)
    expect(rows).to_have_count(1)
    expect(page.locator("[data-settled-id]")).to_have_count(0)
