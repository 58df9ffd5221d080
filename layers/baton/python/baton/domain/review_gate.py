"""The review gate's configuration (the gate's input) and its `review_url` template.

A gate is configured per use, in the input of its state machine (`statemachines/review_gate.asl.json`):

    {"gate": "ship_review", "repo_path": "/path/to/repo", "run_branch": "baton/run-42",
     "posture": "human_required", "merge_strategy": "squash", "merge_into": "current", "max_turns": 8,
     "review_url": "https://preview.example.com/{run_id}/{outputs.preview}", "outputs": {...},
     "timeout_seconds": 86400}

`parse_gate_config` turns a bad configuration into one readable sentence (the gate refuses to start
with it); `resolve_review_url` renders the template, or "" plus a warning for an unknown name.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from baton.domain.answer_schema import check_schema_definition
from baton.domain.approval import ApprovalPolicy
from baton.domain.ladder import AnswerCheck, Ladder
from baton.errors import BatonError, ValidationFailedError

ACTIONS: tuple[str, ...] = ("reply", "approve_merge", "force_merge", "request_changes")
MERGE_ACTIONS: tuple[str, ...] = ("approve_merge", "force_merge")
FINAL_ACTIONS: tuple[str, ...] = ("approve_merge", "force_merge", "request_changes")
STRATEGIES: tuple[str, ...] = ("squash", "merge")
KEY_ACTION = "__review_action"
KEY_REPLY = "__review_reply"
KEY_MESSAGE = "__review_message"
KEY_STRATEGY = "__review_merge_strategy"
# Optional: the reviewed head the operator saw (the inbox sends it); an approval of another head is refused.
KEY_HEAD = "__review_head"
# Why the operator overrides the companion: required by a force_merge over a blocking verdict (the
# decision log records it; __review_message stays the squash commit's message).
KEY_REASON = "__review_reason"
RESERVED_KEYS: tuple[str, ...] = (KEY_ACTION, KEY_REPLY, KEY_MESSAGE, KEY_STRATEGY, KEY_HEAD, KEY_REASON)
MAX_GATE_TIMEOUT_SECONDS = 7 * 86400

DEFAULT_VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["approve", "request_changes", "needs_discussion"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "blockers": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["decision", "confidence", "blockers"],
}

_GATE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


class GateConfig(BaseModel):
    """One review gate's configuration. Unknown fields are refused (a typo must not pass silently)."""

    gate: str = Field(default="review", description="the gate's node name (interaction node, WAIT#<gate>)")
    run_branch: str = Field(min_length=1, description="the run's branch holding the agent's commits")
    repo_path: str | None = Field(default=None, description="local repository (required by the local merge runner)")
    repo_url: str | None = Field(
        default=None, description="deployed: overrides the merge project's repository (required when it has none)"
    )
    base_branch: str | None = Field(default=None, description="diff base (default: the merge target, else HEAD)")
    model: str | None = Field(default=None, description="companion model id (Bedrock); default: the deployment's")
    system: str | None = Field(default=None, description="companion system prompt")
    output_schema: dict[str, Any] | None = Field(default=None, description="JSON schema the verdict must satisfy")
    review_url: str = Field(default="", description="template resolved at pause time; empty = no link")
    outputs: dict[str, Any] = Field(default_factory=dict, description="upstream outputs review_url may name")
    posture: Literal["human_required", "agent_verdict_ok"] = "human_required"
    confidence_threshold: float = Field(default=0.8, ge=0.0, le=1.0)
    merge_strategy: Literal["squash", "merge"] = "squash"
    merge_into: str = Field(default="current", min_length=1, description="current | none | <branch>")
    max_turns: int = Field(default=8, ge=1, le=50, description="companion turns at most")
    timeout_seconds: int = Field(default=86400, ge=1, le=MAX_GATE_TIMEOUT_SECONDS)
    merge_timeout_seconds: int = Field(default=1800, ge=1, le=86400)
    diff_max_bytes: int = Field(default=60_000, ge=256, le=400_000)
    notify: list[str] = Field(default_factory=lambda: ["console"])
    prompt: str = Field(default="Test the change with the companion, then approve and merge or request changes.")
    approval: ApprovalPolicy | None = Field(
        default=None,
        description="a quorum: approve_merge / force_merge approve, request_changes rejects; the merge runs once "
        "the approvals are met (baton/services/review/actions.py); no auto-merge",
    )

    model_config = {"extra": "forbid"}

    ladder: Ladder | None = Field(
        default=None,
        description='remind / escalate; on_timeout "fail" or {"default": "request_changes"} (a default never merges)',
    )

    @model_validator(mode="after")
    def _ladder_keeps(self) -> GateConfig:
        """A ladder's steps come before the timeout; its default can only be `request_changes` (C260)."""
        if self.ladder is not None:
            try:
                self.ladder.check_for(self.timeout_seconds, answer_is=AnswerCheck(kind="review"))
            except ValidationFailedError as err:
                raise ValueError(err.message) from None
        return self

    @field_validator("gate")
    @classmethod
    def _gate_name(cls, value: str) -> str:
        if not _GATE_NAME.match(value):
            raise ValueError("must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit")
        return value

    @property
    def verdict_schema(self) -> dict[str, Any]:
        return self.output_schema or DEFAULT_VERDICT_SCHEMA


