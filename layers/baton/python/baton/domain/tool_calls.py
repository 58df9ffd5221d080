"""A tool call an agent wants to run and a person's decision about it (issue 30): pure rules, no ports.

An approval is bound to the exact call: `ToolCall.digest` is the sha256 of the canonical JSON of
{tool, arguments, schema} (sorted keys, compact separators, UTF-8), stored with the decision; the
adapter re-computes it right before the tool runs (baton/services/tool_approvals.py `consume`).
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import Any, Final, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from baton.domain.answer_schema import check_schema_definition, validate_answer
from baton.domain.approval import ApprovalPolicy
from baton.domain.fields import MAX_TIMEOUT_SECONDS
from baton.domain.ladder import Ladder, TimeoutDefault
from baton.errors import ValidationFailedError
from baton.ids import iso, parse_iso

Risk = Literal["low", "medium", "high"]
Decision = Literal["approve", "deny", "edit"]
GrantScope = Literal["run", "session"]
DIGEST_PATTERN = r"^[0-9a-f]{64}$"
CONSUMED = "consumed"  # the stored reason of an approval its adapter has used (single use)
TIMEOUT_DENY_REASON = "nobody answered by the deadline: the tool call was denied"


def canonical_json(value: Any) -> bytes:
    """The one byte form a digest is taken of: sorted keys, no spaces, UTF-8 (not ASCII-escaped)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def call_digest(tool: str, arguments: dict[str, Any], schema: dict[str, Any] | None) -> str:
    return hashlib.sha256(canonical_json({"tool": tool, "arguments": arguments, "schema": schema})).hexdigest()


def open_call_key(session: str | None, digest: str) -> str:
    """The key a repeat of a call finds its open approval by: the call's digest within its session (hashed
    with it, so any session id makes a short, fixed-length key)."""
    return hashlib.sha256(canonical_json({"session": session, "digest": digest})).hexdigest()


def satisfies(constraint: dict[str, Any] | None, arguments: dict[str, Any]) -> bool:
    """Do the arguments meet a grant's constraint (a JSON Schema; none: any arguments do)?"""
    if constraint is None:
        return True
    try:
        validate_answer(arguments, json_schema=constraint)
    except ValidationFailedError:
        return False
    return True


class ToolCall(BaseModel):
    """What the agent is about to run: the tool, its arguments and, optionally, their JSON Schema."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(min_length=1, max_length=200, description="The tool's name as the agent calls it.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The call's arguments (a JSON object).")
    arguments_schema: dict[str, Any] | None = Field(
        default=None, description="The tool's argument JSON Schema: an edit's arguments are validated against it."
    )

    @model_validator(mode="after")
    def _schema_compiles(self) -> ToolCall:
        if self.arguments_schema is not None:
            check_schema_definition(json_schema=self.arguments_schema)
        return self

    @property
    def digest(self) -> str:
        return call_digest(self.tool, self.arguments, self.arguments_schema)

    def with_arguments(self, arguments: dict[str, Any]) -> ToolCall:
        return self.model_copy(update={"arguments": arguments})


class Remember(BaseModel):
    """An "always allow" grant an approve may carry: this tool, in this run or session, until it expires."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scope: GrantScope = Field(default="run", description="run: this run; session: the request's session.")
    expires_in_seconds: int = Field(ge=1, le=MAX_TIMEOUT_SECONDS, description="How long the grant lasts.")
    constraint: dict[str, Any] | None = Field(
        default=None, description="A JSON Schema a later call's arguments must satisfy for the grant to apply."
    )

    @model_validator(mode="after")
    def _constraint_compiles(self) -> Remember:
        if self.constraint is not None:
            check_schema_definition(json_schema=self.constraint)
        return self

    def allows(self, arguments: dict[str, Any]) -> bool:
        return satisfies(self.constraint, arguments)


