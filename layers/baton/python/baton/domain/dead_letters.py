"""The dead-letter queues of the asynchronously invoked functions, by name: the stack creates one per
such function (infra/capabilities/dead_letters.py, each the function's on-failure destination) and
`baton redrive` finds them by the same names."""

from __future__ import annotations

from typing import Final

QUEUE_SUFFIX: Final = "-dlq"


def team_prefix(team: str) -> str:
    """Every resource name of a team environment starts with it (infra/config.py TeamConfig.prefix)."""
    return f"baton-{team}"


def dead_letter_queue_name(prefix: str, function: str) -> str:
    """`baton-<team>-<function>-dlq`: the queue of `baton-<team>-<function>`'s failed async invokes."""
    return f"{prefix}-{function}{QUEUE_SUFFIX}"


def function_of_queue(queue_name: str) -> str | None:
    """The function name a dead-letter queue belongs to (`baton-ci-notify_slack-dlq` -> `baton-ci-notify_slack`),
    or None when the name is not a dead-letter queue's."""
    return queue_name.removesuffix(QUEUE_SUFFIX) if queue_name.endswith(QUEUE_SUFFIX) else None
