"""A parked pause's ladder (`baton.domain.ladder`) as its deadline timer reads it: an await gate's own,
kept on its wait; its steps as times; whether the timer takes the pause's default; and the answer a
default stands for, stored as a person's answer of that kind is. No port: pure rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.domain.ladder import Ladder

if TYPE_CHECKING:
    from datetime import datetime

    from baton.domain.ladder import LadderStep
    from baton.models import Interaction, InteractionRequest, ParkedWait


def wait_ladder(wait: ParkedWait) -> Ladder | None:
    """An await gate's own ladder, kept in its wait's scope (the gate has no request of its own)."""
    declared = wait.scope.get("ladder")
    return Ladder.model_validate(declared) if isinstance(declared, dict) else None


def wait_steps(wait: ParkedWait, deadline: datetime, pause: InteractionRequest | None) -> list[LadderStep]:
    """A parked wait's steps: its await gate's own ladder's, else those of the request it parked."""
    own = wait_ladder(wait)
    if own is not None:
        return own.steps(deadline, wait.scope.get("timeout_seconds"))
    return pause.ladder_steps(deadline) if pause is not None else []


def defaults_at_deadline(interaction: Interaction) -> bool:
    """Only a question's default is the timer's to take: a blocking ask's and an SDK interrupt's are
    taken by their waiter's read at the deadline (`AskService.get`, `InterruptService.current`), or by the
    reconciler's due sweep when nobody reads them (`AskService.end_due`)."""
    ladder = interaction.request.ladder
    return interaction.request.kind == "question" and ladder is not None and ladder.default is not None


def default_answer(i: Interaction, default: Any) -> Any:
    """The stored answer a default stands for, shaped as a person's answer of that kind is stored."""
    if i.request.kind == "interrupt":
        state = getattr(i.request, "state", None) or {}
        return {"input": default, "state": state, "state_edits": []}
    if i.request.kind == "review":  # a review action as `ReviewActions.act` stores one, by nobody
        message = "nobody answered by the deadline: the review gate's declared default was taken"
        return {"action": default, "reply": None, "message": message, "merge_strategy": None, "by": None}
    return default
