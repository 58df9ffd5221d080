"""Console rendering for the local stack (and the notify_console Lambda's log line)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from baton.notify.model import Notification


def console_fields(notification: Notification) -> dict[str, Any]:
    """Structured fields for a log line (Powertools `logger.info(..., extra=...)`)."""
    n = notification
    fields: dict[str, Any] = {
        "event": n.event,
        "kind": n.kind,
        "run_id": n.run_id,
        "interaction_id": n.interaction_id,
        "node": n.node,
        "prompt": n.prompt,
        "options": n.options,
        "channels": list(n.channels),
        "review_url": n.review_url,
        "created_at": n.created_at,
    }
    return {key: value for key, value in fields.items() if value is not None}


def render_console(notification: Notification) -> str:
    """A short readable block: headline with ids, the prompt, options, and how to answer."""
    n = notification
    ids = f"run={n.run_id}"
    if n.interaction_id:
        ids += f" interaction={n.interaction_id}"
    if n.node:
        ids += f" node={n.node}"
    lines = [f"[baton] {n.event} ({n.kind}) {ids}", f"  {n.title}"]
    prompt_lines = n.prompt.strip().splitlines() or [""]
    if len(prompt_lines) > 1 or not n.title.endswith(prompt_lines[0]):  # the title holds a short prompt whole
        lines.extend(f"  > {line}" for line in prompt_lines)
    if n.options:
        lines.append("  options: " + " | ".join(n.options))
    if n.review_url:
        lines.append(f"  review: {n.review_url}")
    lines.extend(f"  {line}" for line in n.how_to_answer.splitlines())
    return "\n".join(lines)
