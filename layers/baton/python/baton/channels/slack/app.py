"""The Slack app assembled from its configuration: the poster (`chat.postMessage` to a channel, with the
interaction's buttons and form), the interaction service and the worker, each with its Slack clients
(`slack_sdk`'s `WebClient`, base URL from `SLACK_API_URL` so tests talk to a fake Slack) and its AWS
adapters (`baton/adapters/slack.py`, imported on first use as `baton/runtime/wiring.py` does). The interaction
endpoint's fast path is not here (`endpoint.py`): this module imports the Web API client.

Teams without an app keep the incoming webhook (`baton/notify/slack.py`): `notify_slack` uses the app
only when `SLACK_SIGNING_SECRET` or `SLACK_APP_SECRET_ARN` is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from slack_sdk import WebClient
from slack_sdk.webhook import WebhookClient

from baton.channels.slack.blocks import await_blocks, message_blocks, message_text, review_blocks
from baton.channels.slack.config import SlackAppConfig
from baton.channels.slack.interactions import SlackForms
from baton.channels.slack.worker import SlackWorker
from baton.models import AwaitToolRequest, ReviewRequest
from baton.notify.slack import build_blocks

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.channels.slack.ack import JobQueue
    from baton.channels.slack.config import SecretsProvider
    from baton.models import Interaction, ReviewTurn
    from baton.notify.model import Notification
    from baton.runtime.wiring import Services

HTTP_TIMEOUT_SECONDS = 10


def web_client(config: SlackAppConfig, secrets: SecretsProvider) -> WebClient:
    return WebClient(token=secrets().bot_token or None, base_url=config.slack_api_url, timeout=HTTP_TIMEOUT_SECONDS)


class SlackWebReplies:
    """`response_url` posts (slack_sdk's WebhookClient) and `chat.update` (the WebClient)."""

    def __init__(self, client: Callable[[], WebClient]) -> None:
        self._client = client

    def respond(self, response_url: str, body: dict[str, Any]) -> None:
        WebhookClient(response_url, timeout=HTTP_TIMEOUT_SECONDS).send_dict(body)

    def update(self, channel: str, ts: str, *, text: str, blocks: list[dict[str, Any]]) -> None:
        self._client().chat_update(channel=channel, ts=ts, text=text, blocks=blocks)


class SlackAppPoster:
    """Posts a notification as the app: the interaction's buttons and form when there is one (read from
    the store: the notification names it, the request says what it asks), else the webhook's blocks."""

    def __init__(
        self,
        client: Callable[[], WebClient],
        *,
        channel: str,
        inbox_url: str,
        lookup: Callable[[str, str], Interaction | None],
        turns: Callable[[str, str], list[ReviewTurn]] = lambda run_id, iid: [],
    ) -> None:
        self._client = client
        self._channel = channel
        self._inbox_url = inbox_url
        self._lookup = lookup
        self._turns = turns

    def blocks_of(self, interaction: Interaction) -> list[dict[str, Any]]:
        """What the pending interaction's message shows: a review's verdict and its buttons, an await's
        questions with theirs, anything else its own buttons or form."""
        request = interaction.request
        if isinstance(request, ReviewRequest):
            turns = self._turns(interaction.run_id, interaction.interaction_id)
            return review_blocks(interaction, turns, inbox_url=self._inbox_url)
        if isinstance(request, AwaitToolRequest):
            found = [self._lookup(interaction.run_id, iid) for iid in request.pending]
            questions = [q for q in found if q is not None and q.state.status == "pending"]
            return await_blocks(interaction, questions, inbox_url=self._inbox_url)
        return message_blocks(interaction, inbox_url=self._inbox_url)

    def post(self, notification: Notification) -> int:
        found = self._lookup(notification.run_id, notification.interaction_id) if notification.interaction_id else None
        if found is not None and found.state.status == "pending":
            blocks, text = self.blocks_of(found), message_text(found)
        else:
            payload = build_blocks(notification)
            blocks, text = payload["blocks"], str(payload["text"])
        response = self._client().chat_postMessage(channel=self._channel, text=text, blocks=blocks)
        return int(response.status_code)

    __call__ = post


def _services() -> Services:
    from baton.runtime.wiring import services

    return services()


class _Lazy:
    """One WebClient per container, built on first use (the bot token is read then)."""

    def __init__(self, config: SlackAppConfig, secrets: SecretsProvider) -> None:
        self._config = config
        self._secrets = secrets
        self._client: WebClient | None = None

    def __call__(self) -> WebClient:
        if self._client is None:
            self._client = web_client(self._config, self._secrets)
        return self._client


def build_poster(config: SlackAppConfig) -> SlackAppPoster:
    if not config.slack_channel:
        raise ValueError("set SLACK_CHANNEL: the channel the Slack app posts to")
    return SlackAppPoster(
        _Lazy(config, config.secrets_provider()),
        channel=config.slack_channel,
        inbox_url=config.baton_inbox_url,
        lookup=lambda run_id, iid: _services().core.store.get_interaction(run_id, iid),
        turns=lambda run_id, iid: _services().core.store.list_turns(run_id, iid),
    )


def build_forms(config: SlackAppConfig, *, operators: Callable[[], dict[str, str]], jobs: JobQueue) -> SlackForms:
    """The interaction endpoint's form desk (`interactions.py`): the store and the Web API client, built
    on the first request that opens or submits a modal (the fast path is `endpoint.build_ack`)."""
    return SlackForms(
        operators=operators,
        store=_services().core.store,
        jobs=jobs,
        views=_Lazy(config, config.secrets_provider()),
    )


def build_worker(config: SlackAppConfig) -> SlackWorker:
    replies = SlackWebReplies(_Lazy(config, config.secrets_provider()))
    return SlackWorker(_services(), replies, inbox_url=config.baton_inbox_url)


def app_config() -> SlackAppConfig:
    return SlackAppConfig.from_env()
