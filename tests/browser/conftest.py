"""Browser tests of the web inbox (`inbox/`): Playwright's Python package driving Debian's Chromium
against `baton dev` in its own process (as in tests/e2e/conftest.py), signed in the way a person is,
with the one-time link exchanged for the session cookie.

`scripts/bootstrap.sh` builds `inbox/dist` and installs `/usr/bin/chromium`; without either the tests
are skipped with the reason (Playwright never downloads a browser here), except under CI
(`BATON_REQUIRE_BROWSER=1`, set by `.ci/run`), where a missing browser or build is a failure.
Each screen is photographed at desktop width and at 375 px into `tests/browser/screenshots/`
(gitignored) for a person to look at; at 375 px the page must not scroll sideways, and every
control must have an accessible name."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from baton.api.auth import agent_token
from baton.client.sdk import Client
from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(__file__).parent / "screenshots"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 812}
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# The roles a person operates; each needs a name a screen reader can say.
CONTROL_ROLES = {"button", "link", "textbox", "searchbox", "combobox", "checkbox", "spinbutton", "listbox", "radio"}
LIVE_SECONDS = 5.0  # the bound for a change elsewhere to show in the inbox


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("BATON_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser tests required here: {reason}")
    pytest.skip(reason)


def _missing() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (scripts/bootstrap.sh installs Debian's chromium)"
    if not (ROOT / "inbox" / "dist" / "index.html").exists():
        return "inbox/dist is not built (make inbox)"
    return None


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStackProcess]:
    reason = _missing()
    if reason:
        _skip_or_fail(reason)
    started = start_local_stack(tmp_path_factory.mktemp("baton-inbox"))
    yield started
    stop_local_stack(started)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    reason = _missing()
    if reason:
        _skip_or_fail(reason)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def sign_in(stack: LocalStackProcess, context: BrowserContext) -> Page:
    """A new page signed in as a person is: a one-time link (what `baton inbox-login` prints) opened
    in the browser, which trades it for the HttpOnly session cookie and lands on /inbox/."""
    minted = httpx.post(
        f"{stack.api_url}/inbox/login-code", headers={"Authorization": f"Bearer {stack.token}"}, timeout=30
    )
    minted.raise_for_status()
    page = context.new_page()
    page.goto(minted.json()["url"])
    page.wait_for_url(re.compile(r"/inbox/(#.*)?$"))
    return page


@pytest.fixture
def page(stack: LocalStackProcess, browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(15_000)
    signed_in = sign_in(stack, context)
    errors: list[str] = []
    signed_in.on("pageerror", lambda error: errors.append(str(error)))
    yield signed_in
    context.close()
    assert not errors, f"the page threw: {errors}"


def agent(stack: LocalStackProcess, run_id: str) -> Client:
    """The agent of one run (its own scoped token), as agent code would ask."""
    return Client(stack.api_url, agent_token(stack.token, run_id))


def unnamed_controls(page: Page) -> list[dict[str, Any]]:
    """Controls on the page whose computed accessible name is empty (Chromium's accessibility tree)."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        cdp.detach()
    found = []
    for node in nodes:
        role = (node.get("role") or {}).get("value")
        if node.get("ignored") or role not in CONTROL_ROLES:
            continue
        if not str((node.get("name") or {}).get("value") or "").strip():
            found.append({"role": role, "id": node.get("backendDOMNodeId")})
    return found


def shoot(page: Page, name: str) -> None:
    """Screenshots at desktop width and at 375 px; at both, every control is named, and at 375 px
    nothing is wider than the screen."""
    SCREENSHOTS.mkdir(exist_ok=True)
    page.wait_for_timeout(300)  # let a just-arrived poll render
    assert unnamed_controls(page) == [], f"controls without an accessible name on {name}"
    page.screenshot(path=str(SCREENSHOTS / f"{name}-desktop.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(200)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{name} is {width} px wide at 375 px"
    assert unnamed_controls(page) == [], f"controls without an accessible name on {name} at 375 px"
    page.screenshot(path=str(SCREENSHOTS / f"{name}-375.png"), full_page=True)
    page.set_viewport_size(DESKTOP)
