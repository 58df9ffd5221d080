"""The gate payload models agree with every `Payload` the state machines send, with the ASL builders and
with the handlers that parse them (infra/gate.py's payloads are checked in tests/infra/test_gate.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baton.domain.gate_payloads import (
    PAYLOAD_OF_FUNCTION,
    AwaitGatePayload,
    GatePayload,
    StatePath,
    asl_payload,
    gate_payload,
    wire_name,
)
from baton.workflows.gate_states import await_gate_payloads, await_gate_states
from baton.workflows.resources import FUNCTIONS, function

STATEMACHINES = Path(__file__).resolve().parents[2] / "statemachines"
FUNCTION_OF_PLACEHOLDER = {spec.substitution: spec.name for spec in FUNCTIONS}


def _states(states: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    for name, state in states.items():
        found.append((name, state))
        for nested in [state.get("ItemProcessor"), state.get("Iterator"), *state.get("Branches", [])]:
            if nested:
                found.extend(_states(nested["States"]))
    return found


def _gate_tasks() -> list[tuple[str, str, dict[str, Any]]]:
    """(where, function, Payload) of every Task that invokes a gate Lambda."""
    tasks = []
    for path in sorted(STATEMACHINES.glob("*.asl.json")):
        for name, state in _states(json.loads(path.read_text())["States"]):
            params = state.get("Parameters") or {}
            placeholder = str(params.get("FunctionName", "")).strip("${}")
            fn = FUNCTION_OF_PLACEHOLDER.get(placeholder)
            if state.get("Type") == "Task" and fn in PAYLOAD_OF_FUNCTION:
                tasks.append((f"{path.name}:{name}", fn, params["Payload"]))
    return tasks


def _check(model: type[GatePayload], payload: dict[str, Any], where: str) -> None:
    wire = {wire_name(model, name): name for name in model.model_fields}
    keys = {k.removesuffix(".$"): k for k in payload}
    assert set(keys) <= set(wire), f"{where}: {sorted(set(keys) - set(wire))} not in {model.__name__}"
    required = {wire_name(model, n) for n, info in model.model_fields.items() if info.is_required()}
    assert required <= set(keys), f"{where}: {model.__name__} needs {sorted(required - set(keys))}"
    fields: dict[str, Any] = {}
    for key, raw in keys.items():
        value = payload[raw]
        fields[wire[key]] = StatePath(value) if raw.endswith(".$") else value
    gate_payload(model, **fields)  # literal values pass the field types


GATE_TASKS = _gate_tasks()


def test_every_gate_lambda_is_sent_a_payload_somewhere() -> None:
    sent = {fn for _, fn, _ in GATE_TASKS}
    assert {"park", "gate_timeout", "await_gate", "await_timeout", "interrupt_park", "interrupt_fail"} <= sent
    assert {"review_park", "review_turn", "merge_start", "merge_record"} <= sent


@pytest.mark.parametrize(("where", "fn", "payload"), GATE_TASKS, ids=[w for w, _, _ in GATE_TASKS])
def test_asl_payloads_match_their_models(where: str, fn: str, payload: dict[str, Any]) -> None:
    model = PAYLOAD_OF_FUNCTION[fn]
    if isinstance(payload, dict) and all(not isinstance(v, dict) for v in payload.values()):
        _check(model, payload, where)
    else:  # a nested payload (the interrupt's request): its own model checks the inner dict
        nested = {k: v for k, v in payload.items() if not isinstance(v, dict)}
        for key, inner in payload.items():
            if isinstance(inner, dict):
                field = next(n for n in model.model_fields if wire_name(model, n) == key)
                inner_model = model.model_fields[field].annotation
                assert isinstance(inner_model, type) and issubclass(inner_model, GatePayload)
                _check(inner_model, inner, f"{where}.{key}")
                nested[f"{key}.$"] = "$.inner"
        _check(model, nested, where)


def test_await_gate_tasks_in_the_json_are_what_the_builder_writes() -> None:
    """The await-gate payload has one writer (`await_gate_payloads`); the hand-written ASL says the same."""
    seen = 0
    for where, fn, payload in GATE_TASKS:
        if fn not in ("await_gate", "await_timeout"):
            continue
        value = {k.removesuffix(".$"): (StatePath(v) if k.endswith(".$") else v) for k, v in payload.items()}
        park, timed_out = await_gate_payloads(
            gate=value["gate"],
            from_node=value.get("from"),
            timeout=value.get("timeout_seconds", 1),
            run_id_path=value["run_id"].path,
            map_item_path=value["map_item"].path if "map_item" in value else None,
            ladder=value.get("ladder"),  # an await gate's ladder (round 5), from the input or literal
        )
        built = asl_payload(park if fn == "await_gate" else timed_out)
        if fn == "await_gate" and "from" not in payload:
            built.pop("from", None)
        assert built == payload, where
        seen += 1
    assert seen >= 6


def test_the_builder_refuses_what_the_lambda_would_refuse() -> None:
    with pytest.raises(ValueError, match="gate"):
        await_gate_states("Sync", gate="bad gate!", timeout_seconds=60, next=None)
    with pytest.raises(ValueError, match="timeout_seconds"):
        await_gate_states("Sync", gate="sync", timeout_seconds=10**9, next=None)
    with pytest.raises(ValueError, match="no field"):
        gate_payload(AwaitGatePayload, token="t", run_id="r", gate="g", timeout_seconds=5, surprise=1)


def test_the_handlers_parse_with_the_models() -> None:
    for fn in ("park", "gate_timeout", "await_gate", "await_timeout", "interrupt_park", "interrupt_fail"):
        source = (function(fn).directory / "handler.py").read_text()
        assert f"model={PAYLOAD_OF_FUNCTION[fn].__name__}" in source, fn


def test_an_empty_from_means_the_whole_run_and_a_bad_name_is_refused() -> None:
    base = {"token": "t", "run_id": "r1", "gate": "sync", "timeout_seconds": 60}
    assert AwaitGatePayload.model_validate({**base, "from": ""}).from_node is None
    assert AwaitGatePayload.model_validate({**base, "from": "draft"}).from_node == "draft"
    with pytest.raises(Exception, match="node"):
        AwaitGatePayload.model_validate({**base, "from": "no spaces"})
