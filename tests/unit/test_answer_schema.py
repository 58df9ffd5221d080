"""Validation of resume values (light schema and JSON Schema) and the state-snapshot size limit."""

from __future__ import annotations

import json
from typing import Any

import pytest

from baton.domain import answer_schema
from baton.domain.answer_schema import (
    STATE_SNAPSHOT_LIMIT_BYTES,
    check_schema_definition,
    check_state_size,
    compile_json_schema,
    validate_answer,
)
from baton.errors import BadRequestError, PayloadTooLargeError, ValidationFailedError

pytestmark = pytest.mark.disable_socket

_ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "count": {"type": "integer", "minimum": 1},
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        },
        "mode": {"type": "string", "default": "fast"},
    },
    "required": ["count"],
}


# --- light schema ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("string", "hello", 3),
        ("number", 2.5, "2.5"),
        ("number", 7, True),
        ("integer", 7, 7.5),
        ("integer", 7.0, False),
        ("boolean", False, 0),
        ("object", {"a": 1}, [1]),
        ("array", [1, "x"], {"a": 1}),
    ],
)
def test_light_schema_types(kind: str, good: Any, bad: Any) -> None:
    schema = {"type": kind}
    check_schema_definition(schema, None)
    assert validate_answer(good, schema=schema) == good
    with pytest.raises(ValidationFailedError) as info:
        validate_answer(bad, schema=schema)
    assert info.value.details["path"] == "$"
    assert info.value.details["rule"] == "type"
    assert f"must be {kind}" in info.value.message


@pytest.mark.parametrize("value", [True, False])
def test_booleans_are_not_integers_or_numbers(value: bool) -> None:
    for kind in ("integer", "number"):
        with pytest.raises(ValidationFailedError, match="got boolean"):
            validate_answer(value, schema={"type": kind})
    with pytest.raises(ValidationFailedError, match="got boolean"):
        validate_answer({"count": value}, json_schema=_ORDER_SCHEMA)


def test_null_is_rejected_without_default() -> None:
    with pytest.raises(ValidationFailedError, match="got null"):
        validate_answer(None, schema={"type": "string"})


def test_enum_light_schema() -> None:
    schema = {"type": "string", "enum": ["staging", "production"]}
    check_schema_definition(schema, None)
    assert validate_answer("staging", schema=schema) == "staging"
    with pytest.raises(ValidationFailedError) as info:
        validate_answer("prod", schema=schema)
    assert info.value.details == {
        "path": "$",
        "reason": 'must be one of ["staging", "production"], got "prod"',
        "rule": "enum",
    }


def test_seed_style_enum_type_and_typeless_enum() -> None:
    for schema in ({"type": "enum", "enum": ["staging", "production"]}, {"enum": ["staging", "production"]}):
        check_schema_definition(schema, None)
        assert validate_answer("production", schema=schema) == "production"
        with pytest.raises(ValidationFailedError):
            validate_answer("dev", schema=schema)


def test_enum_compares_by_json_value_not_python_equality() -> None:
    schema = {"enum": [1, 2, [0, 1]]}
    assert validate_answer(1.0, schema=schema) == 1.0
    for bad in (True, [False, True]):
        with pytest.raises(ValidationFailedError):
            validate_answer(bad, schema=schema)


def test_default_applies_only_when_value_is_none() -> None:
    schema = {"type": "integer", "default": 3}
    check_schema_definition(schema, None)
    assert validate_answer(None, schema=schema) == 3
    assert validate_answer(0, schema=schema) == 0
    with pytest.raises(ValidationFailedError):
        validate_answer("3", schema=schema)


def test_default_value_is_a_copy() -> None:
    schema: dict[str, Any] = {"type": "object", "default": {"a": [1]}}
    answer = validate_answer(None, schema=schema)
    answer["a"].append(2)
    assert schema["default"] == {"a": [1]}


def test_no_schema_passes_value_through() -> None:
    assert validate_answer({"anything": [1]}) == {"anything": [1]}
    assert validate_answer(None) is None


