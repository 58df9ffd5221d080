"""The field types every door shares, each defined once: run ids, node names, gate names, gate timeouts.

Every door uses these annotated types (the API's request models, the gates' Lambda payload models in
`baton.domain.gate_payloads`, the interrupt spec), so the same bad value gets the same answer on every
route: a bad run id is a 400 `bad_request` (it is also the Step Functions execution name), a bad node or
gate name or an unbounded timeout a 422 `validation_failed`. The validators raise Baton's own errors
(not ValueError), which pydantic lets through unchanged, so the API's error handler maps them to their
status codes.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema

from baton.errors import BadRequestError, ValidationFailedError

RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$")  # also a valid execution name
NODE_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$")
GATE_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$")  # WAIT#<gate> in the store
MAX_TIMEOUT_SECONDS = 7 * 86400  # no silent infinity: every gate's wait ends within a week


def check_run_id(run_id: str) -> str:
    if not RUN_ID_PATTERN.match(run_id):
        raise BadRequestError(
            "run_id must be 1-80 characters of letters, digits, '-' or '_', starting with a letter or digit",
            details={"run_id": run_id},
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
    WithJsonSchema({"type": "string", "pattern": RUN_ID_PATTERN.pattern, "description": "A run id."}),
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


def check_timeout_seconds(value: int, what: str = "timeout_seconds") -> int:
    if isinstance(value, bool) or not 0 < value <= MAX_TIMEOUT_SECONDS:
        raise ValidationFailedError(
            f"{what} must be in 1..{MAX_TIMEOUT_SECONDS} (a wait must end), got {value!r}",
            details={"path": what},
        )
    return value


TimeoutSeconds = Annotated[
    int,
    AfterValidator(check_timeout_seconds),
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_SECONDS}),
]
# A Step Functions task token: server side only (never in an API response).
TaskToken = Annotated[str, Field(min_length=1)]
