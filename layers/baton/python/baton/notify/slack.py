"""Slack delivery: Block Kit message POSTed to an incoming-webhook URL.

The URL is a secret. Deployed, it lives in SSM Parameter Store (SecureString) or Secrets Manager and
is read once per Lambda container through an injected boto3 client (`SsmParameterUrl`,
`SecretsManagerUrl`); locally a plain URL (`StaticUrl`) from `SLACK_WEBHOOK_URL` is fine.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from baton.notify.transport import DEFAULT_TIMEOUT_SECONDS, Opener, post_json

if TYPE_CHECKING:
    from baton.notify.model import Notification

UrlProvider = Callable[[], str]

_HEADER_MAX = 150  # Slack limit for header plain_text
_SECTION_MAX = 3000  # Slack limit for section text
_CONTEXT_MAX = 2000
_ARGUMENTS_MAX = 2500  # a tool call's arguments as a code block, within the section's 3000
_ARGUMENTS_MARK = "\narguments:\n"  # where a tool approval's prompt lists them (ToolApprovalSpec.prompt)


def _escape(text: str) -> str:
    """Slack mrkdwn control characters (&, <, >) must be escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _prompt_text(n: Notification) -> str:
    """The prompt as mrkdwn; a tool approval's arguments (the JSON after its prompt's mark) as a code block."""
    asked, mark, arguments = n.prompt.partition(_ARGUMENTS_MARK)
    if n.kind != "tool_approval" or not mark:
        return _clip(_escape(n.prompt), _SECTION_MAX)
    said = _clip(_escape(asked), _SECTION_MAX - _ARGUMENTS_MAX - 8)
    return f"{said}\n```{_clip(_escape(arguments), _ARGUMENTS_MAX)}```"


def build_blocks(notification: Notification) -> dict[str, Any]:
    """The incoming-webhook payload: `text` (fallback for notifications) and Block Kit `blocks`."""
    n = notification
    blocks: list[dict[str, Any]] = [
        {
            "type": "header",
            "text": {"type": "plain_text", "text": _clip(" ".join(n.title.split()), _HEADER_MAX)},
        },
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": _prompt_text(n)},
        },
    ]
    if n.options:
        bullets = "\n".join(f"• {_escape(option)}" for option in n.options)
        options_text = _clip(f"*Options*\n{bullets}", _SECTION_MAX)
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": options_text}})
    ids = [f"*run* `{_escape(n.run_id)}`"]
    if n.interaction_id:
        ids.append(f"*interaction* `{_escape(n.interaction_id)}`")
    if n.node:
        ids.append(f"*node* `{_escape(n.node)}`")
    ids.append(f"*kind* {n.kind} · {_escape(n.event)}")
    blocks.append(
        {
            "type": "context",
            "elements": [
                {"type": "mrkdwn", "text": _clip("  ".join(ids), _CONTEXT_MAX)},
                {
                    "type": "mrkdwn",
                    "text": _clip(f"*How to answer*\n```{_escape(n.how_to_answer)}```", _CONTEXT_MAX),
                },
            ],
        }
    )
    if n.review_url:
        blocks.append(
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "text": {"type": "plain_text", "text": "Open review"},
                        "url": n.review_url,
                        "style": "primary",
                        "action_id": "baton_open_review",
                    }
                ],
            }
        )
    return {"text": _clip(f"{n.title} (run {n.run_id})", _SECTION_MAX), "blocks": blocks}


class StaticUrl:
    """A URL given directly (local/dev: `SLACK_WEBHOOK_URL`)."""

    def __init__(self, url: str) -> None:
        if not url:
            raise ValueError("Slack webhook URL must not be empty")
        self._url = url

    def __call__(self) -> str:
        return self._url


class _CachedUrl:
    def __init__(self) -> None:
        self._url: str | None = None
        self._lock = threading.Lock()

    def _read(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def __call__(self) -> str:
        if self._url is None:
            with self._lock:
                if self._url is None:
                    url = self._read().strip()
                    if not url:
                        raise ValueError("Slack webhook URL read from the secret store is empty")
                    self._url = url
        return self._url


class SsmParameterUrl(_CachedUrl):
    """Reads a SecureString parameter (WithDecryption) once through an injected boto3 SSM client."""

    def __init__(self, client: Any, name: str) -> None:
        super().__init__()
        self._client = client
        self.name = name

    def _read(self) -> str:
        response = self._client.get_parameter(Name=self.name, WithDecryption=True)
        return str(response["Parameter"]["Value"])


class SecretsManagerUrl(_CachedUrl):
    """Reads a secret once through an injected boto3 Secrets Manager client.

    The SecretString may be the URL itself or a JSON object with `url` or `webhook_url`.
    """

    def __init__(self, client: Any, secret_id: str) -> None:
        super().__init__()
        self._client = client
        self.secret_id = secret_id

    def _read(self) -> str:
        raw = str(self._client.get_secret_value(SecretId=self.secret_id)["SecretString"]).strip()
        if raw.startswith("{"):
            data = json.loads(raw)
            for key in ("url", "webhook_url", "slack_webhook_url"):
                if isinstance(data.get(key), str):
                    return str(data[key])
            raise ValueError(f"secret {self.secret_id} has no url/webhook_url key")
        return raw


class SlackPoster:
    """POSTs `build_blocks(notification)` to the incoming-webhook URL from `url_provider`."""

    def __init__(
        self,
        url_provider: UrlProvider,
        opener: Opener | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        self._url_provider = url_provider
        self._opener = opener
        self._timeout = timeout

    def post(self, notification: Notification) -> int:
        body = json.dumps(build_blocks(notification)).encode("utf-8")
        status, _ = post_json(self._url_provider(), body, opener=self._opener, timeout=self._timeout, redact_url=True)
        return status

    __call__ = post
