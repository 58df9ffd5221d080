"""The field types every door shares, each defined once: run ids, node names, gate names, gate timeouts.

Every door uses these annotated types (the API's request models, the gates' Lambda payload models in
`baton.domain.gate_payloads`, the interrupt spec), so the same bad value gets the same answer on every
route: a bad run id is a 400 `bad_request` (it is also the Step Functions execution name), a bad node or
gate name or an unbounded timeout a 422 `validation_failed`. The validators raise Baton's own errors
(not ValueError), which pydantic lets through unchanged, so the API's error handler maps them to their
status codes.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema

from baton.errors import BadRequestError, PayloadTooLargeError, ValidationFailedError

# An operator's principal (a local name, an email, an IAM ARN): no spaces, no control characters. The class
# lists U+0085, the C1 controls and U+FEFF itself: `\s` means other sets in the server's regex engine (Unicode
# White_Space, with U+0085) and in a JSON Schema client's (ECMAScript, with U+FEFF), so a name one accepts the
# other refused (tests/e2e/test_fuzz.py found one).
Principal = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\s\x00-\x1f\x7f-\x9f\ufeff]+$")]

# The longest run id, the one limit every door checks (the API, the gates' payloads, the interrupt spec).
# Names are built from a run id: the hosted execution's (the run id, max 80), a workflow's child
# execution names (`States.Format('{}-ship-review-{}', $.run_id, ...)`, max 80: `baton check` measures
# each one at this length: C302 in baton.workflows.asl_rules) and an agent's IAM role session
# `run-<run_id>` (RoleSessionName, max 64), the tightest: 64 - len("run-") = 60.
MAX_RUN_ID_LENGTH = 60
RUN_ID_PATTERN = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9_-]{{0,{MAX_RUN_ID_LENGTH - 1}}}$")  # a valid execution name
NODE_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$")
GATE_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$")  # WAIT#<gate> in the store
MAX_TIMEOUT_SECONDS = 7 * 86400  # no silent infinity: every gate's wait ends within a week
MAX_RUN_INPUT_BYTES = 32 * 1024
# A run's status: its record's (baton.models.RunSummary) and every contract that shows it.
RunState = Literal["created", "running", "paused_waiting_human", "succeeded", "failed", "timed_out", "aborted"]
OPEN_RUN_STATES: frozenset[RunState] = frozenset({"created", "running", "paused_waiting_human"})  # not ended yet


def check_run_id(run_id: str) -> str:
    if not RUN_ID_PATTERN.match(run_id):
        raise BadRequestError(
            f"run_id must be 1-{MAX_RUN_ID_LENGTH} characters of letters, digits, '-' or '_', starting with a letter"
            " or digit",
            details={"run_id": run_id, "max_length": MAX_RUN_ID_LENGTH},
        )
    return run_id


def _check_name(pattern: re.Pattern[str], value: str, what: str) -> str:
    if not pattern.match(value):
        raise ValidationFailedError(
            f"{what} must be 1-80 characters of letters, digits, '_', '.', ':' or '-', starting with a letter or digit",
            details={what: value, "path": what},
        )
    return value


def check_node_name(value: str, what: str = "node") -> str:
    return _check_name(NODE_NAME_PATTERN, value, what)


def check_gate_name(value: str, what: str = "gate") -> str:
    return _check_name(GATE_NAME_PATTERN, value, what)


def _empty_is_none(value: object) -> object:
    return None if value == "" else value


RunId = Annotated[
    str,
    AfterValidator(check_run_id),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": RUN_ID_PATTERN.pattern,
            "maxLength": MAX_RUN_ID_LENGTH,
            "description": "A run id.",
        }
    ),
]
NodeName = Annotated[
    str,
    AfterValidator(check_node_name),
    WithJsonSchema({"type": "string", "pattern": NODE_NAME_PATTERN.pattern, "description": "A node name."}),
]
GateName = Annotated[
    str,
    AfterValidator(check_gate_name),
    WithJsonSchema({"type": "string", "pattern": GATE_NAME_PATTERN.pattern, "description": "A gate name."}),
]
# An optional scope ("from"): absent, null or "" all mean "the whole run".
ScopeNode = Annotated[NodeName | None, BeforeValidator(_empty_is_none)]


def refuse_non_numbers(value: object) -> object:
    """Before a number field's own parsing: a boolean or a string is not a number (pydantic's lax mode
    would read `true` as 1 and `"1000"` as 1000)."""
    if isinstance(value, bool | str | bytes):
        raise ValidationFailedError(f"expected a number, got {type(value).__name__} {value!r:.40}")
    return value


def check_timeout_seconds(value: int, what: str = "timeout_seconds") -> int:
    if isinstance(value, bool) or not 0 < value <= MAX_TIMEOUT_SECONDS:
        raise ValidationFailedError(
            f"{what} must be in 1..{MAX_TIMEOUT_SECONDS} (a wait must end), got {value!r}",
            details={"path": what},
        )
    return value


TimeoutSeconds = Annotated[
    int,
    BeforeValidator(refuse_non_numbers),
    AfterValidator(check_timeout_seconds),
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_SECONDS}),
]
# A Step Functions task token: server side only (never in an API response).
TaskToken = Annotated[str, Field(min_length=1)]

# ---- JSON limits: every door measures bodies, state, answers, schemas and edit values the same way ----
MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays/objects accepted anywhere (bodies, state, answers, schemas, edit values).

Python's JSON decoder, deepcopy and fastjsonschema recurse per level; 64 is far beyond any real state
snapshot and far below the interpreter's recursion limit, so deep input is a 400 before any work."""


def json_text_depth(text: str, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of JSON `text`, measured without parsing (one pass, no recursion); stops
    counting at `limit + 1`. Brackets inside strings do not count."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif char in "]}":
            depth -= 1
    return deepest


def json_value_depth(value: object, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of a decoded JSON value (iterative); stops counting at `limit + 1`."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((child, depth) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def check_json_depth(value: object, what: str, limit: int = MAX_JSON_DEPTH) -> None:
    """BadRequestError when `value` nests deeper than `limit` (`what` names the field)."""
    if json_value_depth(value, limit) > limit:
        raise BadRequestError(f"{what} is nested deeper than {limit} levels", details={"field": what, "limit": limit})


def check_run_input(payload: dict[str, Any]) -> None:
    """A hosted run's input, before its execution starts: at most MAX_RUN_INPUT_BYTES (413), and every
    `*timeout_seconds` in it (each feeds a TimeoutSecondsPath) a whole number of seconds Step Functions
    accepts (not 0, negative or fractional) and that ends in practice (422 naming the field)."""
    _check_timeouts(payload, "input")
    size = len(json.dumps(payload))
    if size > MAX_RUN_INPUT_BYTES:
        raise PayloadTooLargeError(
            f"run input is {size} bytes; the limit is {MAX_RUN_INPUT_BYTES}",
            details={"size": size, "limit": MAX_RUN_INPUT_BYTES},
        )


def _check_timeouts(value: object, path: str) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}"
            if key.endswith("timeout_seconds") and (
                isinstance(item, bool) or not isinstance(item, int) or not 0 < item <= MAX_TIMEOUT_SECONDS
            ):
                raise ValidationFailedError(
                    f"{where} must be a whole number of seconds in 1..{MAX_TIMEOUT_SECONDS}, got {item!r}",
                    details={"path": where},
                )
            _check_timeouts(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_timeouts(item, f"{path}[{index}]")
