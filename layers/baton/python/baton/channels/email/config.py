"""The email channel's configuration, one environment variable per field (upper-case name), read once
per container, and what is built from it: the link key, the link maker and the mail sender.

- `BATON_EMAIL_RECIPIENTS`: who gets the mail (comma list); only they can hold a working link.
- `BATON_EMAIL_SENDER`: the SES identity mail is sent from (deployed).
- `BATON_EMAIL_LINK_SECRET_ARN`: the Secrets Manager secret the links are signed with (deployed);
  without it, the local stack's key derived from `BATON_LOCAL_API_TOKEN` (`links.local_link_key`).
- `BATON_EMAIL_LINK_BASE_URL`: where `/answer/<link>` is served (default `BATON_API_URL`).
- `BATON_INBOX_URL`: the web inbox, for what a link cannot answer.
- `BATON_EMAIL_LINK_TTL_SECONDS`: how long a link works (default 3 days).
- `BATON_EMAIL_OUTBOX`: a directory: mail is printed and kept there instead of sent (`baton dev`).
- `BATON_TABLE_NAME`: Baton's table, where each recipient's mail is marked once sent (`mail.MailLedger`),
  so a retried delivery mails only those not yet mailed (without it every delivery mails everyone),
  and where an ask or an interrupt is read to know whether its mail can carry an answer link.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from baton.channels.email.links import local_link_key
from baton.channels.email.mail import DEFAULT_LINK_TTL_SECONDS, EmailLinks, EmailNotifier, MailSender

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from baton.channels.email.mail import MailLedger
    from baton.models import Interaction

MIN_SECRET_CHARS = 32


class EmailConfigError(RuntimeError):
    """The email channel is not configured well enough to sign or send (names the variable)."""


class EmailConfig(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)  # built by the first call's read

    baton_email_recipients: tuple[str, ...] = ()
    baton_email_sender: str = ""
    baton_email_link_secret_arn: str = ""
    baton_email_link_base_url: str = ""
    baton_api_url: str = ""
    baton_inbox_url: str = ""
    baton_email_link_ttl_seconds: int = Field(default=DEFAULT_LINK_TTL_SECONDS, gt=0, le=30 * 86400)
    baton_email_outbox: str = ""
    baton_local_api_token: str = Field(default="", repr=False)
    baton_table_name: str = ""

    @field_validator("baton_email_recipients", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> EmailConfig:
        env = os.environ if environ is None else environ
        values = {name: env[name.upper()] for name in cls.model_fields if env.get(name.upper(), "").strip()}
        return cls.model_validate(values)

    @property
    def link_base_url(self) -> str:
        return self.baton_email_link_base_url or self.baton_api_url

    def link_key(self, secretsmanager_client: Any = None) -> bytes:
        if self.baton_email_link_secret_arn:
            if secretsmanager_client is None:
                from baton.adapters.clients import secret_store_client

                secretsmanager_client = secret_store_client("secretsmanager")
            value = str(
                secretsmanager_client.get_secret_value(SecretId=self.baton_email_link_secret_arn)["SecretString"]
            )
            if len(value.strip()) < MIN_SECRET_CHARS:
                raise EmailConfigError(f"the link secret must hold at least {MIN_SECRET_CHARS} characters")
            return value.strip().encode("utf-8")
        if self.baton_local_api_token:
            return local_link_key(self.baton_local_api_token)
        raise EmailConfigError("set BATON_EMAIL_LINK_SECRET_ARN: the email links need a signing key")

    def sender(self) -> MailSender:
        if self.baton_email_outbox:
            from baton.channels.email.outbox import OutboxMailSender

            return OutboxMailSender(Path(self.baton_email_outbox))
        if not self.baton_email_sender:
            raise EmailConfigError("set BATON_EMAIL_SENDER (a verified SES identity) for the email channel")
        from baton.adapters.ses_mail import SesMailSender, ses_client

        return SesMailSender(ses_client(), self.baton_email_sender)

    def notifier(self) -> EmailNotifier:
        if not self.baton_email_recipients:
            raise EmailConfigError("set BATON_EMAIL_RECIPIENTS: nobody would get the mail")
        if not self.link_base_url:
            raise EmailConfigError("set BATON_EMAIL_LINK_BASE_URL (or BATON_API_URL): the links need an address")
        links = EmailLinks(
            key=cached_link_key, base_url=self.link_base_url, ttl_seconds=self.baton_email_link_ttl_seconds
        )
        return EmailNotifier(
            self.sender(),
            self.baton_email_recipients,
            links,
            self.baton_inbox_url,
            ledger=self.ledger(),
            lookup=self.lookup(),
        )

    def lookup(self) -> Callable[[str, str], Interaction | None] | None:
        """Reads an ask or an interrupt, to know whether its mail can carry an answer link."""
        if not self.baton_table_name:
            return None
        from baton.adapters.clients import dynamodb_client
        from baton.adapters.dynamo import DynamoStore

        return DynamoStore(self.baton_table_name, dynamodb_client()).get_interaction

    def ledger(self) -> MailLedger | None:
        if not self.baton_table_name:
            return None
        from baton.adapters.clients import dynamodb_client
        from baton.adapters.mail_marks import DynamoMailMarks

        return DynamoMailMarks(self.baton_table_name, dynamodb_client())


@cache
def email_config() -> EmailConfig:
    return EmailConfig.from_env()


@cache
def cached_link_key() -> bytes:
    """The link key of this container, read once (deployed: one GetSecretValue per cold start)."""
    return email_config().link_key()
