"""Each workflow's input schema, declared beside its ASL file (`statemachines/<stem>.input.schema.json`
for `statemachines/<stem>.asl.json`), checked by `POST /api/runs` before the execution starts, so a bad
input is a 422 naming the field before any question is posted.

A schema may name where the input holds a review gate's configuration (`"x-baton-review-config":
"review"`, or `""` for the whole input): that configuration is checked at creation as the gate itself
would (`baton.domain.review_gate.parse_gate_config`), repository included.

Locally and in tests the files are read from the checkout; a deployed Lambda has no checkout, so the
CDK stack passes them to the API function as `BATON_INPUT_SCHEMAS` (compact JSON, see
`infra/stack.py`), and `baton.runtime.wiring` hands whichever it has to `RunService`.
"""

from __future__ import annotations

import base64
import json
import zlib
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import fastjsonschema

from baton.domain.linear_patterns import compile_schema
from baton.errors import ValidationFailedError
from baton.runtime.settings import COMPRESSED_PREFIX
from baton.workflows.resources import STATE_MACHINES

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

REVIEW_CONFIG_KEY = "x-baton-review-config"
SUFFIX = ".input.schema.json"


def schema_path(directory: Path, asl_file: str) -> Path:
    return directory / (asl_file.removesuffix(".asl.json") + SUFFIX)


def load_schemas(directory: Path | None = None) -> dict[str, dict[str, Any]]:
    """workflow name -> its input schema, for every registered workflow that declares one."""
    if directory is None:
        from baton.workflows.source_tree import source_tree

        directory = source_tree().statemachines_dir
    found: dict[str, dict[str, Any]] = {}
    for workflow, asl_file in STATE_MACHINES.items():
        path = schema_path(directory, asl_file)
        if path.is_file():
            found[workflow] = json.loads(path.read_text())
    return found


def compact(schemas: Mapping[str, Mapping[str, Any]]) -> str:
    """The schemas as the deployed API function receives them: comments dropped, no spaces, deflated and
    base64'd (the ladder and quorum fields took the plain JSON past what fits in a function's 4 KB
    environment; `baton.runtime.settings.Settings` inflates it)."""
    stripped = {name: {k: v for k, v in schema.items() if k != "$comment"} for name, schema in schemas.items()}
    text = json.dumps(stripped, separators=(",", ":"), sort_keys=True)
    return COMPRESSED_PREFIX + base64.b64encode(zlib.compress(text.encode(), 9)).decode()


@lru_cache(maxsize=64)
def _compiled(text: str) -> Callable[[Any], Any]:
    return compile_schema(json.loads(text), handlers={}, formats={})  # patterns in RE2, as answer schemas


def _field(err: fastjsonschema.JsonSchemaValueException) -> str:
    """`data.review.run_branch` -> `input.review.run_branch`; a missing required field is named too."""
    path = "input" + str(err.name or "data").removeprefix("data")
    if err.rule == "required" and isinstance(err.rule_definition, list):
        missing = [f for f in err.rule_definition if not isinstance(err.value, dict) or f not in err.value]
        if missing:
            return f"{path}.{missing[0]}"
    return path


def check_input(workflow: str, payload: Any, schema: Mapping[str, Any] | None) -> None:
    """Refuse `payload` (422 naming the field) if it does not satisfy the workflow's input schema."""
    if schema is None:
        return
    try:
        _compiled(json.dumps(schema, sort_keys=True))(payload)
    except fastjsonschema.JsonSchemaValueException as err:
        field = _field(err)
        if err.rule == "required":
            message = f"{field} is required"
        else:
            text = str(err.message)
            message = text.replace(str(err.name), field, 1) if err.name and str(err.name) in text else text
        raise ValidationFailedError(
            f"the input of workflow '{workflow}' is not what it declares: {message}",
            details={"path": field, "workflow": workflow},
        ) from None


def review_config_of(payload: Any, schema: Mapping[str, Any] | None) -> tuple[str, Any] | None:
    """(field, configuration) of the review gate this input configures, when its schema says where."""
    if schema is None or REVIEW_CONFIG_KEY not in schema:
        return None
    where = str(schema[REVIEW_CONFIG_KEY])
    value: Any = payload
    for part in [p for p in where.split(".") if p]:
        value = value.get(part) if isinstance(value, dict) else None
    return ("input." + where).rstrip("."), value
