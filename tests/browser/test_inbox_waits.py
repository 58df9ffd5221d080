"""The inbox's Waits page in Chromium (issue 32 item 5): reached from the header's *Waits* link, the
pending figures per kind and workflow and the answer times as compact tables, the oldest items linking to
their own screens; photographed at 1366 px and at 375 px (no sideways scroll, every control named)."""

from __future__ import annotations

import uuid

from playwright.sync_api import Page, Route, expect

from tests.browser.conftest import agent, shoot
from tests.e2e.conftest import LocalStackProcess

WIDE = {"width": 1366, "height": 900}


def test_the_waits_page_shows_the_figures_and_links_the_oldest_items(stack: LocalStackProcess, page: Page) -> None:
    run_id = f"ui-waits-{uuid.uuid4().hex[:8]}"
    asking = agent(stack, run_id)
    oldest = asking.ask_async(
        run_id, "draft", "Which database for the orders service?", options=["postgres", "dynamodb"]
    )
    answered = asking.ask_async(run_id, "draft", "Ship on Friday?", options=["yes", "no"])
    stack.client().create_interrupt(
        session_id=f"{run_id}-b", prompt="Deploy where?", schema={"type": "enum", "enum": ["staging", "production"]}
    )
    stack.client().answer(run_id, answered.interaction_id, "yes")

    page.set_viewport_size(WIDE)
    page.get_by_role("link", name="Waits", exact=True).click()  # not a run link: ui-waits-...
    page.wait_for_url("**/inbox/#/waits")
    expect(page.get_by_role("heading", name="How long things wait")).to_be_visible()
    by_kind = page.get_by_role("table").filter(has=page.get_by_text("By kind"))
    expect(by_kind.get_by_role("row", name="question")).to_be_visible()
    expect(by_kind.get_by_role("row", name="interrupt")).to_be_visible()
    expect(page.get_by_role("table").filter(has=page.get_by_text("By workflow"))).to_be_visible()
    day = page.get_by_role("table", name="Answer times").get_by_role("row", name="day")
    expect(day).not_to_contain_text("–")  # at least one answer today: its p50 and p95 are times
    listed = page.get_by_role("list", name="Oldest pending items")
    link = listed.get_by_role("link", name="Which database for the orders service?")
    expect(link).to_be_visible()
    expect(listed.get_by_role("link", name="Ship on Friday?")).to_have_count(0)  # answered: not waiting
    shoot(page, "waits")

    link.click()
    page.wait_for_url(f"**/inbox/#/question/{run_id}/{oldest.interaction_id}")
    expect(page.get_by_role("heading", name="Which database for the orders service?")).to_be_visible()


def _truncated(route: Route) -> None:
    """The stack's answer with both reads marked as stopped at their page limit (it would take 500
    pending items to get there for real)."""
    response = route.fetch()
    body = response.json()
    body["pending"].update(sampled=500, truncated=True)
    body["answers"].update(sampled=2400, truncated=True)
    route.fulfill(response=response, json=body)


def test_a_read_stopped_at_its_page_limit_says_what_the_figures_cover(stack: LocalStackProcess, page: Page) -> None:
    page.route("**/api/stats/waits", _truncated)
    page.goto(f"{stack.api_url}/inbox/#/waits")
    notes = page.get_by_role("note")
    expect(notes.nth(0)).to_have_text("By workflow: the oldest 500 pending items only (the counts by kind are all).")
    expect(notes.nth(1)).to_have_text("From 2400 settled items read (a page per kind): a sample, not all.")
    shoot(page, "waits-truncated")
