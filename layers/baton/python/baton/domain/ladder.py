"""A pause's deadline ladder: remind, escalate, then fail or take a declared safe default.

Every pause may declare, next to its timeout (docs/workflows.md's "Deadline ladders" table says which takes
what): a hosted or blocking ask, a hosted or SDK interrupt, an async question (which then needs its own
`timeout_seconds`), an await gate and a review gate:

* `remind_after` (seconds after the pause began): one reminder to the pause's own channels (it does
  not repeat: a second nudge is what `escalate_after` is for);
* `escalate_after` (seconds, later than the reminder) with `escalate_to` (other notification channels,
  `console`, `email`, `slack`, `webhook`, whose recipients `baton.notify.config` configures, e.g. the
  on-call Slack channel): the pause is announced there too; `escalate_to_operators` addresses it to named
  operators on those channels and on their subscribed devices (Web Push, baton/channels/push/); one
  away: to their delegate, "for alice (away until ...)";
* `on_timeout`: `"fail"` (the default: the pause fails at its deadline as it always has) or
  `{"default": <value>}`: at the deadline the gate is released with that value, recorded as
  `timed_out_default` (never as a person's answer: `answered_by` stays empty). An await gate has no
  answer of its own: its `on_timeout` is `"fail"` or `"use_question_defaults"` (each unanswered question
  takes its own declared default; one without a default fails the gate as today, named in the cause).
  A review gate's default may only be `request_changes`: a default can never merge (`REVIEW_DEFAULTS`).

`Ladder.check_for` runs when the pause is created: a step at or after the deadline, or a default that is
not a valid answer to the pause (its options, its answer schema), is a 422 and nothing is stored.
`steps` is the ladder as times, in order; the gate's timer walks them (`baton.services.deadlines`,
`statemachines/gate_deadline.asl.json`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from baton.domain.fields import MAX_TIMEOUT_SECONDS, Principal
from baton.errors import ValidationFailedError

LadderStepName = Literal["remind", "escalate"]
# `baton.notify.model.Channel`, spelled here: the review gate's configuration takes a ladder, and the
# notification model reads the review actions, so importing it would make a cycle (a unit test keeps the
# two equal: tests/unit/test_ladder_pauses.py).
Channel = Literal["console", "email", "webhook", "slack"]
MAX_ESCALATION_OPERATORS = 10
TIMED_OUT_DEFAULT = "timed_out_default"  # the outcome (and stored reason) of a default taken at the deadline


class TimeoutDefault(BaseModel):
    """`on_timeout: {"default": <value>}`: the value the gate is released with at its deadline."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    default: Any = Field(description="A valid answer to the pause (checked when the pause is created)")

    @model_validator(mode="before")
    @classmethod
    def _default_required(cls, data: Any) -> Any:
        if isinstance(data, dict) and "default" not in data:
            raise ValueError('on_timeout must be "fail" or {"default": <value>}')
        return data


USE_QUESTION_DEFAULTS = "use_question_defaults"  # an await gate's on_timeout: each question's own default
OnTimeout = Literal["fail", "use_question_defaults"] | TimeoutDefault
REVIEW_DEFAULTS = ("request_changes",)  # the only review action a default may take: it can never merge


