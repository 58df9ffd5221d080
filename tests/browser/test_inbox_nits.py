"""The inbox's nits in Chromium. Issue 11: after a 409 a question's option buttons are disabled and say who
answered (another named operator, `operator.<name>.<mac>`), and which option won. Then: a 202 whose
delivery is pending is shown as stored, not sent; a review's status line belongs to the latest action
only; and the header's Sign out ends the local session on the server."""

from __future__ import annotations

import uuid
from pathlib import Path

from playwright.sync_api import Page, Route, expect

from baton.api.auth import operator_token
from baton.cli.demo_repo import create_demo_repo
from baton.client.sdk import Client
from tests.browser.conftest import agent, shoot
from tests.browser.test_inbox_gates import REVIEW_SECONDS, _commit_on_run_branch, _open_review
from tests.e2e.conftest import LocalStackProcess

PENDING = "Stored; delivery pending (the workflow will get it within a minute)."


def test_after_a_409_the_options_are_disabled_and_say_who_answered(stack: LocalStackProcess, page: Page) -> None:
    run_id = f"ui-nit-{uuid.uuid4().hex[:8]}"
    asked = agent(stack, run_id).ask_async(run_id, "draft", "Which region?", options=["eu-west-1", "us-east-1"])
    page.goto(f"{stack.api_url}/inbox/#/question/{run_id}/{asked.interaction_id}")
    expect(page.get_by_role("heading", name="Which region?")).to_be_visible()
    options = page.get_by_role("group", name="Answer with an option").get_by_role("button")
    expect(options).to_have_count(2)
    for n in range(2):
        expect(options.nth(n)).to_be_enabled()  # before anyone answered

    with Client(stack.api_url, operator_token(stack.token, "bob")) as bob:
        bob.answer(run_id, asked.interaction_id, "us-east-1")  # another operator, first
    page.get_by_role("button", name="eu-west-1").click()
    expect(page.get_by_role("alert")).to_have_text("This question was already answered by bob with us-east-1.")
    for n in range(2):
        expect(options.nth(n)).to_be_disabled()
    expect(options.nth(0)).to_contain_text("bob answered us-east-1")
    expect(options.nth(1)).to_contain_text("chosen by bob")
    shoot(page, "question-409-disabled")


def _answer_pending(route: Route) -> None:
    """The POST goes to the stack for real; its answer is turned into the 202 a failed send to the workflow
    gets (`delivery: "pending"`), which the browser fixture's stack cannot be made to fail by itself."""
    response = route.fetch()
    body = response.json()
    route.fulfill(response=response, status=202, json={**body, "resumed": False, "delivery": "pending"})


def test_a_stored_answer_whose_delivery_is_pending_is_not_shown_as_sent(stack: LocalStackProcess, page: Page) -> None:
    rec = stack.client().create_interrupt(
        session_id=f"ui-pending-{uuid.uuid4().hex[:8]}",
        prompt="Deploy where?",
        schema={"type": "enum", "enum": ["staging", "production"]},
    )
    page.route(f"**/api/v1/interrupts/{rec.interrupt_id}/resume", _answer_pending)
    page.goto(f"{stack.api_url}/inbox/#/interrupt/{rec.interrupt_id}")
    expect(page.get_by_text("Claimed by you (local-operator) until")).to_be_visible()
    page.get_by_role("combobox").select_option("staging")
    page.get_by_role("button", name="Resume").click()
    line = page.get_by_role("status").filter(has_text="delivery pending")
    expect(line).to_have_text(PENDING)
    expect(line).to_have_class("pending")  # amber, not the green of a delivered answer
    expect(page.get_by_text("Resumed by")).to_have_count(0)
    shoot(page, "interrupt-delivery-pending")


def test_review_status_line_belongs_to_the_latest_action_and_a_pending_delivery_says_so(
    stack: LocalStackProcess, page: Page, tmp_path: Path
) -> None:
    repo = create_demo_repo(tmp_path / "repo")
    _commit_on_run_branch(repo, "wip.py", "# TODO: handle empty names\n")  # blockers: Force-merge is offered
    _operator, run_id = _open_review(stack, page, repo, "ui-stale")
    thread = page.get_by_role("list", name="Review thread").locator("> li")
    expect(thread).to_have_count(1, timeout=REVIEW_SECONDS * 1000)
    page.get_by_label("Reply to the companion").fill("what should I test first?")
    page.get_by_role("button", name="Send reply").click()
    sent = page.locator(".merge").get_by_role("status")
    expect(sent).to_have_text("Sent: reply.")
    expect(thread).to_have_count(3, timeout=REVIEW_SECONDS * 1000)

    # Opening the force-merge confirm is a new action: the reply's "Sent" is not left under it.
    force = page.get_by_role("button", name="Force-merge")
    expect(force).to_be_enabled(timeout=REVIEW_SECONDS * 1000)
    force.click()
    expect(page.get_by_role("group", name="Confirm force-merge")).to_be_visible()
    expect(sent).to_have_count(0)
    shoot(page, "review-confirm-no-stale-status")
    page.get_by_role("group", name="Confirm force-merge").get_by_role("button", name="Cancel").click()

    # A reply stored but not yet delivered to the workflow (a 202): amber, and not "Sent".
    page.route(f"**/api/runs/{run_id}/resume", _answer_pending)
    page.get_by_label("Reply to the companion").fill("and then?")
    page.get_by_role("button", name="Send reply").click()
    expect(sent).to_have_text(PENDING)
    expect(sent).to_have_class("pending")
    shoot(page, "review-delivery-pending")


def test_sign_out_ends_the_session_and_shows_the_signed_out_page(stack: LocalStackProcess, page: Page) -> None:
    page.goto(f"{stack.api_url}/inbox/#/")
    expect(page.locator(".who-am-i")).to_have_text("local-operator")
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("status").filter(has_text="Signed out")).to_be_visible()
    expect(page.get_by_role("heading", name="Sign in to the inbox")).to_be_visible()
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
    expect(page.locator(".who-am-i")).to_have_count(0)
    shoot(page, "signed-out")
    # Ended on the server, not only on the page: the browser's next API call is refused.
    assert page.request.get(f"{stack.api_url}/api/me").status == 401
    page.reload()
    expect(page.get_by_role("heading", name="Sign in to the inbox")).to_be_visible()
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
