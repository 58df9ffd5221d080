"""Issue 27 ("deployed as tested"): `baton check`'s deployment rules (baton.workflows.asl_rules). Each rule
refuses a bad definition (the failing example) and passes a good one; the shipped state machines pass all."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

import pytest
from typer.testing import CliRunner

from baton.cli.main import app
from baton.domain.fields import MAX_RUN_ID_LENGTH
from baton.workflows import asl_rules
from baton.workflows.asl import check_definition, check_file
from baton.workflows.asl_rules import LAMBDA_RETRIER, LAMBDA_TRANSIENT_ERRORS
from baton.workflows.source_tree import source_tree

if TYPE_CHECKING:
    from pathlib import Path

INVOKE = "arn:aws:states:::lambda:invoke"


def _codes(states: dict[str, Any], schema: dict[str, Any] | None = None, file: str = "flow.asl.json") -> list[str]:
    definition = {"StartAt": next(iter(states)), "States": states}
    return [p.code for p in check_definition(definition, file, input_schema=schema)]


def _lambda(function: str = "${DemoAgentFunctionArn}", **extra: Any) -> dict[str, Any]:
    return {
        "Type": "Task",
        "Resource": INVOKE,
        "Parameters": {"FunctionName": function, "Payload": {}},
        "End": True,
    } | extra


# ---- C300: Lambda Tasks retry Lambda's transient errors with backoff ----------------------------------
@pytest.mark.parametrize(
    "task",
    [
        _lambda(),
        _lambda(Resource=f"{INVOKE}.waitForTaskToken", TimeoutSeconds=60),
        {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:123456789012:function:draft", "End": True},
        _lambda(Retry=[{**LAMBDA_RETRIER, "MaxAttempts": 0}]),
        _lambda(Retry=[{**LAMBDA_RETRIER, "BackoffRate": 1}]),
        _lambda(Retry=[{**LAMBDA_RETRIER, "ErrorEquals": ["Lambda.ServiceException"]}]),
        # the first Retrier that matches decides: one that gives up at once shadows a good one
        _lambda(Retry=[{"ErrorEquals": ["Lambda.TooManyRequestsException"], "MaxAttempts": 1}, dict(LAMBDA_RETRIER)]),
        _lambda(Comment="[no-lambda-retry: ]"),
    ],
    ids=["invoke", "token-wait", "lambda-arn", "no-attempts", "no-backoff", "one-error", "shadowed", "no-reason"],
)
def test_c300_a_lambda_task_that_would_fail_on_one_throttle(task: dict[str, Any]) -> None:
    assert _codes({"Call": task}) == ["C300"]


@pytest.mark.parametrize(
    "task",
    [
        _lambda(Retry=[dict(LAMBDA_RETRIER)]),
        _lambda(Retry=[{"ErrorEquals": ["States.ALL"]}]),  # ASL's defaults: 3 attempts, backoff 2.0
        _lambda(Retry=[{"ErrorEquals": ["States.TaskFailed"], "MaxAttempts": 0}, dict(LAMBDA_RETRIER)]),
        _lambda(Comment="Throttles only. [no-lambda-retry: a second run would start a second merge]"),
        {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2", "End": True},
    ],
    ids=["baton-retrier", "states-all-defaults", "unrelated-first", "documented-opt-out", "not-lambda"],
)
def test_c300_passes_a_retrying_task_or_a_documented_opt_out(task: dict[str, Any]) -> None:
    assert _codes({"Call": task}) == []


def test_c300_names_the_errors_not_retried() -> None:
    task = _lambda(Retry=[{**LAMBDA_RETRIER, "ErrorEquals": ["Lambda.TooManyRequestsException"]}])
    [problem] = check_definition({"StartAt": "Call", "States": {"Call": task}}, "flow.asl.json")
    named = [e for e in LAMBDA_TRANSIENT_ERRORS if e in problem.message]
    assert named == [e for e in LAMBDA_TRANSIENT_ERRORS if e != "Lambda.TooManyRequestsException"]


# ---- C301: a long model call has a Catch ----------------------------------------------------------
RETRYING: dict[str, Any] = {"Retry": [dict(LAMBDA_RETRIER)]}


@pytest.mark.parametrize(
    "task",
    [
        _lambda("${ReviewTurnFunctionArn}", **RETRYING),  # review_turn: a 120 s function (a model call)
        _lambda("${ReviewTurnFunctionArn}", **RETRYING, Catch=[{"ErrorEquals": ["States.Timeout"], "Next": "Failed"}]),
        _lambda(**RETRYING, TimeoutSeconds=300),  # a short function given a long timeout of its own
    ],
    ids=["no-catch", "catches-only-timeout", "own-timeout"],
)
def test_c301_a_long_call_without_a_catch(task: dict[str, Any]) -> None:
    assert _codes({"Call": task, "Failed": {"Type": "Fail"}}) == ["C301"]


@pytest.mark.parametrize(
    "task",
    [
        _lambda("${ReviewTurnFunctionArn}", **RETRYING, Catch=[{"ErrorEquals": ["States.ALL"], "Next": "Failed"}]),
        _lambda(
            "${ReviewTurnFunctionArn}", **RETRYING, Catch=[{"ErrorEquals": ["States.TaskFailed"], "Next": "Failed"}]
        ),
        _lambda(**RETRYING),  # demo_agent: 30 s
    ],
    ids=["catch-all", "catch-task-failed", "short-call"],
)
def test_c301_passes_a_caught_long_call_or_a_short_one(task: dict[str, Any]) -> None:
    assert _codes({"Call": task, "Failed": {"Type": "Fail"}}) == []


# ---- C302: execution names fit 80 characters for the longest run id -------------------------------
def _child(name: dict[str, str], comment: str = "") -> dict[str, Any]:
    return {
        "Type": "Task",
        "Resource": "arn:aws:states:::states:startExecution.sync:2",
        "Comment": comment,
        "Parameters": {"StateMachineArn": "${ReviewGateStateMachineArn}", **name},
        "End": True,
    }


LOOPS = {"properties": {"loops": {"type": "integer", "minimum": 0, "maximum": 50}, "tag": {"type": "string"}}}


@pytest.mark.parametrize(
    ("name", "comment", "schema"),
    [
        ({"Name.$": "States.Format('{}-ship-review', $.run_id)"}, "", None),
        ({"Name.$": "$.run_id"}, "", None),
        ({"Name.$": "States.Format('{}-ship-review-{}', $.run_id, $.input.loops)"}, "", LOOPS),
        ({"Name.$": "States.Format('{}-r-{}', $.run_id, $.fix.n)"}, "[bound: $.fix.n <= $.input.loops]", LOOPS),
        ({"Name.$": "States.Format('{}-r-{}', $.run_id, $.fix.n)"}, "[bound: $.fix.n <= 999]", None),
        ({"Name": "ship-review"}, "", None),
    ],
    ids=["demo", "run-id", "input-maximum", "bound-by-input", "bound-by-number", "literal"],
)
def test_c302_passes_names_that_fit_for_the_longest_run_id(
    name: dict[str, str], comment: str, schema: dict[str, Any] | None
) -> None:
    assert _codes({"Ship": _child(name, comment)}, schema) == []


@pytest.mark.parametrize(
    ("name", "schema", "says"),
    [
        (
            {"Name.$": "States.Format('{}-a-much-longer-review-name', $.run_id)"},
            None,
            f"can be {MAX_RUN_ID_LENGTH + 26}",
        ),
        ({"Name.$": "States.Format('{}-{}', $.run_id, $.fix.loops)"}, None, "cannot bound"),
        ({"Name.$": "States.Format('{}-{}', $.run_id, $.input.tag)"}, LOOPS, "cannot bound"),  # no maxLength
        ({"Name.$": "States.Format('{}-{}', $.run_id, States.UUID())"}, None, "cannot bound"),
        ({"Name": "x" * 81}, None, "longer than 80"),
    ],
    ids=["too-long", "unbounded-path", "string-without-max-length", "intrinsic-argument", "literal"],
)
def test_c302_a_name_that_may_not_fit(name: dict[str, str], schema: dict[str, Any] | None, says: str) -> None:
    definition = {"StartAt": "Ship", "States": {"Ship": _child(name)}}
    [problem] = check_definition(definition, "flow.asl.json", input_schema=schema)
    assert (problem.code, says in problem.message) == ("C302", True), problem.message


@pytest.mark.parametrize("file", ["demo_workflow.asl.json", "fix_loop_example.asl.json"])
def test_c302_the_shipped_child_names_overflowed_at_the_former_80_character_run_ids(
    file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = source_tree().statemachines_dir / file
    assert [p.code for p in check_file(path)] == []
    monkeypatch.setattr(asl_rules, "MAX_RUN_ID_LENGTH", 80)  # the limit before issue 27
    assert [p.code for p in check_file(path)] == ["C302"]


# ---- C303: a Choice on an optional input field tests IsPresent first ------------------------------
OPTIONAL = {"type": "object", "required": ["given"], "properties": {"given": {}, "opt": {}}}
DONE = {"Yes": {"Type": "Succeed"}, "No": {"Type": "Succeed"}}


def _choice(*rules: dict[str, Any]) -> dict[str, Any]:
    return {"Pick": {"Type": "Choice", "Choices": list(rules), "Default": "No"}, **DONE}


@pytest.mark.parametrize(
    "rules",
    [
        [{"Variable": "$.input.opt", "BooleanEquals": True, "Next": "Yes"}],
        [{"Variable": "$.input.opt.level", "NumericGreaterThan": 1, "Next": "Yes"}],
        [{"Variable": "$.input.given", "NumericLessThanEqualsPath": "$.input.opt", "Next": "Yes"}],
        [{"Not": {"Variable": "$.input.opt", "BooleanEquals": True}, "Next": "Yes"}],
        # an earlier IsPresent: true that branches away leaves the later rules with the field ABSENT
        [
            {"Variable": "$.input.opt", "IsPresent": True, "Next": "No"},
            {"Variable": "$.input.opt", "IsNull": True, "Next": "Yes"},
        ],
        # a presence test on the parent says nothing of a child
        [
            {
                "And": [{"Variable": "$.input.opt", "IsPresent": True}, {"Variable": "$.input.opt.x", "IsNull": False}],
                "Next": "Yes",
            }
        ],
    ],
    ids=["variable", "nested-field", "path-operand", "inside-not", "present-branches-away", "parent-only"],
)
def test_c303_an_optional_input_field_read_without_a_presence_test(rules: list[dict[str, Any]]) -> None:
    assert _codes(_choice(*rules), OPTIONAL) == ["C303"]


@pytest.mark.parametrize(
    ("rules", "schema"),
    [
        (
            [
                {
                    "And": [
                        {"Variable": "$.input.opt", "IsPresent": True},
                        {"Variable": "$.input.opt", "BooleanEquals": True},
                    ],
                    "Next": "Yes",
                }
            ],
            OPTIONAL,
        ),
        (
            [
                {"Variable": "$.input.opt", "IsPresent": False, "Next": "No"},
                {"Variable": "$.input.opt", "BooleanEquals": True, "Next": "Yes"},
            ],
            OPTIONAL,
        ),
        ([{"Variable": "$.input.opt[0]", "IsPresent": True, "Next": "Yes"}], OPTIONAL),
        (
            [
                {
                    "And": [
                        {"Variable": "$.input.opt.x", "IsPresent": True},
                        {"Variable": "$.input.opt", "IsNull": False},
                    ],
                    "Next": "Yes",
                }
            ],
            OPTIONAL,
        ),
        ([{"Variable": "$.input.given", "BooleanEquals": True, "Next": "Yes"}], OPTIONAL),
        ([{"Variable": "$.gate.ok", "BooleanEquals": True, "Next": "Yes"}], OPTIONAL),  # written by a state
        ([{"Variable": "$.input.opt", "BooleanEquals": True, "Next": "Yes"}], None),  # no schema: not judged
    ],
    ids=[
        "and-present-first",
        "absent-branches-away",
        "is-present-itself",
        "child-proves-parent",
        "required",
        "state-path",
        "no-schema",
    ],
)
def test_c303_passes_a_guarded_or_guaranteed_field(rules: list[dict[str, Any]], schema: dict[str, Any] | None) -> None:
    assert _codes(_choice(*rules), schema) == []


def test_c303_a_field_the_workflow_defaults_is_guaranteed() -> None:
    """fix_loop_example's WithinBound reads input.max_fix_loops, which its schema does not require: the
    workflow's default (WORKFLOW_DEFAULTS, applied at POST /api/runs) makes it present."""
    path = source_tree().statemachines_dir / "fix_loop_example.asl.json"
    definition = json.loads(path.read_text())
    schema = json.loads(path.with_name("fix_loop_example.input.schema.json").read_text())
    assert check_definition(definition, "fix_loop_example.asl.json", input_schema=schema) == []
    unregistered = [p.code for p in check_definition(definition, "copy_of_fix_loop.asl.json", input_schema=schema)]
    assert unregistered == ["C303"]  # the same machine under a name no workflow registers has no defaults


