"""The answer-time metric (baton.runtime.answer_times.publish_settled), on the DynamoDB adapter (moto): an
answer of any kind writes exactly one EMF line, dimension kind, with the seconds from its creation to its
answer and whether it met its deadline; a losing answer, a claim or a stop writes none; a timeout counts a
deadline missed. The Waits page (GET /api/stats/waits) and the metric agree on the same items."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts import AskRequest, AwaitRequest, ClaimInterrupt, ResumeInterrupt
from baton.contracts.tool_approvals import ToolApprovalRequest
from baton.domain.interrupt_spec import InterruptSpec
from baton.domain.tool_calls import ToolCall
from baton.domain.wait_times import percentile
from baton.errors import ConflictError
from baton.runtime.answer_times import (
    METRIC_ANSWER_TIME,
    METRIC_DEADLINES_MET,
    METRIC_DEADLINES_MISSED,
)
from baton.services.claims import ClaimService
from baton.services.tool_approvals import ToolApprovalService
from baton.services.waits import WaitStatsService
from tests.conftest import FixedClock

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

DENY = {"decision": "deny", "reason": "not now"}


@pytest.fixture
def clock(moto_stack: MotoStack, monkeypatch: pytest.MonkeyPatch) -> FixedClock:
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")  # the integration stack turns them off
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "Baton/it")
    fixed = FixedClock(datetime.now(UTC).replace(microsecond=0))
    moto_stack.services.core.clock = fixed
    return fixed


def _lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """The EMF lines of settled items written since the last call, in order."""
    settled = {METRIC_ANSWER_TIME, METRIC_DEADLINES_MET, METRIC_DEADLINES_MISSED}
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    return [
        line
        for line in out
        if "_aws" in line and settled & {m["Name"] for d in line["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}
    ]


def _value(line: dict[str, Any], name: str) -> float | None:
    value = line.get(name)
    return value[0] if isinstance(value, list) else value


def _tool_approval(stack: MotoStack, run_id: str, timeout_seconds: int = 600) -> str:
    body = ToolApprovalRequest(
        call=ToolCall(tool="Bash", arguments={"command": "make deploy"}), reason="ship", timeout_seconds=timeout_seconds
    )
    approval, created = ToolApprovalService(stack.services.core).request(run_id, body, caller="agent")
    assert created and approval.state.status == "pending"
    return approval.interaction_id


def test_each_answer_writes_one_answer_time_line_of_its_kind(
    moto_stack: MotoStack, clock: FixedClock, capsys: pytest.CaptureFixture[str]
) -> None:
    services = moto_stack.services
    questions, interrupts = services.questions, services.interrupts
    asked = questions.ask("times-q", AskRequest(node="draft", question="Which DB?"), caller="agent")
    approval = _tool_approval(moto_stack, "times-t")
    interrupt, _ = interrupts.create(InterruptSpec(session_id="times-i", prompt="Ship?"), caller="agent")
    ClaimService(interrupts).claim(interrupt.interaction_id, ClaimInterrupt(), operator="bob")  # not an answer
    assert _lines(capsys) == []

    clock.advance(90)
    questions.answer("times-q", asked["interaction_id"], "postgres", caller="alice")
    clock.advance(30)
    ToolApprovalService(services.core).answer("times-t", approval, DENY, caller="alice")
    with pytest.raises(ConflictError):  # a second, different answer loses: no second line
        ToolApprovalService(services.core).answer("times-t", approval, {"decision": "approve"}, caller="carol")
    clock.advance(30)
    interrupts.resume(interrupt.interaction_id, ResumeInterrupt(input="yes"), caller="bob")

    lines = _lines(capsys)
    assert [line["kind"] for line in lines] == ["question", "tool_approval", "interrupt"], lines
    assert [_value(line, METRIC_ANSWER_TIME) for line in lines] == [90, 120, 150]
    for line in lines:
        (directive,) = line["_aws"]["CloudWatchMetrics"]
        assert directive["Namespace"] == "Baton/it" and directive["Dimensions"] == [["kind", "service"]]
        assert "run_id" in line and "interaction_id" in line  # metadata, not dimensions
        units = {m["Name"]: m["Unit"] for m in directive["Metrics"]}
        assert units[METRIC_ANSWER_TIME] == "Seconds"
    question, tool, _ = lines
    assert METRIC_DEADLINES_MET not in question  # a question asked with no deadline has none to meet
    assert (_value(tool, METRIC_DEADLINES_MET), _value(tool, METRIC_DEADLINES_MISSED)) == (1, 0)


def test_the_last_answer_of_a_tool_await_settles_the_await_too(
    moto_stack: MotoStack, clock: FixedClock, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = moto_stack.services.questions
    asked = questions.ask("times-a", AskRequest(node="draft", question="Ship?"), caller="agent")
    clock.advance(10)
    questions.await_tool("times-a", AwaitRequest(timeout_seconds=600, from_="draft"), caller="agent")
    clock.advance(20)
    questions.answer("times-a", asked["interaction_id"], "yes", caller="alice")
    lines = _lines(capsys)
    assert [(line["kind"], _value(line, METRIC_ANSWER_TIME)) for line in lines] == [("question", 30), ("await", 20)]
    assert (_value(lines[1], METRIC_DEADLINES_MET), _value(lines[1], METRIC_DEADLINES_MISSED)) == (1, 0)


def test_a_timeout_counts_a_deadline_missed_and_no_answer_time(
    moto_stack: MotoStack, clock: FixedClock, capsys: pytest.CaptureFixture[str]
) -> None:
    approval = _tool_approval(moto_stack, "times-late", timeout_seconds=60)
    clock.advance(61)
    ToolApprovalService(moto_stack.services.core).take_due_defaults()
    ended = moto_stack.services.core.store.get_interaction("times-late", approval)
    assert ended is not None and ended.state.status != "pending"
    (line,) = _lines(capsys)
    assert line["kind"] == "tool_approval" and METRIC_ANSWER_TIME not in line
    assert (_value(line, METRIC_DEADLINES_MET), _value(line, METRIC_DEADLINES_MISSED)) == (0, 1)


def test_the_waits_page_and_the_metric_agree(
    moto_stack: MotoStack, clock: FixedClock, capsys: pytest.CaptureFixture[str]
) -> None:
    """Answers after 10, 20, ... 70 s and one tool approval timed out: the Waits page's day window (its
    p50/p95, answered, deadlines met and missed) is what the metric's lines give (CloudWatch's p50/p95 on
    these values: the same nearest-rank figures on so few)."""
    questions, core = moto_stack.services.questions, moto_stack.services.core
    for n in range(1, 8):
        asked = questions.ask(
            f"agree-{n}", AskRequest(node="draft", question=f"Q{n}?", timeout_seconds=3600), caller="agent"
        )
        clock.advance(10 * n)
        questions.answer(f"agree-{n}", asked["interaction_id"], "yes", caller="alice")
    _tool_approval(moto_stack, "agree-late", timeout_seconds=60)
    clock.advance(61)
    ToolApprovalService(core).take_due_defaults()

    lines = _lines(capsys)
    times = sorted(int(v) for line in lines if (v := _value(line, METRIC_ANSWER_TIME)) is not None)
    met = sum(int(_value(line, METRIC_DEADLINES_MET) or 0) for line in lines)
    missed = sum(int(_value(line, METRIC_DEADLINES_MISSED) or 0) for line in lines)
    day = WaitStatsService(core).stats().answers.windows[0]
    assert day.window == "day" and times == [10, 20, 30, 40, 50, 60, 70]
    assert (day.answered, day.p50_s, day.p95_s) == (len(times), percentile(times, 0.5), percentile(times, 0.95))
    assert (day.deadlines_met, day.deadlines_missed) == (met, missed) == (7, 1)
