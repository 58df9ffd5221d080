from __future__ import annotations

import json
from pathlib import Path

import pytest

from baton.workflows.asl import AslError, check_definition, check_directory, load_definition, substitute
from baton.workflows.asl_rules import LAMBDA_RETRIER
from baton.workflows.resources import FUNCTIONS
from baton.workflows.source_tree import source_tree


def _token_task(**extra: object) -> dict[str, object]:
    resource = "arn:aws:states:::lambda:invoke.waitForTaskToken"
    return {"Type": "Task", "Resource": resource, "Retry": [LAMBDA_RETRIER], "End": True, **extra}


def test_every_shipped_state_machine_passes() -> None:
    problems = check_directory(source_tree().statemachines_dir)
    assert problems == [], "\n".join(str(p) for p in problems)
    assert list(source_tree().statemachines_dir.glob("*.asl.json")), "no state machines found"


def test_token_wait_without_timeout_is_named_by_file_and_state() -> None:
    definition = {"StartAt": "Ask", "States": {"Ask": _token_task()}}
    problems = check_definition(definition, "bad.asl.json")
    assert len(problems) == 1
    assert str(problems[0]).startswith("bad.asl.json: state 'Ask'")
    assert "no silent infinity" in str(problems[0])


@pytest.mark.parametrize("timeout", [{"TimeoutSeconds": 5}, {"TimeoutSecondsPath": "$.t"}])
def test_token_wait_with_timeout_passes(timeout: dict[str, object]) -> None:
    assert check_definition({"StartAt": "Ask", "States": {"Ask": _token_task(**timeout)}}, "ok.asl.json") == []


def test_token_wait_nested_in_map_and_parallel_is_found() -> None:
    definition = {
        "StartAt": "Fan",
        "States": {
            "Fan": {
                "Type": "Map",
                "ItemProcessor": {"StartAt": "Gate", "States": {"Gate": _token_task()}},
                "Next": "Both",
            },
            "Both": {
                "Type": "Parallel",
                "Branches": [{"StartAt": "Inner", "States": {"Inner": _token_task()}}],
                "End": True,
            },
        },
    }
    states = [p.state for p in check_definition(definition, "nested.asl.json")]
    assert states == ["Fan/items/Gate", "Both/branch[0]/Inner"]


def test_activity_task_without_timeout_is_a_wait_too() -> None:
    activity = {"Type": "Task", "Resource": "arn:aws:states:us-east-1:123456789012:activity:approve", "End": True}
    assert check_definition({"StartAt": "A", "States": {"A": activity}}, "act.asl.json")[0].state == "A"


def test_next_to_missing_state_is_reported() -> None:
    definition = {"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "Nowhere"}}}
    assert "'Nowhere'" in str(check_definition(definition, "x.asl.json")[0])


def test_load_refuses_a_file_that_breaks_the_rule(tmp_path: Path) -> None:
    path = tmp_path / "bad.asl.json"
    path.write_text(json.dumps({"StartAt": "Ask", "States": {"Ask": _token_task()}}))
    with pytest.raises(AslError, match=r"bad\.asl\.json: state 'Ask'"):
        load_definition(path, {})


def test_substitution_requires_every_placeholder() -> None:
    assert substitute('{"F": "${ParkFunctionArn}"}', {"ParkFunctionArn": "arn:x"}) == '{"F": "arn:x"}'
    with pytest.raises(AslError, match="MissingFunctionArn"):
        substitute("${MissingFunctionArn}", {})


def test_every_placeholder_in_shipped_files_names_a_function_or_workflow() -> None:
    from baton.workflows.asl import placeholders
    from baton.workflows.resources import STATE_MACHINES, state_machine_substitution

    known = {f.substitution for f in FUNCTIONS} | {state_machine_substitution(w) for w in STATE_MACHINES}
    for path in source_tree().statemachines_dir.glob("*.asl.json"):
        assert placeholders(path.read_text()) <= known, path.name