# ---- the shipped machines and the command ---------------------------------------------------------
def test_every_shipped_lambda_task_retries_and_every_model_call_is_caught() -> None:
    lambda_tasks = 0
    for path in sorted(source_tree().statemachines_dir.glob("*.asl.json")):
        assert [str(p) for p in check_file(path)] == []
        for state in _all_states(json.loads(path.read_text())["States"]):
            if asl_rules.is_lambda_task(state):
                lambda_tasks += 1
                documented = "[no-lambda-retry:" in state.get("Comment", "")
                assert documented or asl_rules.unretried_errors(state) == [], (path.name, state)
    assert lambda_tasks == 29  # issue 27 counted 28, 27 of them with no Retry; issue 28 added the review Rediff


def _all_states(states: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for state in states.values():
        found.append(state)
        for branch in state.get("Branches", []):
            found += _all_states(branch["States"])
        processor = state.get("ItemProcessor") or state.get("Iterator")
        if processor:
            found += _all_states(processor["States"])
    return found


def test_baton_check_fails_on_a_lambda_task_without_retry_and_shows_the_opt_out(tmp_path: Path) -> None:
    shipped = source_tree().statemachines_dir / "human_pause.asl.json"
    definition = json.loads(shipped.read_text())
    bad = copy.deepcopy(definition)
    del bad["States"]["RecordTimeout"]["Retry"]
    (tmp_path / "human_pause.asl.json").write_text(json.dumps(bad))
    result = CliRunner().invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 1
    assert "C300" in result.output and "[no-lambda-retry: <why>]" in result.output