def parse_gate_config(raw: Any, *, merge_runner: str, merge_repository: str = "") -> GateConfig:
    """The gate's configuration, or ValidationFailedError with one sentence naming what is wrong.

    `merge_repository` is the deployment's repository (BATON_MERGE_REPOSITORY, set by the CDK stack from
    `-c repository=...`). With the CodeBuild runner a gate needs it or its own `repo_url` — also when
    merge_into is "none": the run branch is fetched from that repository even when nothing is merged."""
    if not isinstance(raw, dict):
        raise ValidationFailedError("the review gate's input must be a JSON object")
    if not raw.get("run_branch"):
        raise ValidationFailedError(
            f"review gate '{raw.get('gate', 'review')}' has no repository to merge: set run_branch (the run's "
            "branch) and "
            + ("repo_path (the local repository)" if merge_runner == "local" else "the merge project's repository"),
            details={"path": "run_branch"},
        )
    config = read_gate_config(raw)
    name = config.gate
    if merge_runner == "local" and not config.repo_path:
        raise ValidationFailedError(
            f"review gate '{name}' has no repository to merge: the local merge runner needs repo_path "
            "(the path of the git repository holding the run branch)",
            details={"path": "repo_path"},
        )
    if merge_runner != "local" and not (config.repo_url or merge_repository.strip()):
        raise ValidationFailedError(
            f"review gate '{name}' has no repository to merge: this deployment has no repository "
            "(deploy with -c repository=<https URL>) and the gate sets no repo_url",
            details={"path": "repo_url"},
        )
    if config.merge_into == config.run_branch:
        raise ValidationFailedError(
            f"review gate '{name}': merge_into names the run branch itself ({config.run_branch!r})",
            details={"path": "merge_into"},
        )
    if config.output_schema is not None:
        try:
            check_schema_definition(json_schema=config.output_schema)
        except BatonError as err:
            raise ValidationFailedError(
                f"review gate '{name}': output_schema is not a usable JSON schema: {err.message}",
                details={"path": "output_schema"},
            ) from None
    return config


def read_gate_config(raw: Any) -> GateConfig:
    """A configuration as stored or given; ValidationFailedError naming each problem (also a record
    stored by an older Baton that this model no longer reads)."""
    try:
        return GateConfig.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '$'}: {e['msg']}" for e in err.errors(include_url=False)
        )
        raise ValidationFailedError(f"invalid review gate configuration: {problems}") from None


def _lookup(scope: dict[str, Any], dotted: str) -> tuple[bool, Any]:
    current: Any = scope
    for part in dotted.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        else:
            return False, None
    return True, current


def resolve_review_url(template: str, scope: dict[str, Any]) -> tuple[str, list[str]]:
    """Render `{name}` / `{outputs.x.y}` / `{input.x}` from `scope`. Any unknown or non-scalar name makes the
    whole URL empty (the link is hidden) and adds a warning; an empty template is simply no link."""
    if not template.strip():
        return "", []
    warnings: list[str] = []
    values: dict[str, str] = {}
    for name in _PLACEHOLDER.findall(template):
        found, value = _lookup(scope, name.strip())
        if not found or value is None or isinstance(value, dict | list):
            what = "an unknown output" if name.strip().startswith("outputs.") else "an unknown name"
            warnings.append(f"review_url names {what} '{name}'; the review link is hidden")
            continue
        values[name] = str(value)
    if warnings:
        return "", warnings
    rendered = _PLACEHOLDER.sub(lambda m: values[m.group(1)], template).strip()
    return rendered, []


def verdict_blocks_approval(verdict: dict[str, Any] | None) -> bool:
    """A verdict that asks for changes or lists blockers: approve_merge is refused (force_merge remains)."""
    return verdict is not None and bool(verdict.get("blockers") or verdict.get("decision") == "request_changes")


def allowed_actions(verdict: dict[str, Any] | None, *, turns_used: int, max_turns: int) -> list[str]:
    """What the operator may do at a pending review, in ACTIONS' order: one rule for the API's 409, the
    read model (`GET .../review`), `baton review show` and the inbox. No posture approves over blockers
    (agent_verdict_ok only auto-merges a clean approve), so a blocking verdict never offers approve_merge."""
    blocked = verdict_blocks_approval(verdict)
    return [
        action
        for action in ACTIONS
        if not (action == "reply" and turns_used >= max_turns) and not (action == "approve_merge" and blocked)
    ]
