"""The interrupt screen with the light enum form (`schema: {"type": "enum", "enum": [...]}`, what an agent's
`interrupt(schema=...)` sends most often) in Chromium: the form is a choice of the enum's values, its
declared default chosen first; the deadline reads relative ("expires in 9 min") with the ISO time in its
tooltip (inbox/src/util.js `relative`); the chosen value resumes the interrupt. Screenshots are written
to tests/browser/screenshots/interrupt-enum-*.png. One a policy rule resumed names the rule in words."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import Page, Route, expect

from tests.browser.conftest import SCREENSHOTS, shoot
from tests.e2e.conftest import LocalStackProcess


def test_the_light_enum_form_is_a_choice_and_the_deadline_reads_relative(stack: LocalStackProcess, page: Page) -> None:
    operator = stack.client()
    rec = operator.create_interrupt(
        session_id=f"ui-enum-{uuid.uuid4().hex[:8]}",
        prompt="Deploy where?",
        schema={"type": "enum", "enum": ["staging", "production"], "default": "staging", "title": "Target"},
        timeout_ms=10 * 60 * 1000,
    )
    assert rec.expires_at is not None
    page.goto(f"{stack.api_url}/inbox/#/interrupt/{rec.interrupt_id}")
    expect(page.get_by_role("heading", name="Deploy where?")).to_be_visible()

    # The deadline in words, the ISO string in the tooltip (and the machine-readable dateTime).
    expiry = page.locator("p.meta time")
    expect(expiry).to_have_text(re.compile(r"^in ([89]|10) min$"))
    expect(expiry).to_have_attribute("title", rec.expires_at)
    expect(expiry).to_have_attribute("datetime", rec.expires_at)
    expect(page.locator("p.meta")).not_to_contain_text(rec.expires_at)  # no raw ISO in the text
    # One line of text with the deadline in it (the flex gap of `.meta` does not split it from its words).
    meta_line = page.locator("p.meta > span", has=page.locator("time"))
    expect(meta_line).to_contain_text(f"interrupt {rec.interrupt_id} · pending · expires in")

    # The light form: a choice of exactly the enum's values, the declared default first chosen.
    target = page.get_by_label("Target")
    expect(target.locator("option:checked")).to_have_text("staging")
    values = target.locator("option").evaluate_all("options => options.map(o => o.textContent)")
    assert [v for v in values if v] == ["staging", "production"]
    target.select_option(label="production")
    shoot(page, "interrupt-enum")
    assert (SCREENSHOTS / "interrupt-enum-desktop.png").stat().st_size > 0
    assert (SCREENSHOTS / "interrupt-enum-375.png").stat().st_size > 0

    page.get_by_role("button", name="Resume").click()
    expect(page.get_by_text("Resumed by local-operator.")).to_be_visible()
    done = operator.get_interrupt(rec.interrupt_id)
    assert done.status == "answered" and done.value == "production" and done.resolved_by == "local-operator"


def test_an_interrupt_a_policy_rule_resumed_names_the_rule(stack: LocalStackProcess, page: Page) -> None:
    rec = stack.client().create_interrupt(
        session_id=f"ui-enum-policy-{uuid.uuid4().hex[:8]}",
        prompt="Deploy?",
        schema={"type": "enum", "enum": ["go", "stop"]},
        timeout_ms=10 * 60 * 1000,
    )

    # The local stack runs without a policy: the interrupt is read as the API sends one a rule resumed
    # (tests/integration/test_interrupt_policy.py holds the server to that shape).
    def resumed_by_rule(route: Route) -> None:
        response = route.fetch()
        body = {**response.json(), "status": "answered", "value": "go", "resolvedBy": "policy:staging-ok"}
        route.fulfill(response=response, json=body)

    page.route(f"**/api/v1/interrupts/{rec.interrupt_id}*", resumed_by_rule)
    page.goto(f"{stack.api_url}/inbox/#/interrupt/{rec.interrupt_id}")
    status = page.get_by_label("Interrupt status")
    expect(status).to_contain_text(f"interrupt {rec.interrupt_id} · answered · decided by policy rule staging-ok")
    expect(status).not_to_contain_text("policy:staging-ok")
