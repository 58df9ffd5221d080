"""The inbox's interrupt and review screens in Chromium: an interrupt resumed through the form generated
from its JSON Schema (the browser's validation, then the server's 422 at the field, then a valid value
with a state edit previewed), another operator's claim shown and taken over, a cancel with a reason,
and a review dialogue walked to a squash merge through a rejected merge."""

from __future__ import annotations

import math
import uuid
from pathlib import Path

from playwright.sync_api import Page, Request, expect

from baton.api.auth import operator_token
from baton.cli.demo_repo import DemoRepo, create_demo_repo
from baton.client.sdk import Client
from baton.errors import NotFoundError
from baton.merge.gitcmd import git_out, run_git
from tests.browser.conftest import DESKTOP, LIVE_SECONDS, PHONE, shoot
from tests.e2e.conftest import LocalStackProcess, wait_for

# The server bounds an `email` at 254 characters (RFC 5321; layers/baton/python/baton/domain/schema_formats.py),
# the browser's validator only its parts (64 + 253), a rule the schema itself does not state: so a longer
# address passes the browser's check and only the server refuses it.
RELEASE_SCHEMA = {
    "type": "object",
    "title": "Release",
    "properties": {
        "release": {"type": "string", "title": "Release name", "pattern": "^[a-z]+-[a-z]+-[a-z]+$"},
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "default": 1},
        "owner": {"type": "string", "title": "Owner", "format": "email"},
    },
    "required": ["release"],
}
LONG_ADDRESS = "a" * 64 + "@" + ("b" * 60 + ".") * 3 + "example.com"  # 259 characters, each part in bounds
REVIEW_SECONDS = 60.0


