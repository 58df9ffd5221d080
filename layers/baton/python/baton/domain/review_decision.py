"""An operator's action on a review gate, typed: the reserved `__review_*` resume keys are parsed once,
at the door (the resume route, the Slack worker), and the review service takes the `ReviewDecision`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from baton.domain.review_gate import (
    ACTIONS,
    KEY_ACTION,
    KEY_HEAD,
    KEY_MESSAGE,
    KEY_REASON,
    KEY_REPLY,
    KEY_STRATEGY,
    MERGE_ACTIONS,
    RESERVED_KEYS,
    STRATEGIES,
)
from baton.errors import ValidationFailedError

if TYPE_CHECKING:
    from collections.abc import Mapping

ReviewAction = Literal["reply", "approve_merge", "force_merge", "request_changes"]


def is_review_answer(answers: Mapping[str, Any]) -> bool:
    """Does a resume body speak to a review gate (any reserved `__review_*` key)?"""
    return any(key.startswith("__review_") for key in answers)


class ReviewDecision(BaseModel):
    """`seen_head`: the head the operator looked at (a merge of another one is refused); `reason`: why a
    force_merge overrides the companion; `message`: the squash commit's message. Texts come stripped."""

    model_config = ConfigDict(frozen=True)

    action: ReviewAction
    reply: str | None = None
    message: str | None = None
    merge_strategy: Literal["squash", "merge"] | None = None
    seen_head: str | None = None
    reason: str | None = None

    @model_validator(mode="after")
    def _fits_its_action(self) -> ReviewDecision:
        if self.action == "reply" and self.reply is None:
            raise ValidationFailedError(
                f"a reply needs text: set {KEY_REPLY} to the message for the companion", details={"path": KEY_REPLY}
            )
        if self.action != "reply" and self.reply is not None:
            raise ValidationFailedError(f"{KEY_REPLY} goes only with {KEY_ACTION}=reply", details={"path": KEY_REPLY})
        if self.merge_strategy is not None and not self.merges:
            raise ValidationFailedError(
                f"{KEY_STRATEGY} goes only with {KEY_ACTION}=approve_merge or force_merge",
                details={"path": KEY_STRATEGY},
            )
        return self

    @property
    def merges(self) -> bool:
        return self.action in MERGE_ACTIONS

    @classmethod
    def from_answers(cls, answers: Mapping[str, Any]) -> ReviewDecision:
        """The resume body's answers as a decision; a 422 naming the key for anything else."""
        unknown = sorted(k for k in answers if k not in RESERVED_KEYS)
        if unknown:
            raise ValidationFailedError(
                f"a review action takes only the reserved keys {', '.join(RESERVED_KEYS)}; unexpected: "
                f"{', '.join(unknown)}",
                details={"path": unknown[0], "allowed_keys": list(RESERVED_KEYS)},
            )
        action = answers.get(KEY_ACTION)
        if action not in ACTIONS:
            shown = "missing" if action is None else repr(action)
            raise ValidationFailedError(
                f"{KEY_ACTION} is {shown}; expected one of: {', '.join(ACTIONS)}",
                details={"path": KEY_ACTION, "allowed": list(ACTIONS)},
            )
        for key in (KEY_REPLY, KEY_MESSAGE, KEY_STRATEGY, KEY_HEAD, KEY_REASON):
            if answers.get(key) is not None and not isinstance(answers[key], str):
                raise ValidationFailedError(f"{key} must be a string", details={"path": key})
        strategy = answers.get(KEY_STRATEGY)
        if strategy is not None and strategy not in STRATEGIES:
            raise ValidationFailedError(
                f"{KEY_STRATEGY} is {strategy!r}; expected one of: {', '.join(STRATEGIES)}",
                details={"path": KEY_STRATEGY, "allowed": list(STRATEGIES)},
            )
        return cls.model_validate(
            {
                "action": action,
                "reply": _text(answers, KEY_REPLY),
                "message": _text(answers, KEY_MESSAGE),
                "merge_strategy": strategy,
                "seen_head": answers.get(KEY_HEAD),
                "reason": _text(answers, KEY_REASON),
            }
        )

    def answers(self) -> dict[str, str]:
        """The decision as the reserved resume keys (what the SDK sends; a late one is kept as this)."""
        fields = (
            (KEY_ACTION, self.action),
            (KEY_REPLY, self.reply),
            (KEY_MESSAGE, self.message),
            (KEY_STRATEGY, self.merge_strategy),
            (KEY_REASON, self.reason),
            (KEY_HEAD, self.seen_head),
        )
        return {key: value for key, value in fields if value is not None}


def _text(answers: Mapping[str, Any], key: str) -> str | None:
    return (answers.get(key) or "").strip() or None
