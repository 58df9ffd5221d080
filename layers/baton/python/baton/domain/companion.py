"""What the review companion is given and what it answers: the typed contract of the `Companion` port
(`baton/review_ports.py`). The adapters (`baton/adapters/companion_bedrock.py`, `companion_offline.py`) and the
review service (`baton/services/review/`) share these models and nothing else.

A review gate pauses a run on its diff. The companion reads a bounded diff, writes numbered test
instructions for the operator plus an initial verdict, then answers the operator turn by turn. The
dialogue is capped by `max_turns` and must converge on a verdict (approve / request changes) rather
than loop; the verdict is advice: the gate's posture decides whether a human must still click.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from baton.errors import BatonError

if TYPE_CHECKING:
    from collections.abc import Sequence

Decision = Literal["approve", "request_changes", "needs_discussion"]
DECISIONS: tuple[Decision, ...] = ("approve", "request_changes", "needs_discussion")


class CompanionContext(BaseModel):
    """Everything a companion needs for one turn. The diff is already bounded by the caller."""

    run_id: str
    node: str
    diff_text: str = ""
    diff_truncated: bool = False
    diff_total_bytes: int = Field(default=0, ge=0, description="size of the full diff before bounding")
    files_changed: int = Field(default=0, ge=0)
    insertions: int = Field(default=0, ge=0)
    deletions: int = Field(default=0, ge=0)
    files: list[str] = Field(default_factory=list, description="paths of every changed file")
    system_prompt: str | None = Field(default=None, description="overrides the adapter's system prompt")
    model_id: str | None = Field(default=None, description="overrides the adapter's model id")
    max_turns: int = Field(default=8, ge=1, description="dialogue backstop: the last companion turn")
    turn_index: int = Field(default=1, ge=1, description="number of the companion turn being produced (1 = first)")

    @property
    def turns_remaining(self) -> int:
        """Companion turns left after this one (0 on the final turn, never negative)."""
        return max(0, self.max_turns - self.turn_index)

    @property
    def is_final_turn(self) -> bool:
        return self.turn_index >= self.max_turns


class ThreadTurn(BaseModel):
    """One message of the stored dialogue. `n` orders the thread."""

    role: Literal["companion", "operator"]
    text: str
    n: int = Field(ge=0)


class Verdict(BaseModel):
    """The companion's structured judgement; routes the gate downstream."""

    decision: Decision
    confidence: float = Field(ge=0.0, le=1.0)
    blockers: list[str] = Field(default_factory=list)
    summary: str = ""


class CompanionTurn(BaseModel):
    """What the companion said this turn.

    `test_steps` holds the numbered test instructions (position = number, no number prefix) and is
    only filled on the first turn. `verdict` is None when a model answered without the structured
    tool call. `is_model` tells a UI whether a language model wrote the text.
    """

    text: str
    test_steps: list[str] = Field(default_factory=list)
    verdict: Verdict | None = None
    model: str
    is_model: bool
    stop_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


class CompanionError(BatonError):
    """The companion could not produce a turn (model throttled, refused, misconfigured, unreachable)."""

    code = "companion_unavailable"
    http_status = 503


def format_steps(steps: Sequence[str]) -> str:
    """Render test steps as a numbered list, one per line."""
    return "\n".join(f"{i}. {step}" for i, step in enumerate(steps, start=1))


def clip_text(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n…[clipped {len(text) - limit} characters]"
