"""Issue 32's small things in Chromium (point 3 and item 6), and the review's text (item 1, the parts that
need no API change): the run timeline reads as sentences, not JSON; an interrupt page shows its settled
state after a resume; on a 375 px phone the filters fold behind one button; `/inbox/config.json` answers
on the local stack; Esc leaves the search field; a review lists the companion's steps once, renders
Markdown without running HTML, and says its times in words with the ISO in a tooltip."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from playwright.sync_api import Page, Response, expect

from baton.cli.demo_repo import create_demo_repo
from tests.browser.conftest import DESKTOP, PHONE, agent, shoot
from tests.browser.test_inbox_gates import REVIEW_SECONDS, _commit_on_run_branch, _open_review
from tests.e2e.conftest import LocalStackProcess

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
RELEASE_SCHEMA = {
    "type": "object",
    "properties": {"release": {"type": "string"}, "replicas": {"type": "integer"}},
    "required": ["release"],
}


def _run(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_the_run_timeline_reads_as_sentences_not_json(stack: LocalStackProcess, page: Page) -> None:
    run_id = _run("ui-timeline")
    iid = agent(stack, run_id).ask_async(run_id, "draft", "Proceed?", options=["yes", "no"]).interaction_id
    operator = stack.client()
    operator.answer(run_id, iid, "yes")
    rec = operator.create_interrupt(session_id=run_id, prompt="Name the release", json_schema=RELEASE_SCHEMA)
    operator.resume_interrupt(rec.interrupt_id, {"release": "blue-green", "replicas": 2}, ["config.flag=true"])
    page.goto(f"{stack.api_url}/inbox/#/run/{run_id}")
    timeline = page.get_by_role("list", name="Event timeline")
    expect(timeline.locator("> li").first).to_be_visible()
    answered = timeline.locator("> li", has_text="interaction answered")
    expect(answered).to_contain_text("by local-operator")
    expect(answered.locator("dt")).to_contain_text(["node", "kind", "answer"])
    expect(answered).to_contain_text("yes")
    resumed = timeline.locator("> li", has_text="interrupt resumed")
    expect(resumed).to_contain_text("release blue-green; replicas 2")  # the input in words
    expect(resumed).to_contain_text("config.flag=true")
    # Each event's time in words; the exact ISO moment in its tooltip.
    when = answered.locator("time")
    expect(when).to_have_text(re.compile(r"^\d+ (s|min) ago$"))
    expect(when).to_have_attribute("title", ISO)
    text = timeline.inner_text()
    assert "{" not in text and '"' not in text, text  # no JSON anywhere
    assert "_" not in text.replace(run_id, ""), text  # event types and keys in words, not identifiers
    shoot(page, "run-timeline")


def test_after_a_resume_the_interrupt_page_shows_the_settled_state(stack: LocalStackProcess, page: Page) -> None:
    rec = stack.client().create_interrupt(
        session_id=_run("ui-settled"),
        prompt="Ship it?",
        schema={"type": "enum", "enum": ["yes", "no"], "default": "yes", "title": "Ship"},
        state={"config": {"flag": False}},
        timeout_ms=60 * 60 * 1000,
    )
    page.goto(f"{stack.api_url}/inbox/#/interrupt/{rec.interrupt_id}")
    status = page.get_by_label("Interrupt status")
    expect(status).to_contain_text("pending · expires in 59 min")
    expect(page.get_by_text("Claimed by you (local-operator) until")).to_be_visible()
    page.get_by_label("One path=value per line").fill("config.flag=true")
    page.get_by_role("button", name="Resume").click()
    expect(page.get_by_text("Resumed by local-operator.")).to_be_visible()
    # The page is the settled interrupt now: no deadline, who resumed it and when, the state it went on with.
    expect(status).to_contain_text(f"interrupt {rec.interrupt_id} · answered · by local-operator")
    expect(status).not_to_contain_text("expires")
    expect(status.locator("time")).to_have_text(re.compile(r"^\d+ s ago$"))
    expect(page.get_by_label("Resumed with")).to_have_text("resumed with yes")
    page.get_by_text("State after the resume (with the edits)").click()
    expect(page.get_by_label("State snapshot")).to_contain_text('"flag": true')
    expect(page.get_by_role("button", name="Resume")).to_have_count(0)
    shoot(page, "interrupt-settled")


def test_on_a_phone_the_filters_fold_behind_one_button(stack: LocalStackProcess, page: Page) -> None:
    run_id = _run("ui-phone")
    agent(stack, run_id).ask_async(run_id, "draft", "Phone first?", options=["yes", "no"])
    page.set_viewport_size(PHONE)
    page.goto(f"{stack.api_url}/inbox/#/")
    toggle = page.get_by_role("button", name="Filters")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_label("Search")).to_be_visible()
    for name in ("Filter by kind", "Filter by run", "Filter by node", "Filter by claim", "Filter by age", "Order"):
        expect(page.get_by_label(name)).to_be_hidden()
    form = page.get_by_role("search", name="Filter the inbox").bounding_box()
    assert form is not None and form["height"] <= 60, form  # one line, not half the first screen
    first = page.get_by_role("listitem").filter(has_text="Phone first?").bounding_box()
    assert first is not None and first["y"] + first["height"] <= PHONE["height"] / 2, first
    shoot(page, "list-phone-filters-folded")  # shoot() goes back to the desktop width when done

    page.set_viewport_size(PHONE)
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    page.get_by_label("Filter by kind").select_option("question")
    expect(toggle).to_have_text("Filters (1)")  # a folded form still says a filter is on
    toggle.click()
    expect(page.get_by_label("Filter by kind")).to_be_hidden()
    # On a wide screen the filters are always shown and the button is not.
    page.set_viewport_size(DESKTOP)
    expect(toggle).to_be_hidden()
    expect(page.get_by_label("Filter by kind")).to_be_visible()


def test_on_a_phone_the_header_settings_fold_behind_one_menu_button(stack: LocalStackProcess, page: Page) -> None:
    page.set_viewport_size(PHONE)
    page.goto(f"{stack.api_url}/inbox/#/")
    expect(page.get_by_role("heading", name="Waiting for a person")).to_be_visible()
    menu = page.get_by_role("button", name="Menu")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_role("button", name="Set away")).to_be_hidden()
    header = page.locator("header.top").bounding_box()
    assert header is not None and header["height"] <= 60, header  # one line: the list starts near the top
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_role("button", name="Set away")).to_be_visible()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    shoot(page, "header-phone-menu-open")  # shoot() goes back to the desktop width when done
    expect(menu).to_be_hidden()  # on a wide screen the settings are always shown and the button is not
    expect(page.get_by_role("button", name="Set away")).to_be_visible()


def test_the_local_stack_answers_the_apps_config_read(stack: LocalStackProcess, page: Page) -> None:
    answers: list[Response] = []
    page.on("response", lambda response: answers.append(response))
    page.goto(f"{stack.api_url}/inbox/#/")
    page.reload()  # a whole load (the sign-in already landed on this page: a goto alone changes only the hash)
    expect(page.get_by_role("heading", name="Waiting for a person")).to_be_visible()
    page.wait_for_load_state("networkidle")
    config = [r for r in answers if r.url.endswith("/inbox/config.json")]
    assert config and {r.status for r in config} == {200}, [r.status for r in config]
    assert config[-1].json() == {"sign_in": "session_cookie"}
    assert [r.url for r in answers if r.status >= 400] == []
    expect(page.locator(".who-am-i")).to_have_text("local-operator")  # still the cookie's sign-in


def test_esc_leaves_the_search_so_j_and_k_move_again(stack: LocalStackProcess, page: Page) -> None:
    run_id = _run("ui-esc")
    for prompt in ("First?", "Second?"):
        agent(stack, run_id).ask_async(run_id, "draft", prompt, options=["yes", "no"])
    page.goto(f"{stack.api_url}/inbox/#/")
    page.get_by_label("Filter by run").fill(run_id)
    rows = page.get_by_role("list", name="Pending items").locator("> li")
    expect(rows).to_have_count(2)
    search = page.get_by_label("Search")
    page.get_by_label("Filter by run").press("Escape")
    page.keyboard.press("/")
    expect(search).to_be_focused()
    page.keyboard.press("Escape")
    expect(search).not_to_be_focused()
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(search).to_have_value("")  # the keys moved the focus, they were not typed into the search
    expect(rows.nth(1)).to_be_focused()
    page.keyboard.press("k")
    expect(rows.nth(0)).to_be_focused()


def test_a_review_lists_its_steps_once_renders_markdown_safely_and_says_times_in_words(
    stack: LocalStackProcess, page: Page, tmp_path: Path
) -> None:
    repo = create_demo_repo(tmp_path / "repo")
    _commit_on_run_branch(repo, "wip.py", "# TODO: handle empty names\n")  # a blocker naming `wip.py`
    operator, run_id = _open_review(stack, page, repo, "ui-review-text")
    steps = operator.review(run_id).thread[0].test_steps
    assert steps
    # The verdict's Markdown: its blocker's backticked path is code, its summary shown.
    verdict = page.get_by_role("region", name="Verdict")
    expect(verdict.get_by_role("list", name="Blockers").locator("code")).to_have_text(["wip.py"])
    expect(verdict).to_contain_text("1 blocker(s) found; fix them before merging.")
    assert "`" not in verdict.inner_text()
    thread = page.get_by_role("list", name="Review thread").locator("> li")
    expect(thread).to_have_count(1, timeout=REVIEW_SECONDS * 1000)
    # An operator's reply with HTML in it: shown as the characters it is, never run; its Markdown rendered.
    page.get_by_label("Reply to the companion").fill(
        "<img src=x onerror=\"document.title='pwned'\"> does **greet** handle `''`?"
    )
    page.get_by_role("button", name="Send reply").click()
    expect(thread).to_have_count(3, timeout=REVIEW_SECONDS * 1000)  # the reply and the companion's answer

    listed = page.get_by_role("list", name="Test steps").locator("> li")
    expect(listed).to_have_count(len(steps))
    # Once: the first turn and the reply's "the test steps again" no longer repeat the numbered list.
    expect(page.get_by_role("list", name="Review thread").locator("ol")).to_have_count(0)
    # The companion's own Markdown list (its blockers) is a list.
    expect(thread.nth(0).locator("ul > li code")).to_have_text(["wip.py"])
    expect(page.get_by_role("list", name="Review thread")).not_to_contain_text("Test steps:")
    expect(thread.nth(0).locator(".note")).to_have_text("The test steps: listed once, above the thread.")
    expect(thread.nth(2).locator(".note")).to_have_text("The test steps: listed once, above the thread.")

    reply = thread.nth(1)
    expect(reply.locator("strong")).to_have_text("greet")
    expect(reply.locator("code")).to_have_text("''")
    expect(reply).to_contain_text("<img src=x onerror=\"document.title='pwned'\">")
    expect(reply.locator("img")).to_have_count(0)
    assert page.title() == "Baton inbox"
    # The companion's backticked paths are code, not backticks.
    expect(thread.nth(2).locator("code").first).to_be_visible()
    assert "`" not in page.get_by_role("list", name="Review thread").inner_text()

    # Times in words, each with its ISO moment in the tooltip.
    for n in range(3):
        when = thread.nth(n).locator(".who time")
        expect(when).to_have_text(re.compile(r"^\d+ (s|min) ago$"))
        expect(when).to_have_attribute("title", ISO)
    shoot(page, "review-text")
