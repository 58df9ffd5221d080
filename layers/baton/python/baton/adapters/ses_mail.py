"""SES v2 adapter of `MailSender` (`baton/channels/email/mail.py`): one `SendEmail` per recipient, from
the configured sender identity, plain text in UTF-8."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from baton.channels.email.mail import Mail


class SesMailSender:
    def __init__(self, client: Any, sender: str, *, configuration_set: str = "") -> None:
        if not sender:
            raise ValueError("the SES sender address must not be empty")
        self._client = client
        self.sender = sender
        self.configuration_set = configuration_set

    def request(self, mail: Mail) -> dict[str, Any]:
        """The keyword arguments of the `sesv2.send_email` call for `mail`."""
        kwargs: dict[str, Any] = {
            "FromEmailAddress": self.sender,
            "Destination": {"ToAddresses": [mail.to]},
            "Content": {
                "Simple": {
                    "Subject": {"Data": mail.subject, "Charset": "UTF-8"},
                    "Body": {"Text": {"Data": mail.text, "Charset": "UTF-8"}},
                }
            },
        }
        if self.configuration_set:
            kwargs["ConfigurationSetName"] = self.configuration_set
        return kwargs

    def send(self, mail: Mail) -> str:
        return str(self._client.send_email(**self.request(mail))["MessageId"])


def ses_client() -> Any:
    """An SES v2 client from the environment, with the shared client configuration."""
    import boto3

    from baton.adapters.clients import CLIENT_CONFIG

    return boto3.session.Session().client("sesv2", config=CLIENT_CONFIG)
