"""The Slack app's HTTP side against a fake Slack on 127.0.0.1: the notification posted as the app
(`chat.postMessage` with the interaction's buttons, or the inbox link), the worker's replies
(`response_url`, `chat.update`), and the incoming-webhook path still there for teams without an app."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from baton.channels.slack.app import SlackAppPoster, SlackWebReplies, web_client
from baton.channels.slack.config import SlackAppConfig
from baton.models import Interaction, InterruptRequest, QuestionRequest
from baton.notify.config import SlackConfig
from baton.notify.model import Notification
from tests.fakes.slack_api import FakeSlack


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    yield fake
    fake.close()


def _config(slack: FakeSlack) -> SlackAppConfig:
    return SlackAppConfig.from_env(
        {
            "SLACK_SIGNING_SECRET": "s",
            "SLACK_BOT_TOKEN": "xoxb-integration",
            "SLACK_API_URL": f"{slack.url}/api/",
            "SLACK_CHANNEL": "C0BATON",
            "BATON_INBOX_URL": "https://inbox.example.com/",
        }
    )


QUESTION = Interaction(
    interaction_id="01Q",
    run_id="run-1",
    created_at="2026-01-01T00:00:00Z",
    request=QuestionRequest(node="draft", prompt="Ship it?", options=["ship", "hold"], allow_free_text=False),
)
NESTED = Interaction(
    interaction_id="01N",
    run_id="sess-1",
    created_at="2026-01-01T00:00:00Z",
    request=InterruptRequest(
        node="gate", prompt="Plan?", json_schema={"type": "object", "properties": {"a": {"type": "object"}}}
    ),
)


def _notification(interaction: Interaction) -> Notification:
    return Notification(
        event="human_input_requested",
        kind=interaction.request.kind,
        run_id=interaction.run_id,
        interaction_id=interaction.interaction_id,
        prompt=interaction.request.prompt,
        channels=["slack"],
    )


def test_the_app_posts_the_question_with_its_buttons(slack: FakeSlack) -> None:
    config = _config(slack)
    poster = SlackAppPoster(
        lambda: web_client(config, config.secrets_provider()),
        channel="C0BATON",
        inbox_url=config.baton_inbox_url,
        lookup=lambda run_id, iid: {("run-1", "01Q"): QUESTION, ("sess-1", "01N"): NESTED}.get((run_id, iid)),
    )
    assert poster.post(_notification(QUESTION)) == 200
    assert poster.post(_notification(NESTED)) == 200
    first, second = slack.to("/api/chat.postMessage")
    assert first["channel"] == "C0BATON" and first["text"] == "Ship it? (run run-1)"
    (actions,) = [b for b in first["blocks"] if b["type"] == "actions"]
    assert [e["action_id"] for e in actions["elements"]] == ["baton_option_0", "baton_option_1"]
    (link,) = next(b for b in second["blocks"] if b["type"] == "actions")["elements"]
    assert link["url"] == "https://inbox.example.com/#/interrupt/01N"


def test_a_notification_with_no_pending_interaction_is_posted_as_the_webhook_renders_it(slack: FakeSlack) -> None:
    config = _config(slack)
    poster = SlackAppPoster(
        lambda: web_client(config, config.secrets_provider()), channel="C0BATON", inbox_url="", lookup=lambda r, i: None
    )
    poster.post(_notification(QUESTION))
    (posted,) = slack.to("/api/chat.postMessage")
    assert "baton runs answer run-1 01Q" in json.dumps(posted["blocks"])  # the CLI command, as every channel


def test_the_worker_replies_through_the_response_url_and_chat_update(slack: FakeSlack) -> None:
    config = _config(slack)
    replies = SlackWebReplies(lambda: web_client(config, config.secrets_provider()))
    replies.respond(f"{slack.url}/response/abc", {"replace_original": True, "text": "answered by a with b"})
    replies.update("C0BATON", "1.2", text="answered by a with b", blocks=[])
    assert slack.to("/response/abc") == [{"replace_original": True, "text": "answered by a with b"}]
    (update,) = slack.to("/api/chat.update")
    assert (update["channel"], update["ts"], update["text"]) == ("C0BATON", "1.2", "answered by a with b")


def test_teams_without_an_app_keep_the_incoming_webhook(slack: FakeSlack) -> None:
    env = {"SLACK_WEBHOOK_URL": f"{slack.url}/webhook"}
    assert not SlackAppConfig.configured(env)
    SlackConfig.from_env(env).build_poster().post(_notification(QUESTION))
    (posted,) = slack.to("/webhook")
    assert posted["text"].startswith("Question: Ship it?") and posted["blocks"]
