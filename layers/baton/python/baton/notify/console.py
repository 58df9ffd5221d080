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
    if n.kind == "run":
        return run_ended_line(n)
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


def run_ended_line(notification: Notification) -> str:
    """A run's end in one line: what ended, how, and why (`run X failed: HumanInputTimedOut — …`)."""
    n = notification
    status = str(n.extra.get("status") or n.event.removeprefix("run_")).replace("_", " ")
    workflow = f" ({n.extra['workflow']})" if n.extra.get("workflow") else ""
    error = n.extra.get("error")
    # The prompt is "Run <id> (<workflow>) <status>: <reason>" (services/lifecycle.py); the reason is what is left.
    _, sep, reason = n.prompt.partition(": ")
    why = " — ".join(part for part in (str(error) if error else "", reason if sep else "") if part)
    return f"[baton] run {n.run_id}{workflow} {status}" + (f": {why}" if why else "")