class LadderFields(BaseModel):
    """The ladder's fields, flat, as the request bodies, the SDK and the MCP tools take them."""

    model_config = ConfigDict(defer_build=True)

    remind_after: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TIMEOUT_SECONDS,
        description="Seconds after the pause began: one reminder to its channels",
    )
    escalate_after: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TIMEOUT_SECONDS,
        description="Seconds after the pause began: announce it to escalate_to",
    )
    escalate_to: list[Channel] | None = Field(
        default=None, min_length=1, max_length=4, description="Channels the escalation notifies"
    )
    escalate_to_operators: list[Principal] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ESCALATION_OPERATORS,
        description="Operators the escalation is addressed to, on the escalate_to channels and their "
        "devices (Web Push; one away: their delegate, saying for whom)",
    )
    on_timeout: OnTimeout = Field(
        default="fail", description='"fail" (as without a ladder) or {"default": <a valid answer>}'
    )

    @model_validator(mode="after")
    def _keeps_the_ladder_rules(self) -> LadderFields:
        """The stored ladder's cross-field rules at the door (a request model's 422, not a 500 later)."""
        try:
            self.ladder()
        except ValidationError as err:
            raise ValueError(err.errors()[0]["msg"].removeprefix("Value error, ")) from None
        return self

    def ladder(self) -> Ladder | None:
        """The ladder these fields declare, or None when they declare nothing beyond today's behaviour."""
        steps = (self.remind_after, self.escalate_after, self.escalate_to, self.escalate_to_operators)
        if all(field is None for field in steps) and self.on_timeout == "fail":
            return None
        return Ladder(
            remind_after=self.remind_after,
            escalate_after=self.escalate_after,
            escalate_to=self.escalate_to or [],
            escalate_to_operators=self.escalate_to_operators,
            on_timeout=self.on_timeout,
        )


AwaitOnTimeout = Literal["fail", "use_question_defaults"]  # an await has no answer of its own


class AwaitLadderFields(LadderFields):
    """An await's ladder (the await tool, `POST /api/runs/{run_id}/await`, the MCP `await_answers`): its
    steps remind / escalate about the questions still pending; at the expiry "fail" or
    "use_question_defaults" (each pending question's own declared default)."""

    on_timeout: AwaitOnTimeout = Field(  # narrowed: a subset of OnTimeout
        default="fail",
        description='"fail" (timed out as without a ladder) or "use_question_defaults": each pending question '
        "takes its own declared default",
    )


