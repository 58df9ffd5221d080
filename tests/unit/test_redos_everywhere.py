"""Issue 29 item 4: the ReDoS guard sees every `pattern` and `patternProperties` key wherever the schema
document holds it, not only on the keywords' paths. A `$ref` may point at any object (a made-up key, a
definition's child, `default`), and fastjsonschema compiles and runs whatever it reaches; one such
pattern with a 27-character default froze creation for seconds, doubling per character."""

from __future__ import annotations

import copy
import json
import time
from typing import Any

import pytest

from baton.domain import schema_limits
from baton.domain.answer_schema import check_schema_definition, validate_answer
from baton.domain.interrupt_spec import InterruptSpec
from baton.errors import ValidationFailedError
from baton.local.http_adapter import to_proxy_event
from baton.services.core import Core
from tests.unit.conftest import LOCAL_TOKEN

TOKEN = LOCAL_TOKEN  # the `app` fixture's (tests/unit/conftest.py)
CREATE = {"sessionId": "sess-1", "prompt": "Pick one"}
EXPONENTIAL = {"type": "string", "pattern": "^(a+)+$"}
# Short enough that the unguarded regex answers in well under a second (it doubles per character).
SUBJECT = "a" * 20 + "!"

# (name, schema, JSON pointer of the refused pattern): every one passed the old guard.
BYPASSES: list[tuple[str, dict[str, Any], str]] = [
    ("$ref", {"$ref": "#/x", "x": EXPONENTIAL}, "#/x/pattern"),
    ("allOf", {"allOf": [{"$ref": "#/shared/s"}], "shared": {"s": EXPONENTIAL}}, "#/shared/s/pattern"),
    (
        "patternProperties",
        {"$ref": "#/x", "x": {"type": "object", "patternProperties": {"^(x+)+$": {}}}},
        "#/x/patternProperties/^(x+)+$",
    ),
    (
        "definitions child",
        {"definitions": {"a": {"type": "object", "inner": EXPONENTIAL}}, "$ref": "#/definitions/a/inner"},
        "#/definitions/a/inner/pattern",
    ),
    ("default", {"$ref": "#/x", "x": EXPONENTIAL, "default": SUBJECT}, "#/x/pattern"),
    ("items list", {"type": "array", "items": [{"$ref": "#/more/0"}], "more": [EXPONENTIAL]}, "#/more/0/pattern"),
]
IDS = [name for name, _, _ in BYPASSES]


def _create(app: Any, json_schema: dict[str, Any]) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    data = json.dumps({**CREATE, "jsonSchema": json_schema}).encode()
    result = app.resolve(to_proxy_event("POST", "/api/v1/interrupts", headers, data, "127.0.0.1"), None)
    return result["statusCode"], json.loads(result["body"])


@pytest.mark.parametrize(("name", "json_schema", "where"), BYPASSES, ids=IDS)
def test_a_pattern_reached_anywhere_is_a_422_naming_its_path_at_interrupt_creation(
    app: Any, core: Core, name: str, json_schema: dict[str, Any], where: str
) -> None:
    store: Any = core.store
    before = copy.deepcopy((store.runs, store.interactions, store.events))
    status, body = _create(app, json_schema)
    assert (status, body["error"], body["field"], body["path"], body["rule"]) == (
        422,
        "validation_failed",
        "jsonSchema",
        where,
        "pattern",
    ), body
    assert "exponential time" in body["message"] and where in body["message"]
    assert copy.deepcopy((store.runs, store.interactions, store.events)) == before


@pytest.mark.parametrize(("name", "json_schema", "where"), BYPASSES, ids=IDS)
def test_the_hosted_door_and_the_resume_path_refuse_it_too(name: str, json_schema: dict[str, Any], where: str) -> None:
    with pytest.raises(ValidationFailedError) as created:
        InterruptSpec(session_id="s", prompt="p", json_schema=json_schema)
    assert created.value.details["path"] == where
    # A schema stored before the fix is refused on resume before its regex runs (not a mismatch at `$`).
    with pytest.raises(ValidationFailedError) as resumed:
        validate_answer(SUBJECT, json_schema=json_schema)
    assert resumed.value.details["path"] == where


def test_the_reported_27_character_default_is_refused_at_once() -> None:
    started = time.perf_counter()
    with pytest.raises(ValidationFailedError, match="nested quantifiers"):
        check_schema_definition(None, {"$ref": "#/x", "x": EXPONENTIAL, "default": "a" * 27 + "!"})
    assert time.perf_counter() - started < 2  # refusing is a parse; the match alone took ~4 s


def test_a_safe_pattern_behind_a_ref_works_and_its_subjects_get_the_size_budget(app: Any) -> None:
    schema = {"$ref": "#/x", "x": {"type": "string", "pattern": "^[a-z]+@[a-z]+$"}}
    status, body = _create(app, schema)
    assert status == 201, body
    assert validate_answer("ada@example", json_schema=schema) == "ada@example"
    with pytest.raises(ValidationFailedError) as mismatch:
        validate_answer("not an address", json_schema=schema)
    assert mismatch.value.details["path"] == "$"
    limit = schema_limits.pattern_subject_limit(schema)
    assert limit is not None and limit**3 <= schema_limits.PATTERN_STEP_BUDGET
    with pytest.raises(ValidationFailedError) as too_long:
        validate_answer("a" * (limit + 1), json_schema=schema)
    assert too_long.value.details["rule"] == "size"


def test_plain_data_named_pattern_is_not_mistaken_for_a_pattern() -> None:
    schema = {"type": "object", "properties": {"pattern": {"type": "string"}}, "default": {"pattern": "x"}}
    check_schema_definition(None, schema)
    assert validate_answer({"pattern": "(a+)+"}, json_schema=schema) == {"pattern": "(a+)+"}
    assert list(schema_limits.iter_patterns(schema)) == [("#/default/pattern", "x")]
