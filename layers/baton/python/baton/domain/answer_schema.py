"""Validation of the value an operator resumes an interrupt with, and of the state snapshot's size.

An interrupt may describe the value it expects in one of two forms:

* ``schema`` - the light form ``{"type": T, "enum"?: [...], "default"?: ..., "title"?, "description"?}``
  where ``T`` is ``string | number | integer | boolean | object | array``. ``type`` may be omitted when
  ``enum`` is given, and ``"type": "enum"`` (the form the interrupt seed's examples use) means the same.
* ``jsonSchema`` - a full JSON Schema, draft-04, draft-06 or draft-07 only (picked by ``$schema``;
  draft-07 when absent), compiled with fastjsonschema once per distinct schema, its ``pattern`` s and
  ``patternProperties`` keys run by RE2 in linear time (``baton.domain.linear_patterns``). fastjsonschema does not
  implement 2019-09/2020-12, so a ``$schema`` naming them, or their keywords (``prefixItems``,
  ``dependentRequired``, ``dependentSchemas``, ``unevaluatedProperties``, ``unevaluatedItems``, ...),
  anywhere a subschema may stand, is refused with a 400 rather than silently not enforced (a ``$ref``
  into ``$defs`` is fine: it is a plain JSON pointer). Only local ``$ref`` s (``#/...`` or ids declared
  inside the schema) are allowed: a remote ref would make the service fetch a URL chosen by whoever
  created the interrupt.

``jsonSchema`` wins when both are given. Rules follow JSON Schema in both forms: ``true``/``false`` are
not integers or numbers, ``3.0`` is an integer, and enum members compare by JSON value (``1`` never
matches ``true``). When the value is ``None`` (no input) and the winning schema has a top-level
``default``, the default is the answer; fastjsonschema also fills in nested ``default`` s of object
properties.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from baton.domain.fields import check_json_depth
from baton.domain.linear_patterns import compile_schema
from baton.domain.schema_formats import safe_formats
from baton.domain.schema_limits import check_patterns, check_schema_limits, check_supported_draft
from baton.errors import BadRequestError, PayloadTooLargeError, ValidationFailedError

if TYPE_CHECKING:
    # Imported where a jsonSchema is compiled or run (below): a light schema, or none, never loads it.
    import fastjsonschema

STATE_SNAPSHOT_LIMIT_BYTES = 64 * 1024
"""Largest state snapshot an interrupt may carry, measured as compact UTF-8 JSON.

The snapshot is stored inside the interaction item (DynamoDB caps an item at 400 KB, shared with the
prompt, schemas, answer and bookkeeping attributes) and travels through Step Functions as task input and,
edited, as the ``SendTaskSuccess`` output (256 KB cap per payload, shared with the rest of the execution
state). 64 KiB leaves room for all of that and for state edits that grow the snapshot on resume.
"""

LIGHT_SCHEMA_TYPES = ("string", "number", "integer", "boolean", "object", "array")
_LIGHT_SCHEMA_KEYS = frozenset({"type", "enum", "default", "title", "description"})
_CACHE_SIZE = 256

JsonValidator = Callable[[Any], Any]
_compiled: OrderedDict[str, JsonValidator] = OrderedDict()
_compiled_lock = threading.Lock()


def check_schema_definition(schema: Any = None, json_schema: Any = None) -> None:
    """Reject a malformed light ``schema`` or an uncompilable ``jsonSchema`` with BadRequestError.

    Called when an interrupt is created, so a broken schema fails its creator, not the operator who
    later tries to resume. Both are checked even though only ``jsonSchema`` is used when both are given.
    """
    if schema is not None:
        _check_light_schema(schema)
    if json_schema is not None:
        import fastjsonschema

        validator = compile_json_schema(json_schema)
        if "default" in json_schema:
            try:
                _run(validator, json_schema["default"])
            except fastjsonschema.JsonSchemaValueException as exc:
                path, reason = _describe_json_schema_error(exc)
                raise BadRequestError(
                    f"jsonSchema default does not satisfy the schema: {path} {reason}",
                    details={"field": "jsonSchema", "path": path},
                ) from None


def validate_answer(value: Any, *, schema: Any = None, json_schema: Any = None) -> Any:
    """Return the answer to use (the default when ``value`` is None and one exists) or raise.

    Raises ValidationFailedError whose details carry ``path`` (``$`` or e.g. ``$.items[1].n``) and a
    readable ``reason``. With neither schema the value is returned unchanged. Schemas are assumed to
    have passed :func:`check_schema_definition`; a broken one still raises BadRequestError.
    """
    if json_schema is not None:
        import fastjsonschema

        validator = compile_json_schema(json_schema)
        if value is None and "default" in json_schema:
            value = json_schema["default"]
        try:
            return _run(validator, value)
        except fastjsonschema.JsonSchemaValueException as exc:
            path, reason = _describe_json_schema_error(exc)
            _fail(path, reason, exc.rule)
    if schema is not None:
        _check_light_schema(schema)
        if value is None and "default" in schema:
            return copy.deepcopy(schema["default"])
        failure = _light_problem(value, schema)
        if failure is not None:
            rule, reason = failure
            _fail("$", reason, rule)
        return value
    return value


def _run(validator: JsonValidator, value: Any) -> Any:
    """Validate within the value's depth budget."""
    check_json_depth(value, "input")
    try:
        return validator(copy.deepcopy(value))
    except RecursionError:  # a recursion the creation checks did not foresee: the schema's fault
        raise BadRequestError(
            "jsonSchema recurses without end on this value", details={"field": "jsonSchema"}
        ) from None


