"""Issue 28 item 12, Map semantics in `baton check`: C243, every await gate and asking Task inside a Map
carries its item from the execution context (`$$.Map.Item.Index` via the ItemSelector), so the item
cannot be forgotten; C244, a person's pause inside a bounded Map holds its concurrency slot."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from baton.workflows.asl import check_definition
from baton.workflows.asl_rules import LAMBDA_RETRIER
from baton.workflows.gate_states import MAP_ITEM_PATH, await_gate_states, map_item_selector

FANOUT = json.loads((Path(__file__).parents[2] / "statemachines" / "await_fanout_example.asl.json").read_text())


def _asking(map_item: str | None) -> dict[str, Any]:
    payload: dict[str, Any] = {"run_id.$": "$.run_id", "node": "research", "questions.$": "$.questions"}
    if map_item is not None:
        payload["map_item.$"] = map_item
    return {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {"FunctionName": "${DemoAgentFunctionArn}", "Payload": payload},
        "ResultPath": "$.posted",
        "Retry": [LAMBDA_RETRIER],
        "End": True,
    }


def _map(states: dict[str, Any], start: str, **map_fields: Any) -> dict[str, Any]:
    fan_out = {
        "Type": "Map",
        "ItemsPath": "$.input.items",
        "ItemSelector": map_item_selector({"run_id.$": "$.run_id", "questions.$": "$$.Map.Item.Value.questions"}),
        "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"}, "StartAt": start, "States": states},
        "End": True,
        **map_fields,
    }
    return {"StartAt": "FanOut", "States": {"FanOut": fan_out}}


def _found(definition: dict[str, Any], code: str) -> list[str]:
    return [f"{p.state}: {p.message}" for p in check_definition(definition, "flow.asl.json") if p.code == code]


def test_the_fan_out_example_carries_its_item_and_leaves_concurrency_unbounded() -> None:
    assert check_definition(FANOUT, "await_fanout_example.asl.json") == []


def test_an_asking_task_inside_a_map_without_its_item_is_refused() -> None:
    [found] = _found(_map({"Ask": _asking(None)}, "Ask"), "C243")
    assert found.startswith("FanOut/items/Ask: ") and "passes no map_item" in found and "node's questions" in found


def test_an_asking_task_given_the_item_from_the_context_passes() -> None:
    assert _found(_map({"Ask": _asking(MAP_ITEM_PATH)}, "Ask"), "C243") == []


def test_a_map_item_read_from_a_key_the_selector_does_not_fill_from_the_index_is_refused() -> None:
    [found] = _found(_map({"Ask": _asking("$.questions")}, "Ask"), "C243")
    assert "'$.questions'" in found and "does not set from $$.Map.Item.Index" in found


def test_an_await_gate_inside_a_map_without_its_item_is_refused_and_the_helper_builds_a_passing_one() -> None:
    bare = await_gate_states("Await", gate="item", from_node="research", timeout_seconds=60, next=None)
    [found] = _found(_map(bare, "Await"), "C243")
    assert found.startswith("FanOut/items/Await: ") and "the second park fails" in found
    carried = await_gate_states(
        "Await", gate="item", from_node="research", timeout_seconds=60, next=None, map_item_path=MAP_ITEM_PATH
    )
    assert check_definition(_map(carried, "Await"), "flow.asl.json") == []


def test_a_pause_inside_a_bounded_map_says_a_parked_item_holds_its_slot() -> None:
    gate = await_gate_states(
        "Await", gate="item", from_node="research", timeout_seconds=60, next=None, map_item_path=MAP_ITEM_PATH
    )
    [found] = _found(_map(gate, "Await", MaxConcurrency=2), "C244")
    assert found.startswith("FanOut: ") and "keeps its slot" in found and "MaxConcurrency at 0" in found
    assert _found(_map(copy.deepcopy(gate), "Await", MaxConcurrencyPath="$.input.width"), "C244") != []
    acknowledged = _map(gate, "Await", MaxConcurrency=2, Comment="[parked-items-hold-slots: one reviewer, in order]")
    assert _found(acknowledged, "C244") == []
    assert _found(_map(gate, "Await", MaxConcurrency=0), "C244") == []
    assert _found(_map({"Ask": _asking(MAP_ITEM_PATH)}, "Ask", MaxConcurrency=2), "C244") == []  # no pause


def test_a_blocking_ask_at_a_literal_node_inside_a_map_is_refused_and_a_per_item_node_passes() -> None:
    pause = json.loads((Path(__file__).parents[2] / "statemachines" / "human_pause.asl.json").read_text())
    ask = pause["States"]["AskHuman"]
    ask.pop("Catch")
    ask["End"], _ = True, ask.pop("Next")
    ask["Parameters"]["Payload"]["run_id.$"] = "$.run_id"
    [found] = _found(_map({"AskHuman": copy.deepcopy(ask)}, "AskHuman"), "C243")
    assert "literal node 'approve'" in found and "WAIT#approve" in found
    payload = ask["Parameters"]["Payload"]
    payload["node.$"] = "States.Format('approve-{}', $.map_item)"
    del payload["node"]
    assert _found(_map({"AskHuman": ask}, "AskHuman"), "C243") == []
