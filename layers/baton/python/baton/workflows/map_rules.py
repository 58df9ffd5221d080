"""What `baton check` says about Baton inside a Map iteration (issue 28, the seed's Map semantics). Each
finding has a code:

- C243: a Baton Task in a Map's ItemProcessor that does not carry the item it runs for: an await gate
  (its wait is `<gate>-<map_item>`; without it every item parks the same `WAIT#<gate>` and the second
  park fails) or a Task that posts questions as a node (the question service refuses a post from inside
  a Map iteration, the seed's rule, but only when it knows: without the item every item's questions
  would land under one node). The item comes from the execution context, never from the agent's
  memory: the Map's ItemSelector puts `$$.Map.Item.Index` at a key (`map_item_selector()` in
  `baton.workflows.gate_states` does), and the Task passes `"map_item.$": "$.<that key>"`. A blocking
  ask or an interrupt (`park`, `interrupt_park`) with a literal `node` is refused there too: it parks
  `WAIT#<node>` for every item; give it a per-item node (`"node.$"`, e.g. `States.Format('review-{}',
  $.map_item)`).
- C244: a person's pause (a task-token wait) inside a Map whose MaxConcurrency is set (>= 1, or a
  MaxConcurrencyPath): a parked item keeps its concurrency slot for as long as nobody answers (Step
  Functions counts an iteration as running until it ends; a token wait does not end it), so the items
  after it wait too. Leave MaxConcurrency at 0 (an Inline Map then runs up to 40 items at once), run a
  nested state machine per item, or say why the bound is right in the Map's Comment:
  `[parked-items-hold-slots: <why>]`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from baton.workflows.gate_checks import asks_as_node, is_await_gate, task_payload
from baton.workflows.gate_states import MAP_INDEX

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

Finding = tuple[str, str, str]

NODE_PAUSE_ARNS = frozenset({"${ParkFunctionArn}", "${InterruptParkFunctionArn}"})
_ACKNOWLEDGED = re.compile(r"\[parked-items-hold-slots:\s*([^\]]*\S)\s*\]")


def _processor_states(state: Mapping[str, Any], prefix: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The states of one Map iteration, Parallel branches included; a nested Map is judged on its own."""
    processor = state.get("ItemProcessor") or state.get("Iterator") or {}
    yield from _states_of(processor.get("States", {}) or {}, prefix)


def _states_of(states: Mapping[str, Any], prefix: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for name, inner in states.items():
        path = f"{prefix}{name}"
        yield path, inner
        for i, branch in enumerate(inner.get("Branches", []) or []):
            yield from _states_of(branch.get("States", {}) or {}, f"{path}/branch[{i}]/")


def _index_keys(map_state: Mapping[str, Any]) -> set[str]:
    """The paths an iteration reads the item's index at: `$.<key>` for each ItemSelector key set from
    `$$.Map.Item.Index` (an iteration's states cannot read `$$.Map` themselves)."""
    selector = map_state.get("ItemSelector") or map_state.get("Parameters") or {}
    if not isinstance(selector, dict):
        return set()
    return {
        f"$.{key.removesuffix('.$')}" for key, value in selector.items() if key.endswith(".$") and value == MAP_INDEX
    }


def _is_node_pause(state: Mapping[str, Any]) -> bool:
    """A blocking ask or an interrupt: a token wait on `park` / `interrupt_park`, parked at WAIT#<node>."""
    params = state.get("Parameters") or {}
    return (
        state.get("Type") == "Task"
        and str(state.get("Resource", "")).endswith(".waitForTaskToken")
        and isinstance(params, dict)
        and params.get("FunctionName") in NODE_PAUSE_ARNS
    )


def _item_findings(path: str, map_state: Mapping[str, Any]) -> list[Finding]:
    """C243: each await gate and each asking Task of the iteration passes the item from the context; each
    blocking ask or interrupt parks at a node of its own."""
    carried = _index_keys(map_state)
    findings: list[Finding] = []
    for where, state in _processor_states(map_state, f"{path}/items/"):
        node = task_payload(state).get("node")
        if _is_node_pause(state) and isinstance(node, str):
            findings.append(
                (
                    where,
                    "C243",
                    f"a person's pause at the literal node '{node}' inside Map iteration '{path}': every item parks "
                    f'WAIT#{node} (the second park fails); give each item its own node ("node.$": '
                    f"States.Format('{node}-{{}}', $.map_item) with {MAP_INDEX} in the ItemSelector)",
                )
            )
            continue
        what = "an await gate" if is_await_gate(state) else "posts questions" if asks_as_node(state) else None
        if what is None:
            continue
        given = task_payload(state).get("map_item.$")
        if isinstance(given, str) and given in carried:
            continue
        source = (
            f"reads {given!r}, which the Map's ItemSelector does not set from {MAP_INDEX}"
            if isinstance(given, str)
            else "passes no map_item"
        )
        findings.append(
            (
                where,
                "C243",
                f"{what} inside Map iteration '{path}' {source}: every item would share one "
                + ("wait (the second park fails)" if what == "an await gate" else "node's questions")
                + f". Put {MAP_INDEX} in the Map's ItemSelector (map_item_selector()) and pass "
                '"map_item.$": "$.<that key>" in the payload',
            )
        )
    return findings


def _has_pause(map_state: Mapping[str, Any]) -> str | None:
    for where, state in _processor_states(map_state, ""):
        if state.get("Type") == "Task" and str(state.get("Resource", "")).endswith(".waitForTaskToken"):
            return where
    return None


def _slot_findings(path: str, map_state: Mapping[str, Any]) -> list[Finding]:
    """C244: a bounded Map whose iterations park on a person."""
    bound = map_state.get("MaxConcurrency", 0)
    bounded = "MaxConcurrencyPath" in map_state or (
        isinstance(bound, int) and not isinstance(bound, bool) and bound > 0
    )
    pause = _has_pause(map_state) if bounded else None
    if pause is None or _ACKNOWLEDGED.search(str(map_state.get("Comment", ""))):
        return []
    limit = map_state.get("MaxConcurrencyPath", bound)
    return [
        (
            path,
            "C244",
            f"MaxConcurrency {limit} with a person's pause in each item ({pause}): a parked item keeps its slot "
            "until it is answered (Step Functions counts it as running), so the items after it wait for that "
            "person too. Leave MaxConcurrency at 0 (Inline: up to 40 items at once), run a nested state "
            "machine per item, or say why in the Map's Comment: [parked-items-hold-slots: <why>]",
        )
    ]


def map_findings(path: str, state: Mapping[str, Any]) -> list[Finding]:
    if state.get("Type") != "Map":
        return []
    return [*_item_findings(path, state), *_slot_findings(path, state)]
