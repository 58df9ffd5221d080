"""Plain-text email rendering. SNS email subscriptions get this body via MessageStructure=json."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from baton.notify.model import Notification

SUBJECT_MAX = 99  # SNS: subject must be under 100 characters
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def render_subject(notification: Notification) -> str:
    """One line, printable, < 100 chars, as SNS requires for `Subject`."""
    text = f"[Baton] {notification.title} (run {notification.run_id})"
    text = " ".join(_CONTROL.sub(" ", text).split())
    if len(text) > SUBJECT_MAX:
        text = text[: SUBJECT_MAX - 3].rstrip() + "..."
    return text


def render_email(notification: Notification) -> tuple[str, str]:
    """(subject, body): a readable plain-text message with the prompt, options and how to answer."""
    n = notification
    lines = [n.title, "", n.prompt.strip(), ""]
    if n.options:
        lines.append("Options:")
        lines.extend(f"  - {option}" for option in n.options)
        lines.append("")
    lines.append("How to answer:")
    lines.extend(f"  {line}" for line in n.how_to_answer.splitlines())
    lines.append("")
    if n.review_url:
        lines.extend([f"Review: {n.review_url}", ""])
    lines.append("Details:")
    lines.append(f"  run:         {n.run_id}")
    if n.interaction_id:
        lines.append(f"  interaction: {n.interaction_id}")
    if n.node:
        lines.append(f"  node:        {n.node}")
    lines.append(f"  kind:        {n.kind}")
    lines.append(f"  event:       {n.event}")
    lines.append(f"  created:     {n.created_at}")
    lines.extend(["", "-- ", "Sent by Baton (human-in-the-loop gates for agent workflows)."])
    return render_subject(n), "\n".join(lines) + "\n"
