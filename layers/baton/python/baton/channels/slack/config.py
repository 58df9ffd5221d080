"""The Slack app's configuration: its secrets, who is who, where the inbox is and how the worker runs.

Every field maps to one environment variable (upper-case name), as `baton/notify/config.py` does.
Locally the secrets are plain variables (`SLACK_SIGNING_SECRET`, `SLACK_BOT_TOKEN`, `BATON_SLACK_OPERATORS`);
deployed they are read once per container through an injected client: the app secret from Secrets
Manager (`SLACK_APP_SECRET_ARN`, a JSON object `{"signing_secret": ..., "bot_token": ...}`) and the
operator mapping from SSM (`BATON_SLACK_OPERATORS_PARAMETER`, the same JSON as `BATON_SLACK_OPERATORS`).

The mapping `{"U0123ABC": "alice@example.com"}` turns a Slack user id into the Baton operator who acts
(events, claims, the decision log see that name); a user it does not name is refused.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from baton.channels.slack.ack import parse_operators as parse_operators  # light: the ack reads it too
from baton.notify.config import _boto3_client, _from_env

if TYPE_CHECKING:
    from collections.abc import Mapping

SLACK_API_URL = "https://slack.com/api/"
T = TypeVar("T")


class AppSecrets(BaseModel):
    model_config = ConfigDict(frozen=True)

    signing_secret: str = Field(min_length=1, repr=False)
    bot_token: str = Field(default="", repr=False)


class SlackAppConfig(BaseModel):
    """`SLACK_SIGNING_SECRET` (+ `SLACK_BOT_TOKEN`) or `SLACK_APP_SECRET_ARN`; `BATON_SLACK_OPERATORS`
    or `BATON_SLACK_OPERATORS_PARAMETER`; `BATON_INBOX_URL` (the web inbox, for forms Slack cannot show);
    `SLACK_CHANNEL` (where the app posts); `SLACK_API_URL` (tests point it at a fake Slack);
    `BATON_SLACK_WORKER_FUNCTION` and `BATON_SLACK_WORKER_INVOKE` (event deployed, thread locally)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    slack_signing_secret: str | None = Field(default=None, repr=False)
    slack_bot_token: str | None = Field(default=None, repr=False)
    slack_app_secret_arn: str | None = None
    baton_slack_operators: str | None = None
    baton_slack_operators_parameter: str | None = None
    baton_inbox_url: str = ""
    slack_channel: str | None = None
    slack_api_url: str = SLACK_API_URL
    baton_slack_worker_function: str = "slack_worker"
    baton_slack_worker_invoke: Literal["event", "thread"] = "event"

    @model_validator(mode="after")
    def _one_secret_source(self) -> SlackAppConfig:
        if not (self.slack_signing_secret or self.slack_app_secret_arn):
            raise ValueError("set SLACK_SIGNING_SECRET or SLACK_APP_SECRET_ARN for the Slack app")
        return self

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SlackAppConfig:
        return cls.model_validate(_from_env(cls, environ))

    @classmethod
    def configured(cls, environ: Mapping[str, str] | None = None) -> bool:
        """Is a Slack app (not only an incoming webhook) configured?"""
        values = _from_env(cls, environ)
        return bool(values.get("slack_signing_secret") or values.get("slack_app_secret_arn"))

    def secrets_provider(self, *, secretsmanager_client: Any = None) -> SecretsProvider:
        if self.slack_signing_secret:
            secrets = AppSecrets(signing_secret=self.slack_signing_secret, bot_token=self.slack_bot_token or "")
            return SecretsProvider(lambda: secrets)
        arn = self.slack_app_secret_arn

        def read() -> AppSecrets:
            client = secretsmanager_client or _boto3_client("secretsmanager")
            return AppSecrets.model_validate_json(str(client.get_secret_value(SecretId=arn)["SecretString"]))

        return SecretsProvider(read)

    def operators_provider(self, *, ssm_client: Any = None) -> OperatorsProvider:
        if self.baton_slack_operators_parameter:
            name = self.baton_slack_operators_parameter

            def read() -> dict[str, str]:
                client = ssm_client or _boto3_client("ssm")
                response = client.get_parameter(Name=name, WithDecryption=True)
                return parse_operators(str(response["Parameter"]["Value"]))

            return OperatorsProvider(read)
        mapping = parse_operators(self.baton_slack_operators)
        return OperatorsProvider(lambda: mapping)


class _Once(Generic[T]):
    """A value read on first use, then kept for the container's life (one secret read per cold start)."""

    def __init__(self, read: Any) -> None:
        self._read = read
        self._value: T | None = None
        self._lock = threading.Lock()

    def __call__(self) -> T:
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._read()
        assert self._value is not None
        return self._value


class SecretsProvider(_Once[AppSecrets]):
    pass


class OperatorsProvider(_Once[dict[str, str]]):
    pass
