"""JSONPaths parsed once per text in moto's Step Functions interpreter (baton.local.moto_jsonpath): the
same results, errors and executions as plain moto, and each distinct path parsed once, counted.

The counts are of this test's own parses only: executions an earlier test in the worker started may still be
running and parsing ("$" and their own paths) while these run, so the execution's paths carry a key no other
test's machine has, and the direct extractions count only the test's own thread."""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

import pytest
from moto.stepfunctions.parser.asl.utils.json_path import NoSuchJsonPathError

from baton.local.moto_jsonpath import cached_json_paths
from tests.conftest import wait_for
from tests.counting import CallsCounted
from tests.integration.conftest import MotoStack

if TYPE_CHECKING:
    from collections.abc import Callable

MARK = "jpt_"  # in every path of DEFINITION: its parses are told from other executions' by it
DATA = {
    "a": {"b": [1, {"c": "x"}, 3]},
    "jpt_a": {"jpt_b": [1, {"c": "x"}, 3]},
    "list": [{"n": 1}, {"n": 2}],
    "s": "text",
    "empty": [],
}
PATHS = ["$", "$.a", "$.a.b", "$.a.b[1].c", "$.a.b[0]", "$.list[*].n", "$.list[0]", "$.s", "$.empty[*]", "$.nope"]
# Every kind of path the interpreter evaluates: InputPath, Parameters, ResultSelector, ResultPath, OutputPath.
DEFINITION = {
    "StartAt": "Select",
    "States": {
        "Select": {
            "Type": "Pass",
            "InputPath": "$.jpt_a",
            "Parameters": {"first.$": "$.jpt_b[0]", "c.$": "$.jpt_b[1].c", "all.$": "$.jpt_b"},
            "ResultPath": "$.jpt_picked",
            "Next": "Shape",
        },
        "Shape": {
            "Type": "Pass",
            "Parameters": {"value.$": "$.jpt_picked.c", "count.$": "States.ArrayLength($.jpt_picked.all)"},
            "ResultPath": "$.jpt_shaped",
            "OutputPath": "$.jpt_shaped",
            "End": True,
        },
    },
}


def _extracted(path: str) -> Any:
    from moto.stepfunctions.parser.asl.utils.json_path import extract_json

    try:
        return extract_json(path, json.loads(json.dumps(DATA)))
    except NoSuchJsonPathError as err:
        return ("error", str(err))


def test_extracted_values_and_errors_are_motos() -> None:
    test_thread = threading.get_ident()

    def on_test_thread(_path: str) -> bool:
        return threading.get_ident() == test_thread

    plain_parses = _counted_parses(on_test_thread)
    with plain_parses:
        plain = [_extracted(path) for path in PATHS]
    fixed_parses = _counted_parses(on_test_thread)
    with cached_json_paths(), fixed_parses:
        fixed = [[_extracted(path) for path in PATHS] for _ in range(3)]
    assert fixed == [plain] * 3
    assert ("error", str(NoSuchJsonPathError("$.nope", DATA))) in plain  # a missing path fails each time
    assert plain_parses.count == len(PATHS)
    assert fixed_parses.count == len(PATHS)  # each text parsed once over the three rounds


def _run(stack: MotoStack, name: str, machine: str) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    sfn = stack.clients["stepfunctions"]
    arn = sfn.start_execution(stateMachineArn=machine, name=name, input=json.dumps(DATA))["executionArn"]
    wait_for(lambda: sfn.describe_execution(executionArn=arn)["status"] != "RUNNING")
    described = sfn.describe_execution(executionArn=arn)
    events = sfn.get_execution_history(executionArn=arn)["events"]
    details = [
        (e["type"], {k: v for k, v in e.items() if k.endswith("EventDetails") and k != "executionStartedEventDetails"})
        for e in events
    ]
    return {"status": described["status"], "output": json.loads(described.get("output", "null"))}, details


def test_an_execution_is_motos_and_parses_each_path_once(moto_stack: MotoStack) -> None:
    sfn = moto_stack.clients["stepfunctions"]
    role = "arn:aws:iam::123456789012:role/jsonpath"
    machine = sfn.create_state_machine(name="jsonpath", definition=json.dumps(DEFINITION), roleArn=role)[
        "stateMachineArn"
    ]

    def marked(path: str) -> bool:
        return MARK in path

    plain_parses = _counted_parses(marked)
    with plain_parses:
        plain = [_run(moto_stack, f"plain-{n}", machine) for n in range(2)]
    fixed_parses = [_counted_parses(marked) for _ in range(2)]
    with cached_json_paths():
        fixed = []
        for n, parses in enumerate(fixed_parses):
            with parses:
                fixed.append(_run(moto_stack, f"fixed-{n}", machine))
    assert fixed == plain
    assert plain[0][0]["status"] == "SUCCEEDED"
    assert plain[0][0]["output"]["count"] == 3
    distinct = fixed_parses[0].count
    assert distinct >= 7  # the definition's paths, each once per interpreter module that parses it
    assert fixed_parses[1].count == 0  # the second execution parsed nothing
    assert plain_parses.count == 2 * distinct  # plain moto: every path of every execution, again


def _counted_parses(counts: Callable[[str], bool]) -> CallsCounted:
    """jsonpath_ng's own parses of the texts `counts` picks (the cache's misses, or plain moto's every use)."""
    from jsonpath_ng.parser import JsonPathParser

    return CallsCounted((JsonPathParser, "parse"), counts=lambda _parser, text, *_: counts(str(text)))


@pytest.mark.parametrize("path", ["$.[", "$..", "not a path ]"])
def test_a_bad_path_fails_as_in_moto_every_time(path: str) -> None:
    from moto.stepfunctions.parser.asl.utils import json_path

    with pytest.raises(Exception) as plain:
        json_path.parse(path)
    with cached_json_paths():
        for _ in range(2):
            with pytest.raises(type(plain.value)):
                json_path.parse(path)
