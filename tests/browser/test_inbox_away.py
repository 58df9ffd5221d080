"""The signed-in operator's away in Chromium (issue 32 item 4): the header's *Set away* opens a small form;
saved, the header says "Away until ... · delegate: bob" with a *Back* button that clears it; the server's
refusals (a delegate who is away too: 409 naming them) show as they are. Photographed at 1366 px and at
375 px (no sideways scroll, every control named)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import httpx
from playwright.sync_api import Page, expect

from baton.api.auth import operator_token
from tests.browser.conftest import agent, shoot
from tests.e2e.conftest import LocalStackProcess

WIDE = {"width": 1366, "height": 900}


def _in_days(days: int) -> str:
    """A datetime-local value (the browser's local time) `days` ahead."""
    return (datetime.now() + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M")


def _as(stack: LocalStackProcess, name: str, method: str, body: object = None) -> httpx.Response:
    token = operator_token(stack.token, name)
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.request(method, f"{stack.api_url}/api/me/away", json=body, headers=headers, timeout=30)


def test_an_operator_sets_away_with_a_delegate_and_comes_back(stack: LocalStackProcess, page: Page) -> None:
    page.set_viewport_size(WIDE)
    page.get_by_role("button", name="Set away").click()
    form = page.get_by_role("form", name="Away")
    form.get_by_label("Until").fill(_in_days(7))
    form.get_by_label("Delegate").fill("bob")
    shoot(page, "away-form")
    form.get_by_role("button", name="Save").click()
    status = page.get_by_role("status").filter(has_text="Away until")
    expect(status).to_contain_text("· delegate: bob")
    shoot(page, "away-set")
    page.reload()
    expect(page.get_by_role("status").filter(has_text="Away until")).to_contain_text("delegate: bob")  # stored

    page.get_by_role("button", name="Back").click()
    expect(page.get_by_role("button", name="Set away")).to_be_visible()
    expect(page.get_by_role("status").filter(has_text="Away until")).to_have_count(0)


def test_a_delegate_who_is_away_too_is_refused_naming_them(stack: LocalStackProcess, page: Page) -> None:
    until = (datetime.now().astimezone() + timedelta(days=3)).isoformat()
    assert _as(stack, "carol", "PUT", {"until": until, "delegate": "dave"}).status_code == 200
    try:
        page.get_by_role("button", name="Set away").click()
        form = page.get_by_role("form", name="Away")
        form.get_by_label("Until").fill(_in_days(2))
        form.get_by_label("Delegate").fill("carol")
        form.get_by_role("button", name="Save").click()
        expect(page.get_by_role("alert")).to_contain_text("carol is away too")
        expect(page.get_by_role("button", name="Set away")).to_have_count(0)  # the form stays open to fix
        shoot(page, "away-refused")
    finally:
        _as(stack, "carol", "DELETE")


def test_a_quorum_seat_held_for_someone_away_says_so_and_the_vote_fills_it(
    stack: LocalStackProcess, page: Page
) -> None:
    until = (datetime.now().astimezone() + timedelta(days=3)).isoformat()
    assert _as(stack, "alice", "PUT", {"until": until, "delegate": "local-operator"}).status_code == 200
    try:
        run_id = f"ui-away-{uuid.uuid4().hex[:8]}"
        asked = agent(stack, run_id).ask_async(
            run_id,
            "deploy",
            "Ship the payments change?",
            options=["ship", "hold"],
            approval={"approvals": 2, "approvers": ["alice", "carol"]},
        )
        page.goto(f"{stack.api_url}/inbox/#/question/{run_id}/{asked.interaction_id}")
        expect(page.get_by_role("heading", name="Ship the payments change?")).to_be_visible()
        expect(page.get_by_role("note")).to_contain_text("for alice (away)")
        shoot(page, "away-seat")
        page.get_by_role("button", name="ship").click()
        expect(page.get_by_text("1 of 2 approvals, by alice").first).to_be_visible()  # her seat, once
    finally:
        _as(stack, "alice", "DELETE")