@pytest.mark.parametrize(
    ("schema", "message_part"),
    [
        ("string", "must be a JSON object"),
        ({}, "needs a type"),
        ({"type": "strng"}, "type must be one of"),
        ({"type": "enum"}, "needs an enum"),
        ({"enum": []}, "non-empty list"),
        ({"enum": "a,b"}, "non-empty list"),
        ({"type": "integer", "enum": [1, True]}, "enum member true"),
        ({"type": "integer", "default": "x"}, "default"),
        ({"enum": ["a", "b"], "default": "c"}, "default"),
        ({"type": "string", "minLength": 1}, "unknown keys"),
        ({"type": "string", "title": 3}, "title"),
    ],
)
def test_bad_light_schema_definitions(schema: Any, message_part: str) -> None:
    with pytest.raises(BadRequestError) as info:
        check_schema_definition(schema, None)
    assert message_part in info.value.message
    assert info.value.details["field"] == "schema"
    assert info.value.http_status == 400


# --- JSON Schema -----------------------------------------------------------------------------------


def test_json_schema_accepts_and_fills_nested_defaults() -> None:
    check_schema_definition(None, _ORDER_SCHEMA)
    answer = validate_answer({"count": 2, "items": [{"n": 1}]}, json_schema=_ORDER_SCHEMA)
    assert answer == {"count": 2, "items": [{"n": 1}], "mode": "fast"}


@pytest.mark.parametrize(
    ("value", "path", "rule"),
    [
        ({"count": "2"}, "$.count", "type"),
        ({"count": 0}, "$.count", "minimum"),
        ({}, "$", "required"),
        ({"count": 1, "items": [{"n": 1}, {"n": "x"}]}, "$.items[1].n", "type"),
        ({"count": 1, "items": [{"n": 1}, {}]}, "$.items[1]", "required"),
        ([1], "$", "type"),
    ],
)
def test_json_schema_failure_names_the_path(value: Any, path: str, rule: str) -> None:
    with pytest.raises(ValidationFailedError) as info:
        validate_answer(value, json_schema=_ORDER_SCHEMA)
    err = info.value
    assert err.details["path"] == path
    assert err.details["rule"] == rule
    assert err.message.startswith(f"answer at {path} ")
    assert "data" not in err.message
    assert err.http_status == 422


def test_json_schema_validation_does_not_mutate_the_value() -> None:
    value: dict[str, Any] = {"count": 2}
    assert validate_answer(value, json_schema=_ORDER_SCHEMA)["mode"] == "fast"
    assert value == {"count": 2}


def test_json_schema_top_level_default() -> None:
    schema = {"type": "string", "enum": ["a", "b"], "default": "b"}
    check_schema_definition(None, schema)
    assert validate_answer(None, json_schema=schema) == "b"


def test_json_schema_wins_over_light_schema() -> None:
    light = {"type": "string", "default": "light"}
    full = {"type": "integer", "default": 5}
    assert validate_answer(7, schema=light, json_schema=full) == 7
    assert validate_answer(None, schema=light, json_schema=full) == 5
    with pytest.raises(ValidationFailedError):
        validate_answer("text", schema=light, json_schema=full)


def test_local_refs_work() -> None:
    schema: dict[str, Any] = {
        "definitions": {"port": {"type": "integer", "minimum": 1024, "maximum": 65535}},
        "type": "object",
        "properties": {"port": {"$ref": "#/definitions/port"}},
    }
    check_schema_definition(None, schema)
    assert validate_answer({"port": 8080}, json_schema=schema) == {"port": 8080}
    with pytest.raises(ValidationFailedError) as info:
        validate_answer({"port": 80}, json_schema=schema)
    assert info.value.details["path"] == "$.port"
    assert schema["properties"]["port"] == {"$ref": "#/definitions/port"}  # caller's schema untouched


@pytest.mark.parametrize(
    ("json_schema", "message_part"),
    [
        ([{"type": "string"}], "must be a JSON object"),
        ({"type": "strng"}, "does not compile"),
        ({"pattern": "("}, "is not a regular expression"),
        ({"properties": []}, "does not compile"),
        ({"$ref": "#/definitions/missing"}, "does not compile"),
        ({"$ref": "http://169.254.169.254/latest/meta-data"}, "remote $ref"),
        ({"$ref": "https://example.com/schema.json"}, "remote $ref"),
        ({"$ref": "file:///etc/passwd"}, "remote $ref"),
        ({"$id": "https://example.com/root.json", "$ref": "other.json"}, "remote $ref"),
        ({"type": "integer", "default": "x"}, "default does not satisfy"),
        ({"minimum": float("nan")}, "not JSON"),
    ],
)
def test_bad_json_schema_definitions(json_schema: Any, message_part: str) -> None:
    with pytest.raises(BadRequestError) as info:
        check_schema_definition(None, json_schema)
    assert message_part in info.value.message
    assert info.value.details["field"] == "jsonSchema"