def check_state_size(state: Any, limit_bytes: int = STATE_SNAPSHOT_LIMIT_BYTES) -> int:
    """Return the snapshot size in bytes (compact UTF-8 JSON); PayloadTooLargeError above the limit."""
    try:
        encoded = json.dumps(state, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise BadRequestError(f"state is not JSON-serializable: {exc}", details={"field": "state"}) from None
    size = len(encoded.encode("utf-8"))
    if size > limit_bytes:
        raise PayloadTooLargeError(
            f"state snapshot is {size} bytes of compact JSON; the limit is {limit_bytes} bytes",
            details={"field": "state", "size_bytes": size, "limit_bytes": limit_bytes},
        )
    return size


def compile_json_schema(json_schema: Any) -> JsonValidator:
    """Compile (or fetch from the cache) a validator; BadRequestError when the schema does not compile.

    The cache key is the SHA-256 of the schema's canonical JSON, so equal schemas share one validator.
    """
    if not isinstance(json_schema, dict):
        raise BadRequestError(
            f"jsonSchema must be a JSON object, got {_kind(json_schema)}", details={"field": "jsonSchema"}
        )
    try:
        canonical = json.dumps(json_schema, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise BadRequestError(f"jsonSchema is not JSON: {exc}", details={"field": "jsonSchema"}) from None
    key = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    check_supported_draft(json_schema)
    check_json_depth(json_schema, "jsonSchema")
    with _compiled_lock:
        cached = _compiled.get(key)
        if cached is not None:
            _compiled.move_to_end(key)
            return cached
    check_patterns(json_schema)  # a 422 naming a pattern RE2 cannot run, before compiling
    try:
        # fastjsonschema rewrites $ref values in place, so it gets its own copy.
        validator: JsonValidator = compile_schema(
            json.loads(canonical), handlers=_NoRemoteRefs(), use_default=True, formats=safe_formats(json_schema)
        )
    except Exception as exc:  # generator failures surface as assorted exception types
        raise BadRequestError(f"jsonSchema does not compile: {exc}", details={"field": "jsonSchema"}) from None
    check_schema_limits(json_schema)  # after compiling, so a schema that does not compile says so first
    with _compiled_lock:
        _compiled[key] = validator
        while len(_compiled) > _CACHE_SIZE:
            _compiled.popitem(last=False)
    return validator


class _NoRemoteRefs(Mapping[str, Callable[[str], Any]]):
    """A handler table that claims every URI scheme and refuses it, so no ``$ref`` is ever fetched."""

    def __getitem__(self, scheme: str) -> Callable[[str], Any]:
        return _refuse_remote_ref

    def __contains__(self, scheme: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _refuse_remote_ref(uri: str) -> NoReturn:
    import fastjsonschema

    raise fastjsonschema.JsonSchemaDefinitionException(
        f"remote $ref {uri!r} is not allowed; only refs inside the schema are"
    )


def _describe_json_schema_error(exc: fastjsonschema.JsonSchemaValueException) -> tuple[str, str]:
    name = exc.name or "data"
    path = "$" + name[len("data") :] if name.startswith("data") else "$"
    message = exc.message
    reason = (message[len(name) :].strip() if message.startswith(name) else message) or "is invalid"
    if exc.rule == "type":
        reason = f"{reason}, got {_kind(exc.value)}"
    return path, reason


def _check_light_schema(schema: Any) -> None:
    if not isinstance(schema, dict):
        _bad_schema(f"schema must be a JSON object, got {_kind(schema)}")
    unknown = sorted(set(schema) - _LIGHT_SCHEMA_KEYS)
    if unknown:
        _bad_schema(
            f"schema has unknown keys {unknown}; allowed are {sorted(_LIGHT_SCHEMA_KEYS)}"
            " (use jsonSchema for anything richer)"
        )
    kind = _check_light_type(schema)
    if "enum" in schema:
        _check_light_enum(schema["enum"], kind)
    for text_key in ("title", "description"):
        if text_key in schema and not isinstance(schema[text_key], str):
            _bad_schema(f"schema {text_key} must be a string")
    if "default" in schema:
        failure = _light_problem(schema["default"], schema)
        if failure is not None:
            _bad_schema(f"schema default {_show(schema['default'])} is not a valid answer: {failure[1]}")


def _check_light_type(schema: dict[str, Any]) -> Any:
    """The schema's `type` (None with only an enum), refused when it is missing or unknown."""
    has_enum = "enum" in schema
    kind = schema.get("type")
    if kind is None and not has_enum:
        _bad_schema("schema needs a type (or an enum)")
    if kind is not None and kind != "enum" and kind not in LIGHT_SCHEMA_TYPES:
        _bad_schema(f"schema type must be one of {', '.join(LIGHT_SCHEMA_TYPES)} or enum, got {kind!r}")
    if kind == "enum" and not has_enum:
        _bad_schema('schema type "enum" needs an enum list')
    return kind


def _check_light_enum(options: Any, kind: Any) -> None:
    if not isinstance(options, list) or not options:
        _bad_schema("schema enum must be a non-empty list")
    for option in options:
        problem = _type_problem(option, kind)
        if problem is not None:
            _bad_schema(f"schema enum member {_show(option)} does not match its type: {problem}")


def _light_problem(value: Any, schema: dict[str, Any]) -> tuple[str, str] | None:
    """``(rule, reason)`` when ``value`` breaks the light schema, else None."""
    problem = _type_problem(value, schema.get("type"))
    if problem is not None:
        return "type", problem
    options = schema.get("enum")
    if options is not None and not any(_json_equal(value, option) for option in options):
        return "enum", f"must be one of {_show(options)}, got {_show(value)}"
    return None


def _type_problem(value: Any, kind: str | None) -> str | None:
    if kind is None or kind == "enum":
        return None if _is_json(value) else f"must be a JSON value, got {_kind(value)}"
    ok = {
        "string": isinstance(value, str),
        "number": _is_number(value),
        "integer": _is_integer(value),
        "boolean": isinstance(value, bool),
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
    }[kind]
    if ok and isinstance(value, dict | list) and not _is_json(value):
        return f"must contain only JSON values, got {_kind(value)} holding other types"
    return None if ok else f"must be {kind}, got {_kind(value)}"


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _is_integer(value: Any) -> bool:
    """JSON Schema's integer: any number with no fractional part (``3.0`` counts), never a boolean."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_json(value: Any) -> bool:
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def _json_equal(left: Any, right: Any) -> bool:
    """Equality by JSON value: booleans only equal booleans, 1 equals 1.0, containers compare deeply."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if _is_number(left) and _is_number(right):
        return bool(left == right)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_json_equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_json_equal(left[k], right[k]) for k in left)
    return type(left) is type(right) and bool(left == right)


# JSON kinds by Python type, in lookup order (bool before int: a boolean is an int to isinstance).
_JSON_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, float):
        return "number" if math.isfinite(value) else "non-finite number"
    return next((name for type_, name in _JSON_KINDS if isinstance(value, type_)), type(value).__name__)


def _show(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _fail(path: str, reason: str, rule: str | None) -> NoReturn:
    raise ValidationFailedError(f"answer at {path} {reason}", details={"path": path, "reason": reason, "rule": rule})


def _bad_schema(reason: str) -> NoReturn:
    raise BadRequestError(f"invalid schema: {reason}", details={"field": "schema"})