class Ladder(BaseModel):
    """What a pause declared (stored on its request, `baton.models._RequestBase.ladder`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    remind_after: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_SECONDS)
    escalate_after: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_SECONDS)
    escalate_to: list[Channel] = Field(default_factory=list, max_length=4)
    # None when not declared: a ladder stored before them, and one without, keep their stored form
    escalate_to_operators: list[Principal] | None = Field(default=None, max_length=MAX_ESCALATION_OPERATORS)
    on_timeout: OnTimeout = "fail"

    @model_validator(mode="after")
    def _in_order(self) -> Ladder:
        if self.escalate_after is not None and not self.escalate_to:
            raise ValueError("escalate_after needs escalate_to (the channels to escalate to)")
        if self.escalate_to and self.escalate_after is None:
            raise ValueError("escalate_to needs escalate_after")
        if self.escalate_to_operators and not self.escalate_to:
            raise ValueError("escalate_to_operators needs escalate_to (the channels that reach them)")
        remind, escalate = self.remind_after, self.escalate_after
        if remind is not None and escalate is not None and escalate <= remind:
            raise ValueError("escalate_after must come after remind_after")
        return self

    @property
    def default(self) -> TimeoutDefault | None:
        return self.on_timeout if isinstance(self.on_timeout, TimeoutDefault) else None

    def check_for(
        self,
        timeout_seconds: int | None,
        *,
        answer_is: AnswerCheck,
    ) -> None:
        """422 (ValidationFailedError naming the field) if a step does not come before the pause's
        timeout, or the default is not an answer the pause would accept from a person (an await gate,
        which has no answer of its own, takes `use_question_defaults` instead of a default)."""
        awaiting = answer_is.kind == "await"
        if (self.on_timeout == USE_QUESTION_DEFAULTS) != awaiting and self.on_timeout != "fail":
            raise ValidationFailedError(
                'on_timeout: an await gate takes "fail" or "use_question_defaults" (its questions\' own defaults); '
                'any other pause "fail" or {"default": <a valid answer>}',
                details={"path": "on_timeout"},
            )
        for name in ("remind_after", "escalate_after"):
            seconds = getattr(self, name)
            if seconds is not None and timeout_seconds is not None and seconds >= timeout_seconds:
                raise ValidationFailedError(
                    f"{name} ({seconds}s) must come before the pause's timeout ({timeout_seconds}s)",
                    details={"path": name},
                )
        if self.default is not None:
            answer_is.check(self.default.default)

    def steps(self, deadline: datetime, timeout_seconds: int | None) -> list[LadderStep]:
        """The ladder's steps as times, in order, counted from when the pause began: the task's entry,
        on the one clock of its deadline (`baton.services.core.Core.deadline_of`: entry + the declared
        timeout). A step that would not come before the deadline is left out."""
        if timeout_seconds is None:
            return []
        return self.steps_from(deadline - timedelta(seconds=timeout_seconds), deadline)

    def steps_from(self, began: datetime, deadline: datetime) -> list[LadderStep]:
        """The steps counted from `began` (an async question's or a blocking ask's creation, whose
        deadline is its `expires_at`), those before `deadline`, in order."""
        wanted: list[tuple[LadderStepName, int | None]] = [
            ("remind", self.remind_after),
            ("escalate", self.escalate_after),
        ]
        found = [
            LadderStep(step=name, at=began + timedelta(seconds=seconds))
            for name, seconds in wanted
            if seconds is not None
        ]
        return [s for s in found if s.at < deadline]


class LadderStep(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    step: LadderStepName
    at: datetime


class AnswerCheck(BaseModel):
    """What a person's answer to this pause must be: `kind` says how the default is checked."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["answers", "interrupt", "question", "review", "await"]
    options: list[str] | None = None
    allow_free_text: bool = True
    schema_: dict[str, Any] | None = None
    json_schema: dict[str, Any] | None = None

    def check(self, value: Any) -> None:
        if self.kind == "await":
            raise ValidationFailedError(
                "on_timeout.default: an await gate has no answer of its own; declare the default on each "
                'question and "use_question_defaults" here',
                details={"path": "on_timeout"},
            )
        if self.kind == "review":
            if value not in REVIEW_DEFAULTS:
                raise ValidationFailedError(
                    f"on_timeout.default of a review gate must be one of {list(REVIEW_DEFAULTS)}: a default "
                    f"can never approve or merge (got {value!r})",
                    details={"path": "on_timeout.default", "allowed": list(REVIEW_DEFAULTS), "code": "C260"},
                )
            return
        if self.kind == "question":
            self._check_question(value)
            return
        if self.kind == "interrupt":
            # Imported here: the answer schemas (and fastjsonschema) are for the pause's creation, not for
            # every gate function that parses a ladder in its payload.
            from baton.domain.answer_schema import validate_answer

            try:
                validate_answer(value, schema=self.schema_, json_schema=self.json_schema)
            except ValidationFailedError as err:
                raise ValidationFailedError(
                    f"on_timeout.default is not a valid answer: {err.message}",
                    details={**err.details, "path": "on_timeout.default"},
                ) from None
            return
        self.check_answers(value, path="on_timeout.default")

    def check_answers(self, value: Any, *, path: str) -> None:
        """An ask's answers (its default at `on_timeout.default`, a person's at `answers`): a non-empty
        object, as a resume sends; with options and free text off, each value one of them (a 422 naming
        the key and the options). One rule for the default and for every resume."""
        if not isinstance(value, dict) or not value:
            raise ValidationFailedError(
                f"{path} of an ask must be a non-empty object of answers, as a resume sends", details={"path": path}
            )
        if self.options and not self.allow_free_text:
            refused = [(k, v) for k, v in value.items() if v not in self.options]
            if refused:
                key, bad = refused[0]
                raise ValidationFailedError(
                    f"{path}.{key}: {bad!r} is not one of the options {self.options} (free text is off for this ask)",
                    details={"path": f"{path}.{key}", "options": self.options},
                )

    def _check_question(self, value: Any) -> None:
        """An async question's answer: any non-empty value, one of its options when free text is off."""
        empty = value is None or (isinstance(value, str) and not value.strip()) or value in ({}, [])
        if empty:
            raise ValidationFailedError("on_timeout.default must not be empty", details={"path": "on_timeout.default"})
        if self.options and not self.allow_free_text and value not in self.options:
            raise ValidationFailedError(
                f"on_timeout.default: {value!r} is not one of the options {self.options}",
                details={"path": "on_timeout.default", "options": self.options},
            )
