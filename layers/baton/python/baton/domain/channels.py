"""Which notification channels a deployment has, and the one check every creator runs against it.

`NotifyChannels` (baton/domain/interrupt_spec.py) refuses a name Baton does not know at all; this refuses a
known channel the team's stack does not wire (no subscriber: the notification would be silently dropped).
The configured set comes from `BATON_NOTIFY_CHANNELS` (baton/runtime/settings.py), set by infra/stack.py from
what the stack subscribes and by the local stack from what it subscribes; `Core.check_notify` applies it to
questions, blocking asks, interrupts and the input of hosted runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.errors import ValidationFailedError

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


def refuse_unconfigured(notify: Iterable[str] | None, configured: Sequence[str], *, field: str = "notify") -> None:
    """422 naming the field and the configured channels when `notify` asks for one the stack lacks."""
    for n, channel in enumerate(notify or ()):
        if channel not in configured:
            raise ValidationFailedError(
                f"{field}: channel {channel!r} is not configured for this team; configured: {', '.join(configured)}",
                details={"field": field, "path": f"{field}[{n}]", "channel": channel, "configured": list(configured)},
            )


def parse_channels(value: object) -> object:
    """`BATON_NOTIFY_CHANNELS` is a comma-separated list (`console,slack`); a list passes as it is."""
    if isinstance(value, str):
        return tuple(c.strip() for c in value.split(",") if c.strip())
    return value
