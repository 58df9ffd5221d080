"""Slack answers every pause a person answers, through the services the API uses: asks (options as
buttons, free text in a modal), quorum votes (each click one operator's vote, the buttons kept until the
quorum is met, the requester refused), reviews (the verdict and steps, Request changes / Approve & merge
through the review service with its guards), and awaits (their questions listed, each with its buttons)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from baton.adapters.companion_offline import OfflineCompanion
from baton.adapters.git_diff import GitDiffSource
from baton.channels.slack.app import SlackAppPoster
from baton.channels.slack.worker import SlackWorker
from baton.cli.demo_repo import create_demo_repo
from baton.contracts import AskRequest, BlockingAskRequest
from baton.domain.approval import ApprovalPolicy
from baton.domain.gate_payloads import ParkPayload
from baton.notify.model import Notification
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.asks import AskService
from baton.services.questions import QuestionService
from baton.services.review import ReviewService
from baton.services.runs import RunService
from tests.fakes import MemoryBuildRecords
from tests.unit.test_slack_interactions import Harness, _click

if TYPE_CHECKING:
    from pathlib import Path

    from baton.services.core import Core


@pytest.fixture
def harness(core: Core) -> Harness:
    return Harness(core)


def _actions(blocks: list[dict[str, Any]]) -> list[str]:
    return [e.get("action_id", "") for b in blocks if b["type"] == "actions" for e in b["elements"]]


def _values(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [json.loads(e["value"]) for b in blocks if b["type"] == "actions" for e in b["elements"] if "value" in e]


def test_an_ask_is_answered_from_its_buttons_through_the_resume_path(harness: Harness) -> None:
    core = harness.core
    asked = AskService(core).ask(
        "run-ask",
        BlockingAskRequest(node="deploy", question="Drop the table?", timeout_seconds=600, options=["yes", "no"]),
        caller="agent",
    )
    from baton.channels.slack.blocks import message_blocks

    blocks = message_blocks(asked, inbox_url="http://inbox/")
    assert _actions(blocks) == ["baton_option_0", "baton_option_1"]  # no free text when it has options
    harness.post(_click("run-ask", asked.interaction_id, 1))
    harness.post({**_click("run-ask", asked.interaction_id, 0, user="U0BOB"), "trigger_id": "t-2"})
    alice, bob = harness.jobs.jobs
    assert harness.worker.run(alice) == "answered by alice@example.com with no"
    stored = core.store.get_interaction("run-ask", asked.interaction_id)
    assert stored is not None and (stored.state.answer, stored.state.answered_by) == (
        {"answer": "no"},
        "alice@example.com",
    )
    assert harness.worker.run(bob).startswith("already answered by alice@example.com")
    answered = [e for e in core.store.list_events("run-ask") if e.type == "interaction_answered"]
    assert len(answered) == 1 and answered[0].data["by"] == "alice@example.com"


def test_a_hosted_pause_takes_free_text_from_its_modal_and_sends_the_token(harness: Harness) -> None:
    core = harness.core
    RunService(core).start("human_pause", {"prompt": "Ship it?", "timeout_seconds": 600}, run_id="run-p", caller="op")
    pause = RunService(core).park(
        ParkPayload(run_id="run-p", node="approve", token="tok-p", prompt="Ship it?", timeout_seconds=600)
    )
    assert harness.post(_click("run-p", pause.interaction_id, None)).status == 200
    (view,) = harness.slack.opened
    values = {"answer": {"value": {"type": "plain_text_input", "value": "ship on Monday"}}}
    submit = {
        "type": "view_submission",
        "user": {"id": "U0ALICE"},
        "view": {
            "callback_id": view["callback_id"],
            "private_metadata": view["private_metadata"],
            "state": {"values": values},
        },
    }
    assert harness.post(submit).status == 200
    (job,) = harness.jobs.jobs
    assert harness.worker.run(job) == "answered by alice@example.com with ship on Monday"
    sent = core.tokens.sent  # type: ignore[attr-defined]
    assert [(kind, token) for kind, token, _ in sent] == [("success", "tok-p")]
    assert sent[0][2]["answers"] == {"answer": "ship on Monday"}


def test_a_quorum_question_counts_each_click_as_a_vote_and_keeps_its_buttons(harness: Harness) -> None:
    core = harness.core
    asked = QuestionService(core).ask(
        "run-q",
        AskRequest(
            node="release",
            question="Release?",
            options=["ship", "hold"],
            approval=ApprovalPolicy(approvals=1, approve_option="ship"),
        ),
        caller="alice@example.com",
    )
    iid = str(asked["interaction_id"])
    harness.post(_click("run-q", iid, 0))  # alice asked: she may not approve her own pause
    (refused,) = harness.jobs.jobs
    assert "separation of duties" in harness.worker.run(refused)
    assert core.store.get_interaction("run-q", iid).state.status == "pending"  # type: ignore[union-attr]
    harness.post({**_click("run-q", iid, 0, user="U0BOB"), "trigger_id": "t-2"})
    said = harness.worker.run(harness.jobs.jobs[-1])
    assert said.startswith("quorum approved with bob@example.com's vote (1 of 1 approvals): answered with ship")


def test_a_vote_short_of_the_quorum_is_counted_and_the_buttons_stay(harness: Harness) -> None:
    core = harness.core
    asked = QuestionService(core).ask(
        "run-q2",
        AskRequest(
            node="release",
            question="Release?",
            options=["ship", "hold"],
            approval=ApprovalPolicy(approvals=2, approve_option="ship"),
        ),
        caller="agent",
    )
    iid = str(asked["interaction_id"])
    harness.post(_click("run-q2", iid, 0))
    said = harness.worker.run(harness.jobs.jobs[-1])
    assert said == "alice@example.com's vote counted: ship (1 of 2 approvals; waiting for more votes)"
    ((_, body),) = harness.slack.responses
    assert body["replace_original"] is True and _actions(body["blocks"])[:2] == ["baton_option_0", "baton_option_1"]
    assert core.store.get_interaction("run-q2", iid).state.status == "pending"  # type: ignore[union-attr]


@pytest.fixture
def review(core: Core) -> ReviewService:
    return ReviewService(
        core,
        companion=OfflineCompanion,
        runner=lambda: None,  # type: ignore[arg-type,return-value]
        records=MemoryBuildRecords(),
        diffs=GitDiffSource(),
        merge_runner_kind="local",
    )


def test_a_review_shows_its_verdict_and_steps_and_its_buttons_go_through_the_review_service(
    harness: Harness, review: ReviewService, tmp_path: Path
) -> None:
    core = harness.core
    repo = create_demo_repo(tmp_path / "repo")
    review.first_turn("r1", repo.gate_input(max_turns=3))
    review.park("r1", "ship_review", "tok-1")
    (pending,) = [i for i in core.store.list_run_interactions("r1") if i.request.kind == "review"]
    poster = SlackAppPoster(
        lambda: None,  # type: ignore[arg-type,return-value]
        channel="C1",
        inbox_url="http://inbox/",
        lookup=core.store.get_interaction,
        turns=core.store.list_turns,
    )
    blocks = poster.blocks_of(pending)
    text = json.dumps(blocks)
    assert "verdict" in text and "Test steps" in text
    assert _actions(blocks) == ["baton_review_request_changes", "baton_review_approve_merge", "baton_open_inbox"]
    services = Services(settings=Settings(BATON_TABLE_NAME="t"), core=core, runs=RunService(core), review=review)
    worker = SlackWorker(services, harness.slack)
    click = _click("r1", pending.interaction_id, None)
    click["actions"][0]["action_id"] = "baton_review_request_changes"
    assert harness.post(click).status == 200
    assert worker.run(harness.jobs.jobs[-1]) == "changes requested by alice@example.com"
    sent = core.tokens.sent  # type: ignore[attr-defined]
    assert sent[-1][1] == "tok-1" and sent[-1][2]["action"] == "request_changes"
    again = {**_click("r1", pending.interaction_id, None, user="U0BOB"), "trigger_id": "t-9"}
    again["actions"][0]["action_id"] = "baton_review_approve_merge"
    harness.post(again)
    assert worker.run(harness.jobs.jobs[-1]).startswith("not answered: the review at gate 'ship_review' is not waiting")
    forged = {**_click("r1", pending.interaction_id, None), "trigger_id": "t-10"}
    forged["actions"][0]["action_id"] = "baton_review_force_merge"  # not a button Baton shows
    assert harness.post(forged).status == 400


def test_an_await_lists_its_questions_each_with_its_own_buttons(harness: Harness) -> None:
    core = harness.core
    questions = QuestionService(core)
    first = questions.ask("run-a", AskRequest(node="n1", question="Region?", options=["eu", "us"]), caller="agent")
    second = questions.ask("run-a", AskRequest(node="n2", question="Why?"), caller="agent")
    from baton.models import AwaitToolRequest, Interaction

    gate = Interaction(
        interaction_id="aw1",
        run_id="run-a",
        created_at="2026-12-01T00:00:00.000Z",
        request=AwaitToolRequest(
            node="tool", prompt="waiting for 2 answer(s)", pending=[first["interaction_id"], second["interaction_id"]]
        ),
    )
    core.store.put_interaction(gate)
    posted: list[dict[str, Any]] = []

    class Client:
        def chat_postMessage(self, **kwargs: Any) -> Any:
            posted.append(kwargs)
            return type("Response", (), {"status_code": 200})()

    poster = SlackAppPoster(
        lambda: Client(), channel="C1", inbox_url="http://inbox/", lookup=core.store.get_interaction
    )  # type: ignore[arg-type,return-value]
    poster.post(Notification(event="await_started", kind="await", run_id="run-a", interaction_id="aw1", prompt="wait"))
    (message,) = posted
    assert [v["i"] for v in _values(message["blocks"])] == [
        first["interaction_id"],
        first["interaction_id"],
        second["interaction_id"],
    ]
    assert "Region?" in json.dumps(message["blocks"]) and "Why?" in json.dumps(message["blocks"])
    harness.post(_click("run-a", str(first["interaction_id"]), 1))
    assert harness.worker.run(harness.jobs.jobs[-1]) == "answered by alice@example.com with us"
