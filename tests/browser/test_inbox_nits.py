"""Issue 11's two nits in Chromium: after a 409 a question's option buttons are disabled and say who
answered (another named operator, `operator.<name>.<mac>`), and which option won."""

from __future__ import annotations

import uuid

from playwright.sync_api import Page, expect

from baton.api.auth import operator_token
from baton.client.sdk import Client
from tests.browser.conftest import agent, shoot
from tests.e2e.conftest import LocalStackProcess


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
