"""Item 6 of issue 10 (second part): `baton check` (formerly `check-asl`, kept as an alias) refuses gate
configurations that would fail only after a person did their part: C100, C101, C241, C242."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from typer.testing import CliRunner

from baton.cli.main import app
from baton.contracts import AskRequest
from baton.services.questions import QuestionService
from baton.workflows.asl import check_definition, check_directory
from baton.workflows.asl_rules import LAMBDA_RETRIER
from baton.workflows.source_tree import source_tree

if TYPE_CHECKING:
    from baton.services.core import Core

REVIEW_CONFIG = {"run_branch": "baton/run-1", "repo_path": "/tmp/r", "review_url": "https://x/{outputs.preview}"}


def _flow(*, review: dict[str, Any] | None = None, await_gate: dict[str, Any] | None = None) -> dict[str, Any]:
    ask = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {"FunctionName": "${DemoAgentFunctionArn}", "Payload": {"run_id.$": "$.run_id", "node": "draft"}},
        "Retry": [LAMBDA_RETRIER],
        "Next": "Sync",
    }
    sync = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
        "Parameters": {
            "FunctionName": "${AwaitGateFunctionArn}",
            "Payload": {"token.$": "$$.Task.Token", "run_id.$": "$.run_id", "gate": "sync", "from": "draft"},
        },
        "TimeoutSeconds": 600,
        "Retry": [LAMBDA_RETRIER],
        "Next": "Ship",
    }
    ship = {
        "Type": "Task",
        "Resource": "arn:aws:states:::states:startExecution.sync:2",
        "Parameters": {
            "StateMachineArn": "${ReviewGateStateMachineArn}",
            "Input": {"run_id.$": "$.run_id", "input": {**REVIEW_CONFIG, "outputs": {"preview": "p-1"}}},
        },
        "TimeoutSeconds": 3600,
        "End": True,
    }
    for state, change in ((ship, review), (sync, await_gate)):
        for key, value in (change or {}).items():
            if value is None:
                state.pop(key, None)
            else:
                state[key] = value
    return {"StartAt": "Draft", "States": {"Draft": ask, "Sync": sync, "Ship": ship}}


def _codes(definition: dict[str, Any], schema: dict[str, Any] | None = None) -> list[str]:
    return [p.code for p in check_definition(definition, "flow.asl.json", input_schema=schema) if p.code]


def _ship_input(definition: dict[str, Any]) -> dict[str, Any]:
    config: dict[str, Any] = definition["States"]["Ship"]["Parameters"]["Input"]["input"]
    return config


def test_a_good_flow_passes() -> None:
    assert check_definition(_flow(), "flow.asl.json") == []


def test_c100_a_review_gate_with_nothing_to_merge() -> None:
    flow = _flow()
    del _ship_input(flow)["run_branch"]
    (problem,) = check_definition(flow, "flow.asl.json")
    assert problem.code == "C100" and problem.state == "Ship" and "nothing to merge" in str(problem)


def test_c100_when_the_config_comes_from_an_input_the_schema_does_not_require() -> None:
    flow = _flow()
    flow["States"]["Ship"]["Parameters"]["Input"] = {"run_id.$": "$.run_id", "input.$": "$.input.review"}
    assert _codes(flow) == ["C100"]
    loose = {"type": "object", "properties": {"review": {"type": "object"}}}
    assert _codes(flow, loose) == ["C100"]
    strict = {"type": "object", "required": ["review"], "properties": {"review": {"required": ["run_branch"]}}}
    assert _codes(flow, strict) == []


def test_c101_review_url_naming_a_missing_output() -> None:
    flow = _flow()
    _ship_input(flow)["outputs"] = {"other": "x"}
    problems = check_definition(flow, "flow.asl.json")
    assert [p.code for p in problems] == ["C101"] and "outputs.preview" in problems[0].message


@pytest.mark.parametrize("timeout", [0, -5, "600", True])
def test_c241_an_await_gate_without_a_positive_timeout(timeout: object) -> None:
    assert "C241" in _codes(_flow(await_gate={"TimeoutSeconds": timeout}))


def test_c241_a_literal_payload_timeout_of_zero() -> None:
    flow = _flow()
    flow["States"]["Sync"]["Parameters"]["Payload"]["timeout_seconds"] = 0
    assert _codes(flow) == ["C241"]


def test_c242_an_await_gate_waiting_on_a_node_that_never_asks() -> None:
    flow = _flow()
    flow["States"]["Sync"]["Parameters"]["Payload"]["from"] = "drfat"
    problems = check_definition(flow, "flow.asl.json")
    assert [p.code for p in problems] == ["C242"]
    assert "'drfat'" in problems[0].message and "draft" in problems[0].message


def test_a_from_read_from_the_state_is_not_guessed() -> None:
    flow = _flow()
    payload = flow["States"]["Sync"]["Parameters"]["Payload"]
    payload["from.$"] = payload.pop("from")
    assert _codes(flow) == []


def test_the_repository_s_state_machines_pass() -> None:
    assert check_directory(source_tree().statemachines_dir) == []


@pytest.mark.parametrize("command", ["check", "check-asl"])
def test_baton_check_names_the_code_and_fails(tmp_path: Path, command: str) -> None:
    flow = copy.deepcopy(_flow())
    flow["States"]["Sync"]["Parameters"]["Payload"]["from"] = "nobody"
    (tmp_path / "flow.asl.json").write_text(json.dumps(flow))
    result = CliRunner().invoke(app, [command, str(tmp_path)])
    assert result.exit_code == 1
    assert "C242" in result.output and "nobody" in result.output
    good = tmp_path / "good"
    good.mkdir()
    (good / "flow.asl.json").write_text(json.dumps(_flow()))
    assert CliRunner().invoke(app, [command, str(good)]).exit_code == 0


def test_c242_at_run_time_the_await_says_loudly_why_it_released_with_nothing(
    core: Core, caplog: pytest.LogCaptureFixture
) -> None:
    questions = QuestionService(core)
    questions.ask("r1", AskRequest(node="draft", question="Which database?"), caller="agent")
    with caplog.at_level(logging.WARNING, logger="baton"):
        typo = questions.park_gate(run_id="r1", gate="sync", token="tok-1", timeout_seconds=60, from_node="drfat")
    assert typo["released"] is True  # nothing of 'drfat' is pending
    started = [e for e in core.store.list_events("r1") if e.type == "await_started"][-1]
    assert "C242" in started.data["warning"] and "'drfat'" in started.data["warning"]
    assert any("C242" in r.getMessage() for r in caplog.records)
    right = questions.park_gate(run_id="r1", gate="sync2", token="tok-2", timeout_seconds=60, from_node="draft")
    assert right["released"] is False
    started = [e for e in core.store.list_events("r1") if e.type == "await_started"][-1]
    assert "warning" not in started.data
