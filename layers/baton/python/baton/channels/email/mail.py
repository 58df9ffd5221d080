"""Per-recipient mail: each recipient of the `email` channel gets their own message, whose answer link
is signed for them and for the one interaction (`links.py`): a question, and an ask or an interrupt
whose answer one page can give (`forms.py`; the notifier reads the interaction to know). What a link
cannot offer (interrupts with object or composed schemas, reviews, await gates) gets the web inbox
item's address instead.

Delivery is idempotent per recipient: after a successful send a `MailedMark` is recorded
(`MailLedger`, deployed `MAILED#<interaction>#<notification digest>#<recipient>` in the run's partition,
`baton/adapters/mail_marks.py`), and a retried delivery of the same notification (SNS retries the
event when one recipient's send failed) skips every recipient already marked: the others are not
mailed again, the failed one is."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from baton.channels.email.links import LinkClaims, new_link_id, sign_link
from baton.ids import iso
from baton.notify.email import render_email
from baton.notify.model import inbox_item_url

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from baton.models import Interaction
    from baton.notify.model import Notification

ANSWER_PATH = "/answer/"
DEFAULT_LINK_TTL_SECONDS = 3 * 86400
ANSWER_LINK_HEADING = "Answer from this mail:"  # the local outbox prints a mail with it whole


@dataclass(frozen=True)
class Mail:
    to: str
    subject: str
    text: str


@dataclass(frozen=True)
class MailedMark:
    """One notification mailed to one recipient: `digest` is the notification's own (its SNS body), so a
    retried delivery of the same message finds the mark and a new notification does not."""

    run_id: str
    subject_id: str  # the interaction, or the event for a notification without one (a run's end)
    digest: str
    recipient: str

    @classmethod
    def of(cls, notification: Notification, recipient: str) -> MailedMark:
        digest = hashlib.sha256(notification.to_message().encode("utf-8")).hexdigest()[:32]
        subject = notification.interaction_id or notification.event
        return cls(run_id=notification.run_id, subject_id=subject, digest=digest, recipient=recipient.lower())


class MailLedger(Protocol):
    """Which recipients a notification was already mailed to (deployed: DynamoDB; tests: in memory)."""

    def was_mailed(self, mark: MailedMark) -> bool: ...
    def record_mailed(self, mark: MailedMark) -> None: ...


class MailSender(Protocol):
    """Sends one mail; returns its message id (deployed: SES v2 `SendEmail`; locally: the outbox)."""

    def send(self, mail: Mail) -> str: ...


@dataclass
class EmailLinks:
    """Makes the answer links of one deployment."""

    key: Callable[[], bytes]
    base_url: str  # where `/answer/<link>` is served (the API's public URL)
    ttl_seconds: int = DEFAULT_LINK_TTL_SECONDS
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)

    def link_for(self, run_id: str, interaction_id: str, recipient: str) -> tuple[str, datetime]:
        expires = self.clock() + timedelta(seconds=self.ttl_seconds)
        claims = LinkClaims(
            link_id=new_link_id(),
            run_id=run_id,
            interaction_id=interaction_id,
            recipient=recipient,
            expires_at=int(expires.timestamp()),
        )
        return self.base_url.rstrip("/") + ANSWER_PATH + sign_link(claims, self.key()), expires


def compose(
    notification: Notification,
    recipient: str,
    links: EmailLinks,
    inbox_url: str = "",
    interaction: Interaction | None = None,
) -> Mail:
    """The mail for one recipient: the readable body of `render_email` with, first, how to answer here."""
    subject, body = render_email(notification)
    n = notification
    lines: list[str] = []
    if n.interaction_id and _linkable(n, interaction):
        url, expires = links.link_for(n.run_id, n.interaction_id, recipient)
        lines += [
            ANSWER_LINK_HEADING,
            f"  {url}",
            "  The link opens a page that shows the question and its options; nothing is answered until you",
            f"  press a button there. It answers once, as {recipient}, until {iso(expires)}.",
            "",
        ]
    elif n.interaction_id and inbox_url and n.kind in ("interrupt", "review", "await", "ask"):
        lines += [
            "Answer in the inbox (this form cannot be answered from a mail):",
            f"  {inbox_item_url(inbox_url, n.kind, n.run_id, n.interaction_id)}",
            "",
        ]
    title, _, rest = body.partition("\n\n")
    return Mail(
        to=recipient, subject=subject, text="\n\n".join([title, "\n".join(lines).rstrip("\n"), rest]) if lines else body
    )


def _linkable(notification: Notification, interaction: Interaction | None) -> bool:
    """A question always; an ask, an interrupt or a tool approval when its page can answer it (read from the store)."""
    if notification.kind == "question":
        return True
    if notification.kind not in ("ask", "interrupt", "tool_approval") or interaction is None:
        return False
    from baton.channels.email.forms import link_form

    return link_form(interaction) is not None


@dataclass
class EmailNotifier:
    """The `email` channel's subscriber: one mail per recipient. Every recipient is tried; failures are
    raised together afterwards (SNS retries the event), and the retry mails only the recipients not
    marked in `ledger` (None: no marks, every delivery mails everyone)."""

    sender: MailSender
    recipients: Sequence[str]
    links: EmailLinks
    inbox_url: str = ""
    ledger: MailLedger | None = None
    lookup: Callable[[str, str], Interaction | None] | None = None  # an ask's or interrupt's form

    def deliver(self, notification: Notification) -> list[str]:
        from baton.notify.transport import NotificationDeliveryError

        n = notification
        found = None
        if self.lookup is not None and n.interaction_id and n.kind in ("ask", "interrupt"):
            found = self.lookup(n.run_id, n.interaction_id)
        sent: list[str] = []
        failures: dict[str, str] = {}
        for recipient in self.recipients:
            mark = MailedMark.of(notification, recipient)
            try:
                if self.ledger is not None and self.ledger.was_mailed(mark):
                    continue  # mailed by an earlier delivery of this notification
                sent.append(self.sender.send(compose(notification, recipient, self.links, self.inbox_url, found)))
                if self.ledger is not None:
                    self.ledger.record_mailed(mark)
            except Exception as exc:
                failures[recipient] = str(exc)
        if failures:
            raise NotificationDeliveryError(
                f"mail to {', '.join(failures)} failed", details={"failures": failures, "sent": len(sent)}
            )
        return sent

    __call__ = deliver