def _session(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_resume_an_interrupt_through_the_form_with_a_422_then_a_valid_value_and_a_state_edit(
    stack: LocalStackProcess, page: Page
) -> None:
    operator = stack.client()
    rec = operator.create_interrupt(
        session_id=_session("ui-int"),
        prompt="Name the release",
        json_schema=RELEASE_SCHEMA,
        state={"config": {"flag": False, "replicas": 1}},
    )
    resumes: list[Request] = []
    page.on("request", lambda r: resumes.append(r) if r.url.endswith(f"/{rec.interrupt_id}/resume") else None)
    page.goto(f"{stack.api_url}/inbox/#/interrupt/{rec.interrupt_id}")
    expect(page.get_by_role("heading", name="Name the release")).to_be_visible()
    expect(page.get_by_text("Claimed by you (local-operator) until")).to_be_visible()  # claimed on open
    assert operator.get_interrupt(rec.interrupt_id).claimed_by == "local-operator"
    page.get_by_text("State snapshot").click()
    expect(page.get_by_label("State snapshot")).to_contain_text('"flag": false')

    # The browser validates with the same schema: nothing is sent.
    name = page.get_by_label("Release name")
    name.fill("Not A Name")
    page.get_by_role("button", name="Resume").click()
    expect(page.get_by_text("String does not match pattern")).to_be_visible()
    assert resumes == []

    # The server validates again: its 422 shows next to the field and the interrupt stays open.
    name.fill("blue-green-canary")
    owner = page.get_by_label("Owner")
    owner.fill(LONG_ADDRESS)
    page.get_by_role("button", name="Resume").click()
    expect(page.get_by_text("the server refused it: must be email")).to_be_visible()
    assert len(resumes) == 1
    shoot(page, "interrupt-422")
    assert operator.get_interrupt(rec.interrupt_id).status == "pending"

    owner.fill("")
    page.get_by_label("One path=value per line").fill("config.flag=true\nconfig.owner=ada")
    changes = page.get_by_role("list", name="State changes")
    expect(changes).to_contain_text("config.flag: false → true")
    expect(changes).to_contain_text('config.owner: (missing) → "ada"')
    shoot(page, "interrupt")
    page.get_by_role("button", name="Resume").click()
    expect(page.get_by_text("Resumed by local-operator.")).to_be_visible()
    done = operator.get_interrupt(rec.interrupt_id)
    assert done.status == "answered" and done.resolved_by == "local-operator"
    assert done.value == {"release": "blue-green-canary", "replicas": 1}
    assert done.edited_state == {"config": {"flag": True, "replicas": 1, "owner": "ada"}}


def test_another_operators_claim_is_shown_taken_over_and_the_interrupt_cancelled(
    stack: LocalStackProcess, page: Page
) -> None:
    operator = stack.client()
    rec = operator.create_interrupt(
        session_id=_session("ui-claim"),
        prompt="Deploy where?",
        schema={"type": "enum", "enum": ["staging", "production"]},
        state={"build": {"sha": "abc1234"}},
    )
    Client(stack.api_url, operator_token(stack.token, "alice")).claim_interrupt(rec.interrupt_id)
    page.goto(f"{stack.api_url}/inbox/#/interrupt/{rec.interrupt_id}")
    claim = page.get_by_role("alert").filter(has_text="Claimed by alice")
    expect(claim).to_be_visible()
    shoot(page, "interrupt-claimed")
    assert operator.get_interrupt(rec.interrupt_id).claimed_by == "alice"  # opening it did not take it

    expect(claim.get_by_role("button", name="Take over")).to_be_disabled()  # a take-over needs a reason
    claim.get_by_label("Reason to take over").fill("alice is away")
    claim.get_by_role("button", name="Take over").click()
    expect(page.get_by_text("Claimed by you (local-operator) until")).to_be_visible()
    assert operator.get_interrupt(rec.interrupt_id).claimed_by == "local-operator"
    claimed = [e.data for e in operator.events(rec.session_id, limit=100).events if e.type == "interrupt_claimed"]
    assert claimed[-1]["by"] == "local-operator" and claimed[-1]["previous"] == "alice"
    assert claimed[-1]["reason"] == "alice is away"

    # A claim made elsewhere after opening shows within the screen's refresh.
    bob = Client(stack.api_url, operator_token(stack.token, "bob"))
    bob.claim_interrupt(rec.interrupt_id, force=True, reason="on call")
    expect(page.get_by_role("alert").filter(has_text="Claimed by bob")).to_be_visible(timeout=6000)

    page.get_by_label("Reason to cancel").fill("wrong target")
    page.get_by_role("button", name="Cancel interrupt").click()
    expect(page.get_by_text("Cancelled: wrong target")).to_be_visible()
    done = operator.get_interrupt(rec.interrupt_id)
    assert done.status == "cancelled" and done.reason == "wrong target"


def test_walk_a_review_dialogue_through_a_rejected_merge_to_a_squash_merge(
    stack: LocalStackProcess, page: Page, tmp_path: Path
) -> None:
    operator = stack.client()
    repo = create_demo_repo(tmp_path / "repo")
    run_id = _session("ui-review")
    config = repo.gate_input(
        timeout_seconds=300, merge_timeout_seconds=60, review_url="https://preview.example.com/{run_id}"
    )
    operator.start_run("review_gate", config, run_id=run_id)

    def parked() -> bool:
        try:
            review = operator.review(run_id)
        except NotFoundError:  # the gate has not opened yet
            return False
        return review.status == "pending" and operator.get_run(run_id).status == "paused_waiting_human"

    wait_for(parked, timeout=REVIEW_SECONDS)
    page.goto(f"{stack.api_url}/inbox/#/review/{run_id}")
    steps = page.get_by_role("region", name="Test steps").get_by_role("listitem")
    expect(steps.first).to_be_visible()
    assert steps.count() == len(operator.review(run_id).thread[0].test_steps)
    verdict = page.get_by_role("region", name="Verdict")
    expect(verdict).to_contain_text("approve")
    given = operator.review(run_id).thread[0].verdict or {}
    assert isinstance(given.get("confidence"), int | float), given  # the verdict with its confidence
    expect(verdict).to_contain_text(f"confidence {math.floor(given['confidence'] * 100 + 0.5)}%")  # JS Math.round
    for blocker in given.get("blockers") or ["No blockers."]:
        expect(verdict).to_contain_text(str(blocker))
    for action in ("Approve & merge", "Force-merge", "Request changes"):
        expect(page.get_by_role("button", name=action)).to_be_enabled()
    expect(page.get_by_label("Diff stats")).to_contain_text("3 files changed")
    thread = page.get_by_role("list", name="Review thread").locator("> li")
    expect(thread).to_have_count(1)
    link = page.get_by_role("link", name="Open review environment")
    expect(link).to_have_attribute("href", f"https://preview.example.com/{run_id}")
    shoot(page, "review")

    page.get_by_label("Reply to the companion").fill("what should I test first?")
    page.get_by_role("button", name="Send reply").click()
    expect(thread).to_have_count(3, timeout=REVIEW_SECONDS * 1000)  # the reply and the companion's answer
    expect(thread.nth(1)).to_contain_text("what should I test first?")

    # The merge guard refuses a dirty working tree: its reason shows and the buttons stay usable.
    readme = repo.path / "README.md"
    original = readme.read_text()
    readme.write_text(original + "local edit\n")
    approve = page.get_by_role("button", name="Approve & merge")
    expect(approve).to_be_enabled(timeout=REVIEW_SECONDS * 1000)
    approve.click()
    reason = page.get_by_role("alert", name="Why the last merge did not land")
    expect(reason).to_contain_text("uncommitted changes", timeout=REVIEW_SECONDS * 1000)
    expect(approve).to_be_enabled(timeout=REVIEW_SECONDS * 1000)
    # On a 375 px phone the reason sits right beside the merge buttons, on screen with them.
    page.set_viewport_size(PHONE)
    page.locator(".merge .actions").evaluate("el => el.scrollIntoView({block: 'start'})")
    buttons, why = page.locator(".merge .actions").bounding_box(), reason.bounding_box()
    assert buttons is not None and why is not None
    assert 0 <= why["y"] - (buttons["y"] + buttons["height"]) <= 24, (buttons, why)  # just below them
    assert why["y"] + why["height"] <= PHONE["height"], "the reason is off screen when the buttons are on it"
    page.set_viewport_size(DESKTOP)
    # The guard's red reason is the latest word: the green "Sent" of the rejected click is gone (issue 28).
    expect(page.locator(".merge p.ok")).to_have_count(0)
    shoot(page, "review-rejected")
    assert git_out(repo.path, "rev-parse", "main") == repo.base_commit

    readme.write_text(original)
    page.get_by_label("Strategy").select_option("squash")
    page.get_by_label("Squash commit message or feedback (optional)").fill("Ship the greeter")
    approve.click()
    status = page.get_by_role("status", name="Review status")
    expect(status).to_contain_text("merge merged", timeout=REVIEW_SECONDS * 1000)
    expect(status).to_contain_text("run succeeded", timeout=REVIEW_SECONDS * 1000)
    shoot(page, "review-merged")
    assert git_out(repo.path, "rev-parse", "main^") == repo.base_commit  # one squash commit on main
    assert git_out(repo.path, "log", "-1", "--format=%B", "main").startswith("Ship the greeter")
    run = operator.get_run(run_id)
    assert run.merge_status == "merged" and run.final_commit == git_out(repo.path, "rev-parse", "main")


def _open_review(stack: LocalStackProcess, page: Page, repo: DemoRepo, prefix: str) -> tuple[Client, str]:
    operator = stack.client()
    run_id = _session(prefix)
    operator.start_run("review_gate", repo.gate_input(timeout_seconds=300, merge_timeout_seconds=60), run_id=run_id)

    def parked() -> bool:
        try:
            review = operator.review(run_id)
        except NotFoundError:
            return False
        return review.status == "pending" and operator.get_run(run_id).status == "paused_waiting_human"

    wait_for(parked, timeout=REVIEW_SECONDS)
    page.goto(f"{stack.api_url}/inbox/#/review/{run_id}")
    return operator, run_id


def _commit_on_run_branch(repo: DemoRepo, name: str, text: str) -> str:
    run_git(repo.path, "checkout", "--quiet", repo.run_branch)
    (repo.path / name).write_text(text)
    run_git(repo.path, "add", name)
    run_git(repo.path, "commit", "--quiet", "-m", f"add {name}")
    run_git(repo.path, "checkout", "--quiet", "main")
    return git_out(repo.path, "rev-parse", repo.run_branch)


def test_review_buttons_follow_a_blocking_verdict_and_force_merge_asks_for_a_reason(
    stack: LocalStackProcess, page: Page, tmp_path: Path
) -> None:
    """Issue 28 items 1 and 2 in the inbox: with blockers approve is not offered and Request changes is the
    primary action; a push after the review is shown and a new review turn asked for with one click;
    Force-merge is a confirm step whose reason is required and recorded with the decision."""
    repo = create_demo_repo(tmp_path / "repo")
    _commit_on_run_branch(repo, "wip.py", "# TODO: handle empty names\n")  # a blocker for the companion
    operator, run_id = _open_review(stack, page, repo, "ui-blocked")
    expect(page.get_by_role("region", name="Verdict")).to_contain_text("request_changes")
    actions = page.locator(".merge .actions").get_by_role("button")
    expect(actions).to_have_text(["Force-merge", "Request changes"])  # no "Approve & merge"
    expect(page.get_by_role("button", name="Request changes")).to_have_class("primary")
    reviewed = operator.review(run_id).reviewed_head or ""
    expect(page.get_by_label("Reviewed commit")).to_contain_text(reviewed[:12])

    # Force-merge is never one click: a confirm step, its reason required; Cancel closes it unsent.
    page.get_by_role("button", name="Force-merge").click()
    confirm = page.get_by_role("group", name="Confirm force-merge")
    expect(confirm.get_by_role("button", name="Confirm force-merge")).to_be_disabled()
    confirm.get_by_role("button", name="Cancel").click()
    expect(confirm).to_have_count(0)
    assert operator.review(run_id).status == "pending"

    # A commit pushed after the review: the screen says so and asks the companion to review the new head.
    moved = _commit_on_run_branch(repo, "late.py", "LATE = True\n")
    warning = page.get_by_role("alert", name="Run branch moved")
    expect(warning).to_contain_text(moved[:12], timeout=LIVE_SECONDS * 1000)
    expect(page.get_by_role("button", name="Force-merge")).to_be_disabled()  # the server would refuse it
    shoot(page, "review-moved")
    warning.get_by_role("button", name="Review the new head").click()
    expect(page.get_by_label("Reviewed commit")).to_contain_text(moved[:12], timeout=REVIEW_SECONDS * 1000)
    expect(warning).to_have_count(0)

    page.get_by_role("button", name="Force-merge").click()
    confirm.get_by_label("Reason to force-merge (required)").fill("the TODO is tracked in issue 7")
    shoot(page, "review-force-confirm")
    confirm.get_by_role("button", name="Confirm force-merge").click()
    status = page.get_by_role("status", name="Review status")
    expect(status).to_contain_text("merge merged", timeout=REVIEW_SECONDS * 1000)
    answered = [e.data for e in operator.events(run_id, limit=500).events if e.type == "interaction_answered"]
    assert answered[-1]["answer"]["action"] == "force_merge"
    assert answered[-1]["answer"]["reason"] == "the TODO is tracked in issue 7"
    assert answered[-1]["answer"]["reviewed_head"] == moved
    assert git_out(repo.path, "log", "-1", "--format=%B", "main").rstrip().endswith(f"Baton-Run-Head: {moved}")


def test_request_changes_from_the_inbox_ends_the_review(stack: LocalStackProcess, page: Page, tmp_path: Path) -> None:
    repo = create_demo_repo(tmp_path / "repo")
    operator, run_id = _open_review(stack, page, repo, "ui-changes")
    page.get_by_label("Squash commit message or feedback (optional)").fill("Handle an empty title")
    page.get_by_role("button", name="Request changes").click()
    expect(page.get_by_role("status", name="Review status")).to_contain_text(
        "run succeeded", timeout=REVIEW_SECONDS * 1000
    )
    output = operator.get_run(run_id).output or {}
    assert output["decision"] == "changes_requested" and output["feedback"] == "Handle an empty title"
