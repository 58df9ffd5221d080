"""Issue 32, item 1, in Chromium: the review screen shows the diff the companion read (a file list that
jumps to each file, changed lines with their numbers, the reviewed commit and the target branch, the
size bound's cut said in words), a push after the review said and the diff read again after the reply
turn, and the list tells two reviews apart by their run, branch and change.
Screenshots at 1366 px and 375 px go to the test's tmp dir (and `shoot`'s, for the shared checks)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from playwright.sync_api import Page, expect

from baton.cli.demo_repo import create_demo_repo
from baton.client.sdk import Client
from baton.errors import NotFoundError
from baton.merge.gitcmd import git_out, run_git
from tests.browser.conftest import DESKTOP, LIVE_SECONDS, PHONE, shoot
from tests.e2e.conftest import LocalStackProcess, wait_for

REVIEW_SECONDS = 60.0
WIDE = {"width": 1366, "height": 900}


def _start_review(operator: Client, prefix: str, config: dict[str, object]) -> str:
    run_id = f"{prefix}-{uuid.uuid4().hex[:8]}"
    operator.start_run("review_gate", {**config, "timeout_seconds": 300, "merge_timeout_seconds": 60}, run_id=run_id)

    def parked() -> bool:
        try:
            review = operator.review(run_id)
        except NotFoundError:
            return False
        return review.status == "pending" and operator.get_run(run_id).status == "paused_waiting_human"

    wait_for(parked, timeout=REVIEW_SECONDS)
    return run_id


def _photograph(page: Page, tmp_path: Path, name: str) -> None:
    """At 1366 px and at 375 px into tmp_path, then `shoot`'s checks (named controls, no sideways scroll)."""
    for label, size in (("1366", WIDE), ("375", PHONE)):
        page.set_viewport_size(size)
        page.wait_for_timeout(300)
        page.screenshot(path=str(tmp_path / f"{name}-{label}.png"), full_page=True)
    page.set_viewport_size(DESKTOP)
    shoot(page, name)


def _commit_on_run_branch(repo: Path, branch: str, name: str, text: str) -> str:
    run_git(repo, "checkout", "--quiet", branch)
    (repo / name).write_text(text)
    run_git(repo, "add", name)
    run_git(repo, "commit", "--quiet", "-m", f"add {name}")
    run_git(repo, "checkout", "--quiet", "main")
    return git_out(repo, "rev-parse", branch)


def _starting(text: str, then: str = "") -> re.Pattern[str]:
    """A name that starts with `text` (Playwright writes a pattern between slashes: a slash is escaped)."""
    return re.compile("^" + re.escape(text).replace("/", r"\/") + then)


def _diff(stack: LocalStackProcess, run_id: str) -> dict[str, object]:
    with stack.http() as http:
        answered = http.get(f"/api/runs/{run_id}/review/diff")
    answered.raise_for_status()
    body: dict[str, object] = answered.json()
    return body


def test_the_review_screen_shows_the_diff_and_the_list_tells_reviews_apart(
    stack: LocalStackProcess, page: Page, tmp_path: Path
) -> None:
    operator = stack.client()
    whole = create_demo_repo(tmp_path / "whole")
    cut = create_demo_repo(tmp_path / "cut", run_branch="baton/run-small")
    run_id = _start_review(operator, "ui-diff", whole.gate_input(merge_into="main"))
    cut_id = _start_review(operator, "ui-cut", cut.gate_input(diff_max_bytes=600))
    review = operator.review(run_id)
    diff = _diff(stack, run_id)
    files = diff["files"]
    assert isinstance(files, list) and len(files) >= 2 and diff["head"] == review.reviewed_head

    page.goto(f"{stack.api_url}/inbox/#/review/{run_id}")
    expect(page.get_by_role("heading", name=f"Review of {whole.run_branch} → main")).to_be_visible()
    expect(page.get_by_label("Reviewed commit")).to_contain_text((review.reviewed_head or "")[:12])
    expect(page.get_by_label("Target branch")).to_contain_text("merges into main")
    listed = page.get_by_role("navigation", name="Changed files").get_by_role("button")
    expect(listed).to_have_text([f["path"] for f in files])

    # A click on the last file jumps to its diff; one of its added lines is there, numbered and coloured.
    last = files[-1]
    hunks = last["text"].split("\n@@", 1)[1]
    added = next(line[1:] for line in hunks.splitlines() if line.startswith("+") and line[1:].strip())
    listed.last.click()
    section = page.get_by_role("region", name=f"Diff of {last['path']}")
    expect(section).to_be_focused()
    expect(section).to_be_in_viewport()
    row = section.locator("tr.add", has_text=added.strip()).first
    expect(row).to_be_visible()
    expect(row.locator("td.ln").nth(1)).to_have_text(re.compile(r"^\d+$"))
    assert row.evaluate("r => getComputedStyle(r).backgroundColor") == "rgb(230, 255, 236)"
    expect(section.locator("td.code span[style*='color']").first).to_be_attached()  # highlighted tokens
    expect(page.get_by_label("Diff truncated")).to_have_count(0)
    _photograph(page, tmp_path, "review-diff")

    # A push after the review: the banner says so; the reply turn reviews the new head and the diff follows.
    moved = _commit_on_run_branch(whole.path, whole.run_branch, "late.py", "LATE = True\n")
    expect(page.get_by_label("Branch moved", exact=True)).to_contain_text(
        "a new turn reviews it", timeout=LIVE_SECONDS * 1000
    )
    page.get_by_role("button", name="Review the new head").click()
    new_diff = page.get_by_role("heading", name=_starting(f"Diff of {moved[:12]}"))
    expect(new_diff).to_be_visible(timeout=REVIEW_SECONDS * 1000)
    expect(listed).to_have_text(sorted([*(f["path"] for f in files), "late.py"]))  # git diff's order
    expect(page.get_by_label("Branch moved", exact=True)).to_have_count(0)

    # The over-bound diff says where it was cut, in words, in the summary and at the files.
    page.goto(f"{stack.api_url}/inbox/#/review/{cut_id}")
    expect(page.get_by_label("Diff truncated")).to_contain_text("Diff truncated at its size bound")
    expect(page.get_by_label("Diff truncated")).to_contain_text("bound 600 bytes")
    expect(page.get_by_label("Target branch")).to_contain_text("the checked-out branch")
    expect(page.get_by_text(re.compile("cut at the size bound|past the size bound")).first).to_be_visible()
    _photograph(page, tmp_path, "review-diff-cut")

    # The list: two reviews, two titles, each naming its run, its branch and its change.
    page.goto(f"{stack.api_url}/inbox/#/")
    first = page.get_by_role("link", name=_starting(f"Review: {run_id} · {whole.run_branch} → main · ", r"\d+ files"))
    second = page.get_by_role("link", name=_starting(f"Review: {cut_id} · {cut.run_branch} → the checked-out branch"))
    expect(first).to_be_visible()
    expect(second).to_be_visible()
    assert first.inner_text() != second.inner_text()
    _photograph(page, tmp_path, "review-list-titles")
    print(f"screenshots in {tmp_path}")
