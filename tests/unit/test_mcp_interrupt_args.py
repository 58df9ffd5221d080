"""The MCP `interrupt` tool builds its `InterruptSpec` from its arguments by name; the spec ignores a name it
does not know, so each argument is checked here to land in the spec (a new argument fails until it does)."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from baton.domain.fields import MAX_JSON_DEPTH
from baton.domain.interrupt_spec import InterruptSpec
from baton.errors import BadRequestError
from baton.mcp.agent import AgentTools
from baton.mcp.tools import InterruptArgs

SCHEMA = {"type": "string", "enum": ["go", "stop"]}
# Every argument set to a value other than its default, by the name the tool's caller sends.
SENT: dict[str, Any] = {
    "prompt": "Deploy?",
    "json_schema": {"type": "string", "enum": ["go", "stop"]},
    "schema": SCHEMA,
    "state": {"config": {"flag": False}},
    "timeout_seconds": 600,
    "approval": {"approvals": 2, "approvers": ["alice", "bob"]},
    "action": {"name": "deploy", "arguments": {"env": "prod"}, "onAllow": "go", "onDeny": "stop"},
    "remind_after": 60,
    "escalate_after": 120,
    "escalate_to": ["email"],
    "escalate_to_operators": ["carol"],
    "on_timeout": {"default": "stop"},
}


def _plain(value: Any) -> Any:
    return value.model_dump() if isinstance(value, BaseModel) else value


# Where the spec keeps each argument (by the argument's name in `InterruptArgs`).
KEPT: dict[str, Callable[[InterruptSpec], Any]] = {
    "prompt": lambda spec: spec.prompt,
    "json_schema": lambda spec: spec.json_schema,
    "schema_": lambda spec: spec.schema_,
    "state": lambda spec: spec.state,
    "timeout_seconds": lambda spec: spec.timeout_ms and spec.timeout_ms // 1000,
    "approval": lambda spec: spec.approval and spec.approval.model_dump(include={"approvals", "approvers"}),
    "action": lambda spec: spec.action and spec.action.model_dump(by_alias=True),
    "remind_after": lambda spec: spec.ladder and spec.ladder.remind_after,
    "escalate_after": lambda spec: spec.ladder and spec.ladder.escalate_after,
    "escalate_to": lambda spec: spec.ladder and spec.ladder.escalate_to,
    "escalate_to_operators": lambda spec: spec.ladder and spec.ladder.escalate_to_operators,
    "on_timeout": lambda spec: spec.ladder and _plain(spec.ladder.on_timeout),
}


class Created(Exception):
    """Stops the tool at its create: the spec is what is checked."""

    def __init__(self, spec: InterruptSpec) -> None:
        super().__init__("created")
        self.spec = spec


class CapturingInterrupts:
    def create(self, spec: InterruptSpec, *, caller: str) -> Any:
        raise Created(spec)


def _spec_of(args: InterruptArgs, monkeypatch: pytest.MonkeyPatch) -> InterruptSpec:
    monkeypatch.setattr(AgentTools, "_interrupts", lambda _self: CapturingInterrupts())
    tools = AgentTools(SimpleNamespace(), "run-a", SimpleNamespace(principal="agent"))  # type: ignore[arg-type]
    with pytest.raises(Created) as created:
        tools.interrupt(args)
    return created.value.spec


def test_every_interrupt_argument_lands_in_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(InterruptArgs.model_fields) == set(KEPT), "a new argument: say where the spec keeps it"
    args = InterruptArgs.model_validate(SENT)
    assert set(args.model_fields_set) == set(KEPT)  # each one sent, none left to its default
    spec = _spec_of(args, monkeypatch)
    for name, field in InterruptArgs.model_fields.items():
        assert KEPT[name](spec) == SENT[field.alias or name], name
    assert spec.session_id == "run-a"


def test_the_schema_keeps_its_depth_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """`schema` reaches the spec by its wire name, so the spec's JSON depth check sees it as before."""
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(MAX_JSON_DEPTH + 1):
        inner["x"] = {}
        inner = inner["x"]
    args = InterruptArgs.model_validate({"prompt": "Deep?", "timeout_seconds": 60, "schema": deep})
    with pytest.raises(BadRequestError, match="schema is nested deeper"):
        _spec_of(args, monkeypatch)


def test_an_interrupt_without_a_ladder_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec_of(InterruptArgs(prompt="Go?", timeout_seconds=60), monkeypatch)
    assert (spec.ladder, spec.approval, spec.action, spec.timeout_ms) == (None, None, None, 60_000)