class ToolDecision(BaseModel):
    """A person's answer to a tool approval (the `answer` of POST .../interactions/{id}/answer)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    decision: Decision
    reason: str | None = Field(default=None, max_length=2000, description="Shown to the model (a denial's why).")
    arguments: dict[str, Any] | None = Field(default=None, description="edit: the arguments to run instead.")
    remember: Remember | None = Field(default=None, description="approve: also allow later matching calls.")

    @model_validator(mode="after")
    def _fits_the_decision(self) -> ToolDecision:
        if self.decision == "edit" and self.arguments is None:
            raise ValueError("an edit needs its arguments")
        if self.decision != "edit" and self.arguments is not None:
            raise ValueError("arguments are only for an edit")
        if self.decision != "approve" and self.remember is not None:
            raise ValueError("remember is only for an approve")
        return self

    @property
    def allows(self) -> bool:
        return self.decision in ("approve", "edit")

    def decided_call(self, call: ToolCall) -> ToolCall:
        """The call this decision lets run: the edited one for an edit, checked against the call's schema
        (422 at `answer.arguments...`)."""
        if self.arguments is None:
            return call
        try:
            validate_answer(self.arguments, json_schema=call.arguments_schema)
        except ValidationFailedError as bad:
            inner = str(bad.details.get("path", "$")).removeprefix("$")
            path = f"answer.arguments{inner}"
            raise ValidationFailedError(
                f"the edited arguments do not fit the tool's schema at {path}: {bad.details.get('reason')}",
                details={**bad.details, "path": path},
            ) from None
        return call.with_arguments(self.arguments)


class UseRefused(NamedTuple):
    """Why an approval may not let a call run (`consume`'s 409): its message and details."""

    message: str
    details: dict[str, Any]


class StoredDecision(ToolDecision):
    """The decision as stored on the approval: bound to the digest of the call it lets run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    digest: str | None = Field(default=None, pattern=DIGEST_PATTERN)
    grant_id: str | None = Field(default=None, description="The remembered grant that decided it, if one did.")
    policy_rule: str | None = Field(default=None, description="The policy rule that decided it, if one did.")
    policy_version: str | None = None  # the version of that rule's policy
    revoked_by: str | None = None  # a grant this approval carries, revoked
    revoked_at: str | None = None

    @classmethod
    def by_grant(cls, grant_id: str, digest: str) -> dict[str, Any]:
        """The stored answer of a call a remembered grant approves at once."""
        decided = cls(decision="approve", reason=f"remembered grant {grant_id}", digest=digest, grant_id=grant_id)
        return decided.model_dump(exclude_none=True)

    @classmethod
    def by_policy(cls, *, allows: bool, rule: str, version: str, reason: str | None, digest: str) -> dict[str, Any]:
        """The stored answer of a call an enforced policy allows or denies at once (a deny binds no digest)."""
        decided = cls(
            decision="approve" if allows else "deny",
            reason=reason,
            digest=digest if allows else None,
            policy_rule=rule,
            policy_version=version,
        )
        return decided.model_dump(exclude_none=True)

    @classmethod
    def to_use(
        cls, approval_id: str, digest: str, *, status: str, answer: Any, reason: str | None
    ) -> StoredDecision | UseRefused:
        """The decision a call of `digest` runs under, right before it runs, or why it may not: the approval
        (its stored `status`, `answer` and `reason`) must be answered, allow, be unused (single use) and have
        approved this very call."""
        if status != "answered":
            return UseRefused(f"tool approval {approval_id} is {status}: the call may not run", {"reason": status})
        stored = cls.model_validate(answer)
        if not stored.allows:
            return UseRefused(f"tool approval {approval_id} was denied: the call may not run", {"reason": "denied"})
        if reason == CONSUMED:
            message = f"tool approval {approval_id} was already used: a call needs a new one"
            return UseRefused(message, {"reason": CONSUMED})
        if stored.digest != digest:
            message = f"tool approval {approval_id} approved another call ({stored.digest}): this one needs its own"
            return UseRefused(message, {"reason": "digest_mismatch", "approved_digest": stored.digest})
        return stored

    def grant_until(self, answered_at: str) -> str | None:
        """When the grant this decision carries ends (None: it carries none, or it was revoked)."""
        if self.remember is None or self.revoked_at is not None:
            return None
        return iso(parse_iso(answered_at) + timedelta(seconds=self.remember.expires_in_seconds))


# The declared risk whose approval asks the approver for a passkey (a second factor) where the stack has
# WebAuthn set up (`baton/services/passkeys.py`), and never gets a notification's one-tap approve. The risk,
# not a policy rule's annotation: every approval has one, with or without a policy.
SECOND_FACTOR_RISKS: Final = frozenset({"high"})


class ToolApprovalSpec(BaseModel):
    """What a tool approval asks, stored on its request (`baton.models.ToolApprovalPause.tool`)."""

    model_config = ConfigDict(extra="forbid")

    call: ToolCall
    digest: str
    risk: Risk = "medium"
    reason: str
    session: str | None = None
    approval: ApprovalPolicy | None = None  # a quorum: each answer is a vote (approve/edit approve, deny rejects)
    requested_by: str | None = None  # with a quorum: the asking agent, who may not vote

    def prompt(self) -> str:
        """The call as a person reads it in the inbox, Slack, email and the CLI."""
        shown = json.dumps(self.call.arguments, indent=2, sort_keys=True, ensure_ascii=False)
        shown = shown if len(shown) <= 3000 else shown[:2997] + "..."
        return f"Allow the tool call {self.call.tool} ({self.risk} risk)? {self.reason}\narguments:\n{shown}"


def parse_decision(value: Any, *, path: str) -> ToolDecision:
    """A decision from its JSON (an answer, a declared default): 422 at the failing field under `path`. A bare
    "approve" or "deny" (a button, a free-text answer) is that decision with no reason."""
    if value in ("approve", "deny"):
        value = {"decision": value}
    try:
        return ToolDecision.model_validate(value)
    except ValidationError as bad:
        first = bad.errors()[0]
        at = ".".join([path, *(str(p) for p in first["loc"])])
        raise ValidationFailedError(f"{at}: {first['msg']}", details={"path": at}) from None


def stored_decision(value: Any, call: ToolCall) -> dict[str, Any]:
    """A person's answer as the approval of `call` stores it (422 at the field under `answer`): bound to
    the digest of the call it lets run (an edit's, checked against the call's schema)."""
    decision = parse_decision(value, path="answer")
    decided = decision.decided_call(call)
    digest = decided.digest if decision.allows else None
    return StoredDecision(**decision.model_dump(), digest=digest).model_dump(exclude_none=True)


def timeout_ladder(declared: Ladder | None, call: ToolCall) -> Ladder:
    """The approval's ladder, always with a default taken at the deadline: deny unless the request declared
    `on_timeout: {"default": {"decision": "approve" | "deny", ...}}` (an approve bound to this call)."""
    default = declared.default if declared is not None else None
    if declared is not None and declared.on_timeout != "fail" and default is None:
        raise ValidationFailedError('on_timeout must be "fail" or {"default": {...}}', details={"path": "on_timeout"})
    declared_default = default.default if default else {"decision": "deny"}
    if isinstance(declared_default, BaseModel):  # the request's typed default (contracts.ToolTimeoutDecision)
        declared_default = declared_default.model_dump(exclude_none=True)
    decided = parse_decision(declared_default, path="on_timeout.default")
    if decided.decision == "edit" or decided.remember is not None:
        raise ValidationFailedError(
            "on_timeout.default is an approve or a deny", details={"path": "on_timeout.default"}
        )
    value = decided.model_dump(exclude_none=True) | {"reason": decided.reason or TIMEOUT_DENY_REASON}
    if decided.allows:
        value["digest"] = call.digest
    return (declared or Ladder()).model_copy(update={"on_timeout": TimeoutDefault(default=value)})


def needs_second_factor(spec: ToolApprovalSpec) -> bool:
    """Whether approving this call takes a fresh passkey assertion (denying never does)."""
    return spec.risk in SECOND_FACTOR_RISKS