def test_both_schemas_are_checked_at_definition_time() -> None:
    with pytest.raises(BadRequestError):
        check_schema_definition({"type": "nope"}, {"type": "string"})


def test_compiled_validators_are_cached_by_schema_content() -> None:
    first = compile_json_schema({"type": "object", "required": ["a"]})
    again = compile_json_schema(json.loads(json.dumps({"required": ["a"], "type": "object"})))
    assert first is again
    assert compile_json_schema({"type": "string"}) is not first


def test_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(answer_schema, "_CACHE_SIZE", 3)
    for minimum in range(10):
        compile_json_schema({"type": "integer", "minimum": minimum})
    assert len(answer_schema._compiled) <= 3


# --- state size ------------------------------------------------------------------------------------


def test_state_size_is_compact_utf8_json() -> None:
    assert STATE_SNAPSHOT_LIMIT_BYTES == 64 * 1024
    assert check_state_size({"a": [1, 2]}) == len(b'{"a":[1,2]}')
    assert check_state_size({"é": "ü"}) == len('{"é":"ü"}'.encode())


def test_state_at_the_limit_passes_and_one_byte_over_fails() -> None:
    overhead = len(b'{"k":""}')
    at_limit = {"k": "x" * (STATE_SNAPSHOT_LIMIT_BYTES - overhead)}
    assert check_state_size(at_limit) == STATE_SNAPSHOT_LIMIT_BYTES
    over = {"k": "x" * (STATE_SNAPSHOT_LIMIT_BYTES - overhead + 1)}
    with pytest.raises(PayloadTooLargeError) as info:
        check_state_size(over)
    err = info.value
    assert err.details["size_bytes"] == STATE_SNAPSHOT_LIMIT_BYTES + 1
    assert err.details["limit_bytes"] == STATE_SNAPSHOT_LIMIT_BYTES
    assert str(STATE_SNAPSHOT_LIMIT_BYTES + 1) in err.message and str(STATE_SNAPSHOT_LIMIT_BYTES) in err.message
    assert err.http_status == 413


def test_state_size_custom_limit_and_non_json_state() -> None:
    with pytest.raises(PayloadTooLargeError):
        check_state_size({"a": 1}, limit_bytes=4)
    with pytest.raises(BadRequestError):
        check_state_size({"a": {1, 2}})
    with pytest.raises(BadRequestError):
        check_state_size({"a": float("inf")})


@pytest.mark.parametrize(
    "json_schema",
    [
        {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string"},
        {"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "string"},
        {"type": "array", "prefixItems": [{"type": "string"}]},
        {"type": "object", "dependentRequired": {"a": ["b"]}},
        {"type": "object", "properties": {"x": {"type": "object", "dependentSchemas": {"a": {}}}}},
        {"type": "object", "unevaluatedProperties": False},
        {"type": "array", "items": {"unevaluatedItems": False}},
        {"$defs": {"p": {"prefixItems": [{"type": "integer"}]}}, "$ref": "#/$defs/p"},
    ],
)
def test_2019_09_and_2020_12_schemas_are_refused_with_the_supported_drafts(json_schema: dict[str, Any]) -> None:
    with pytest.raises(BadRequestError) as err:
        check_schema_definition(json_schema=json_schema)
    assert "draft-04, draft-06 and draft-07" in err.value.message
    assert err.value.details["field"] == "jsonSchema"


@pytest.mark.parametrize(
    "json_schema",
    [
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "items": [{"type": "string"}]},
        {"$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"},  # a $ref into $defs is a plain pointer
        {"type": "object", "properties": {"prefixItems": {"type": "string"}}},  # a property name, not a keyword
        {"type": "object", "dependencies": {"a": ["b"]}},
    ],
)
def test_draft_07_schemas_and_defs_refs_are_accepted(json_schema: dict[str, Any]) -> None:
    check_schema_definition(json_schema=json_schema)


def test_defs_ref_is_enforced() -> None:
    schema = {"$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"}
    assert validate_answer(3, json_schema=schema) == 3
    with pytest.raises(ValidationFailedError):
        validate_answer("x", json_schema=schema)
