"""State-machine definitions: substitution (same `${Name}` syntax as CDK's DefinitionSubstitutions)
and the checks our ASL must pass, chief among them the no-silent-infinity rule: every task-token wait
has a timeout."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from baton.workflows.asl_rules import RuleContext, rule_findings
from baton.workflows.gate_checks import (
    asking_nodes,
    await_findings,
    grace_findings,
    ladder_findings,
    pause_nodes,
    question_node_findings,
    quorum_findings,
    review_findings,
)
from baton.workflows.map_rules import map_findings

if TYPE_CHECKING:
    from pathlib import Path

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


class AslError(ValueError):
    """A definition breaks a rule; the message names the file and the state."""


def placeholders(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))


def substitute(text: str, substitutions: Mapping[str, str]) -> str:
    missing = placeholders(text) - set(substitutions)
    if missing:
        raise AslError(f"no substitution for {sorted(missing)}")
    return _PLACEHOLDER.sub(lambda m: substitutions[m.group(1)], text)


@dataclass(frozen=True)
class Problem:
    file: str
    state: str
    message: str
    # the gate checks' codes (C100-C271, C245: baton.workflows.gate_checks; C243-C244, Baton inside a Map:
    # baton.workflows.map_rules); the deployment rules' (C300-C303: baton.workflows.asl_rules)
    code: str = ""

    def __str__(self) -> str:
        return f"{self.file}: state '{self.state}': " + (f"{self.code} " if self.code else "") + self.message


def _walk(states: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, dict[str, Any], Mapping[str, Any]]]:
    """Every state, nested Parallel branches and Map processors included, with its sibling states."""
    for name, state in states.items():
        path = f"{prefix}{name}"
        yield path, state, states
        for i, branch in enumerate(state.get("Branches", []) or []):
            yield from _walk(branch.get("States", {}), f"{path}/branch[{i}]/")
        processor = state.get("ItemProcessor") or state.get("Iterator")
        if processor:
            yield from _walk(processor.get("States", {}), f"{path}/items/")


def _is_token_wait(state: Mapping[str, Any]) -> bool:
    """A Task that waits on something outside the execution: a task token, or an activity worker."""
    resource = str(state.get("Resource", ""))
    return state.get("Type") == "Task" and (resource.endswith(".waitForTaskToken") or ":activity:" in resource)


def check_definition(
    definition: Mapping[str, Any], file: str, *, input_schema: Mapping[str, Any] | None = None
) -> list[Problem]:
    problems: list[Problem] = []
    top = definition.get("States")
    if not isinstance(top, Mapping) or definition.get("StartAt") not in top:
        return [Problem(file, "<top>", "StartAt must name a state in States")]
    problems.extend(_gate_problems(top, file, input_schema))
    for path, state, siblings in _walk(top):
        if _is_token_wait(state) and not ("TimeoutSeconds" in state or "TimeoutSecondsPath" in state):
            problems.append(
                Problem(
                    file,
                    path,
                    "waits for a task token with no TimeoutSeconds or TimeoutSecondsPath; every pause "
                    "must end (no silent infinity)",
                )
            )
        targets = [state.get("Next"), state.get("Default")]
        targets += [c.get("Next") for c in state.get("Catch", []) or []]
        targets += [c.get("Next") for c in state.get("Choices", []) or []]
        for target in targets:
            if target is not None and target not in siblings:
                problems.append(Problem(file, path, f"goes to '{target}', which is not a state here"))
    return problems


def _gate_problems(top: Mapping[str, Any], file: str, input_schema: Mapping[str, Any] | None) -> list[Problem]:
    asking = asking_nodes((p, s) for p, s, _ in _walk(top))
    pauses = pause_nodes((p, s) for p, s, _ in _walk(top))
    context = RuleContext.for_file(file, input_schema)
    found: list[Problem] = []
    for path, state, _ in _walk(top):
        for where, code, message in [
            *review_findings(path, state, input_schema),
            *question_node_findings(path, state, pauses),
            *await_findings(path, state, asking),
            *grace_findings(path, state),
            *quorum_findings(path, state, input_schema),
            *ladder_findings(path, state),
            *rule_findings(path, state, context),
            *map_findings(path, state),
        ]:
            found.append(Problem(file, where, message, code))
    return found


def check_file(path: Path) -> list[Problem]:
    try:
        definition = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        return [Problem(path.name, "<file>", f"not valid JSON: {err}")]
    schema_file = path.with_name(path.name.removesuffix(".asl.json") + ".input.schema.json")
    schema = json.loads(schema_file.read_text()) if schema_file.is_file() else None
    return check_definition(definition, path.name, input_schema=schema)


def check_directory(directory: Path) -> list[Problem]:
    problems: list[Problem] = []
    for path in sorted(directory.glob("*.asl.json")):
        problems.extend(check_file(path))
    return problems


def load_definition(path: Path, substitutions: Mapping[str, str]) -> str:
    problems = check_file(path)
    if problems:
        raise AslError("\n".join(str(p) for p in problems))
    return substitute(path.read_text(), substitutions)
