"""A tool call's digest and a person's decision about it (baton/domain/tool_calls.py)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from pydantic import ValidationError

from baton.domain.ladder import Ladder, TimeoutDefault
from baton.domain.tool_calls import (
    CONSUMED,
    StoredDecision,
    ToolCall,
    ToolDecision,
    UseRefused,
    parse_decision,
    timeout_ladder,
)
from baton.errors import BadRequestError, ValidationFailedError

SCHEMA = {"type": "object", "properties": {"path": {"type": "string", "maxLength": 10}}, "required": ["path"]}


def test_the_digest_is_sha256_of_the_canonical_json_sorted_compact_utf8() -> None:
    call = ToolCall(tool="Write", arguments={"z": 1, "a": "é"}, arguments_schema=None)
    canonical = '{"arguments":{"a":"é","z":1},"schema":null,"tool":"Write"}'.encode()
    assert call.digest == hashlib.sha256(canonical).hexdigest()
    assert ToolCall(tool="Write", arguments={"a": "é", "z": 1}).digest == call.digest  # key order is not meaning
    assert ToolCall(tool="Write", arguments={"a": "é", "z": 2}).digest != call.digest
    assert ToolCall(tool="Write", arguments={"a": "é", "z": 1}, arguments_schema=SCHEMA).digest != call.digest
    assert ToolCall(tool="Edit", arguments={"a": "é", "z": 1}).digest != call.digest


def test_a_schema_that_does_not_compile_is_refused() -> None:
    with pytest.raises(BadRequestError):
        ToolCall(tool="t", arguments={}, arguments_schema={"type": "nonsense"})


@pytest.mark.parametrize(
    ("answer", "path"),
    [
        ({"decision": "maybe"}, "answer.decision"),
        ({"decision": "edit"}, "answer"),
        ({"decision": "approve", "arguments": {"a": 1}}, "answer"),
        ({"decision": "deny", "remember": {"expires_in_seconds": 60}}, "answer"),
        ({"decision": "approve", "remember": {"scope": "forever", "expires_in_seconds": 60}}, "answer.remember.scope"),
        ({"decision": "approve", "remember": {"expires_in_seconds": 10**9}}, "answer.remember.expires_in_seconds"),
        ({"decision": "approve", "surprise": 1}, "answer.surprise"),
    ],
)
def test_a_decision_that_breaks_a_rule_is_a_422_at_its_field(answer: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationFailedError) as refused:
        parse_decision(answer, path="answer")
    assert refused.value.details["path"] == path


def test_an_edit_is_validated_against_the_calls_schema_at_the_field() -> None:
    call = ToolCall(tool="Write", arguments={"path": "a.txt"}, arguments_schema=SCHEMA)
    edited = ToolDecision(decision="edit", arguments={"path": "b.txt"}).decided_call(call)
    assert edited.arguments == {"path": "b.txt"} and edited.digest != call.digest
    with pytest.raises(ValidationFailedError) as refused:
        ToolDecision(decision="edit", arguments={"path": "much-too-long.txt"}).decided_call(call)
    assert refused.value.details["path"] == "answer.arguments.path"
    assert ToolDecision(decision="approve").decided_call(call) == call


def test_a_remember_constraint_is_a_json_schema_on_the_arguments() -> None:
    remember = {"expires_in_seconds": 60, "constraint": {"properties": {"x": {"const": 1}}}}
    decision = ToolDecision.model_validate({"decision": "approve", "remember": remember})
    assert decision.remember is not None
    assert decision.remember.allows({"x": 1}) and not decision.remember.allows({"x": 2})
    with pytest.raises(ValidationError):
        ToolDecision.model_validate({"decision": "deny", "reason": "x" * 2001})


def test_the_default_at_the_deadline_is_deny_unless_declared() -> None:
    call = ToolCall(tool="Bash", arguments={"command": "ls"})
    ladder = timeout_ladder(None, call)
    assert ladder.default is not None and ladder.default.default["decision"] == "deny"
    assert ladder.default.default["reason"]
    approve = Ladder(remind_after=5, on_timeout=TimeoutDefault(default={"decision": "approve"}))
    declared = timeout_ladder(approve, call)
    assert declared.remind_after == 5 and declared.default is not None
    assert declared.default.default["decision"] == "approve" and declared.default.default["digest"] == call.digest
    for bad in ({"decision": "edit", "arguments": {}}, {"decision": "nope"}):
        with pytest.raises(ValidationFailedError) as refused:
            timeout_ladder(Ladder(on_timeout=TimeoutDefault(default=bad)), call)
        assert refused.value.details["path"].startswith("on_timeout.default")


def test_a_bare_approve_or_deny_is_that_decision() -> None:
    assert parse_decision("approve", path="answer") == ToolDecision(decision="approve")
    assert parse_decision("deny", path="answer") == ToolDecision(decision="deny")
    with pytest.raises(ValidationFailedError) as refused:
        parse_decision("edit", path="answer")
    assert refused.value.details["path"] == "answer"


APPROVED = ToolCall(tool="Write", arguments={"path": "a.md"}).digest
OTHER = ToolCall(tool="Write", arguments={"path": "b.md"}).digest


@pytest.mark.parametrize(
    ("status", "answer", "reason", "digest", "refused"),
    [
        ("pending", None, None, APPROVED, {"reason": "pending"}),
        ("timed_out", None, "timeout", APPROVED, {"reason": "timed_out"}),
        ("answered", {"decision": "deny"}, None, APPROVED, {"reason": "denied"}),
        ("answered", {"decision": "approve", "digest": APPROVED}, CONSUMED, APPROVED, {"reason": CONSUMED}),
        (
            "answered",
            {"decision": "approve", "digest": APPROVED},
            None,
            OTHER,
            {"reason": "digest_mismatch", "approved_digest": APPROVED},
        ),
    ],
)
def test_a_call_runs_only_under_an_unused_approve_of_that_very_call(
    status: str, answer: Any, reason: str | None, digest: str, refused: dict[str, Any]
) -> None:
    use = StoredDecision.to_use("a1", digest, status=status, answer=answer, reason=reason)
    assert isinstance(use, UseRefused) and use.details == refused and use.message.startswith("tool approval a1 ")
    approved = {"decision": "approve", "digest": APPROVED}
    used = StoredDecision.to_use("a1", APPROVED, status="answered", answer=approved, reason=None)
    assert used == StoredDecision(decision="approve", digest=APPROVED)
