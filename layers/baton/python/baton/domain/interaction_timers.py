"""The timer of a pause no gate parks (a question, a blocking ask, an SDK interrupt, a tool-form await): named
after its interaction, started by `baton.services.deadlines.arm_interaction` and stopped once the pause settled.
Not in baton.domain.deadline: `baton --help` and the CDK import that one, and must not load pydantic."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.domain.deadline import INTERACTION_GATE, TOOL_GATE
from baton.domain.parked_ladder import defaults_at_deadline
from baton.ids import parse_iso

if TYPE_CHECKING:
    from baton.domain.ladder import LadderStep
    from baton.models import Interaction


def interaction_timer_steps(interaction: Interaction, gate: str) -> list[LadderStep] | None:
    """The steps of the timer `baton.services.deadlines.arm_interaction` starts for a pause no gate parks
    (none: due at its deadline); None: it starts none."""
    ladder, expires_at = interaction.request.ladder, interaction.expires_at
    if expires_at is None:
        return None
    steps = ladder.steps_from(parse_iso(interaction.created_at), parse_iso(expires_at)) if ladder is not None else []
    return steps if gate == TOOL_GATE or steps or defaults_at_deadline(interaction) else None


def interaction_timer_gate(interaction: Interaction) -> str:
    """The gate a pause no gate parks names its timer after: a tool-form await's own, else the interaction's."""
    return TOOL_GATE if interaction.request.kind == "await" else INTERACTION_GATE


def interaction_timer_key(interaction: Interaction, gate: str) -> str:
    return f"{gate}:{interaction.interaction_id}"
