"""Environment config of the notify subscriber Lambdas, and the adapters built from it.

The secret stores' clients come from `baton/adapters/clients.py` (handlers stay thin). Config is read
once per container by the handlers; every field maps to one environment variable (upper-case name).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from baton.notify.slack import SecretsManagerUrl, SlackPoster, SsmParameterUrl, StaticUrl, UrlProvider
from baton.notify.transport import DEFAULT_TIMEOUT_SECONDS, Opener
from baton.notify.webhook import WebhookPoster

if TYPE_CHECKING:
    from collections.abc import Mapping


def _from_env(model: type[BaseModel], environ: Mapping[str, str] | None) -> dict[str, str]:
    env = os.environ if environ is None else environ
    values: dict[str, str] = {}
    for name in model.model_fields:
        raw = env.get(name.upper())
        if raw is not None and raw.strip():
            values[name] = raw.strip()
    return values


def _boto3_client(service: Literal["ssm", "secretsmanager"]) -> Any:
    # Imported on first use, so rendering and verifying notifications needs no AWS SDK.
    from baton.adapters.clients import secret_store_client

    return secret_store_client(service)


class SlackConfig(BaseModel):
    """`SLACK_WEBHOOK_URL` (local/dev) or `SLACK_WEBHOOK_PARAMETER` (SSM SecureString name) or
    `SLACK_WEBHOOK_SECRET_ARN` (Secrets Manager); first one set wins, in that order.
    `NOTIFY_HTTP_TIMEOUT_SECONDS` optional (default 10)."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)  # built by the first call's read

    slack_webhook_url: str | None = None
    slack_webhook_parameter: str | None = None
    slack_webhook_secret_arn: str | None = None
    notify_http_timeout_seconds: float = Field(default=DEFAULT_TIMEOUT_SECONDS, gt=0, le=60)

    @model_validator(mode="after")
    def _one_source(self) -> SlackConfig:
        if not (self.slack_webhook_url or self.slack_webhook_parameter or self.slack_webhook_secret_arn):
            raise ValueError(
                "set SLACK_WEBHOOK_URL, SLACK_WEBHOOK_PARAMETER or SLACK_WEBHOOK_SECRET_ARN for the Slack notifier"
            )
        return self

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SlackConfig:
        return cls.model_validate(_from_env(cls, environ))

    def url_provider(self, *, ssm_client: Any = None, secretsmanager_client: Any = None) -> UrlProvider:
        if self.slack_webhook_url:
            return StaticUrl(self.slack_webhook_url)
        if self.slack_webhook_parameter:
            return SsmParameterUrl(ssm_client or _boto3_client("ssm"), self.slack_webhook_parameter)
        assert self.slack_webhook_secret_arn is not None
        return SecretsManagerUrl(
            secretsmanager_client or _boto3_client("secretsmanager"), self.slack_webhook_secret_arn
        )

    def build_poster(
        self, *, opener: Opener | None = None, ssm_client: Any = None, secretsmanager_client: Any = None
    ) -> SlackPoster:
        provider = self.url_provider(ssm_client=ssm_client, secretsmanager_client=secretsmanager_client)
        return SlackPoster(provider, opener, timeout=self.notify_http_timeout_seconds)


class WebhookConfig(BaseModel):
    """`WEBHOOK_URL` (required) and `WEBHOOK_SECRET` or `WEBHOOK_SECRET_PARAMETER` (SSM SecureString
    name, read once with decryption). `NOTIFY_HTTP_TIMEOUT_SECONDS` optional (default 10)."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)  # built by the first call's read

    webhook_url: str
    webhook_secret: str | None = Field(default=None, repr=False)
    webhook_secret_parameter: str | None = None
    notify_http_timeout_seconds: float = Field(default=DEFAULT_TIMEOUT_SECONDS, gt=0, le=60)

    @model_validator(mode="after")
    def _secret_source(self) -> WebhookConfig:
        if not (self.webhook_secret or self.webhook_secret_parameter):
            raise ValueError("set WEBHOOK_SECRET or WEBHOOK_SECRET_PARAMETER for the webhook notifier")
        return self

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WebhookConfig:
        return cls.model_validate(_from_env(cls, environ))

    def resolve_secret(self, *, ssm_client: Any = None) -> str:
        if self.webhook_secret:
            return self.webhook_secret
        assert self.webhook_secret_parameter is not None
        client = ssm_client or _boto3_client("ssm")
        response = client.get_parameter(Name=self.webhook_secret_parameter, WithDecryption=True)
        return str(response["Parameter"]["Value"])

    def build_poster(self, *, opener: Opener | None = None, ssm_client: Any = None) -> WebhookPoster:
        return WebhookPoster(
            self.webhook_url,
            self.resolve_secret(ssm_client=ssm_client),
            opener,
            timeout=self.notify_http_timeout_seconds,
        )
