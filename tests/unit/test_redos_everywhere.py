"""Issue 29 items 3 and 4: every `pattern` and `patternProperties` key, wherever the schema document holds
it, runs in RE2 (linear time) or is refused with a 422 naming it. A `$ref` may point at any object (a
made-up key, a definition's child, `default`), and fastjsonschema compiles whatever it reaches: `^(a+)+$`
reached that way with a 27-character default froze creation for 4 s in Python's `re`, doubling per
character. Now it is accepted and answered at once, and no regex of the schema's reaches `re`."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from baton.domain import schema_limits
from baton.domain.answer_schema import check_schema_definition, validate_answer
from baton.domain.interrupt_spec import InterruptSpec
from baton.errors import BadRequestError, ValidationFailedError
from baton.local.http_adapter import to_proxy_event
from baton.services.core import Core
from baton.workflows.input_schema import check_input
from tests.unit.conftest import LOCAL_TOKEN

TOKEN = LOCAL_TOKEN  # the `app` fixture's (tests/unit/conftest.py)
CREATE = {"sessionId": "sess-1", "prompt": "Pick one"}
EXPONENTIAL = {"type": "string", "pattern": "^(a+)+$"}
# The reported resume: 4 s in `re`, doubling per character (hours at 40).
SUBJECT = "a" * 27 + "!"


def _places(inner: dict[str, Any], pattern: str) -> list[tuple[str, dict[str, Any], str]]:
    """(name, schema, JSON pointer of the pattern): each way the old guard was bypassed (issue 29 item 4)."""
    return [
        ("$ref", {"$ref": "#/x", "x": inner}, "#/x/pattern"),
        ("allOf", {"allOf": [{"$ref": "#/shared/s"}], "shared": {"s": inner}}, "#/shared/s/pattern"),
        (
            "patternProperties",
            {"$ref": "#/x", "x": {"type": "object", "patternProperties": {pattern: {}}}},
            f"#/x/patternProperties/{pattern}",
        ),
        (
            "definitions child",
            {"definitions": {"a": {"type": "object", "inner": inner}}, "$ref": "#/definitions/a/inner"},
            "#/definitions/a/inner/pattern",
        ),
        ("items list", {"type": "array", "items": [{"$ref": "#/more/0"}], "more": [inner]}, "#/more/0/pattern"),
    ]


PLACES = _places(EXPONENTIAL, "^(a+)+$")
# What RE2 cannot run (a backreference), in the same places: refused, naming where.
BACKREFERENCE = "^(a)\\1$"
UNRUNNABLE = _places({"type": "string", "pattern": BACKREFERENCE}, BACKREFERENCE)
IDS = [name for name, _, _ in PLACES]


@pytest.fixture
def python_re_compiles(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every pattern Python's `re` compiles meanwhile (the module's one entry, `re._compile`); one of the
    schemas' exponential patterns is refused outright, so the code before the fix fails here, not hangs."""
    compiled: list[str] = []
    real = re._compile  # type: ignore[attr-defined]

    def recording(pattern: Any, flags: Any) -> Any:
        text = pattern if isinstance(pattern, str) else str(pattern)
        compiled.append(text)
        if "(a+)+" in text or "(x+)+" in text:
            raise AssertionError(f"the schema's pattern {text!r} reached Python's re")
        return real(pattern, flags)

    monkeypatch.setattr(re, "_compile", recording)
    yield compiled


def _create(app: Any, json_schema: dict[str, Any]) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    data = json.dumps({**CREATE, "jsonSchema": json_schema}).encode()
    result = app.resolve(to_proxy_event("POST", "/api/v1/interrupts", headers, data, "127.0.0.1"), None)
    return result["statusCode"], json.loads(result["body"])


def _resume(app: Any, interrupt_id: str, value: Any) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    data = json.dumps({"input": value}).encode()
    event = to_proxy_event("POST", f"/api/v1/interrupts/{interrupt_id}/resume", headers, data, "127.0.0.1")
    result = app.resolve(event, None)
    return result["statusCode"], json.loads(result["body"])


def test_the_reported_27_character_resume_is_answered_by_re2(app: Any, python_re_compiles: list[str]) -> None:
    status, created = _create(app, {"$ref": "#/x", "x": EXPONENTIAL})
    assert status == 201, created
    status, body = _resume(app, created["id"], SUBJECT)
    assert (status, body["error"], body["path"], body["rule"]) == (422, "validation_failed", "$", "pattern"), body
    status, body = _resume(app, created["id"], "aaaa")
    assert status == 200, body
    assert not [p for p in python_re_compiles if "a+" in p]


@pytest.mark.parametrize(("name", "json_schema", "where"), PLACES, ids=IDS)
def test_a_pattern_reached_anywhere_runs_in_re2(
    app: Any, name: str, json_schema: dict[str, Any], where: str, python_re_compiles: list[str]
) -> None:
    status, body = _create(app, json_schema)
    assert status == 201, body
    if name == "patternProperties":  # no key matches: allowed, after a search in RE2
        assert validate_answer({"x" * 40 + "!": 1}, json_schema=json_schema) == {"x" * 40 + "!": 1}
        return
    with pytest.raises(ValidationFailedError) as mismatch:
        validate_answer([SUBJECT] if name == "items list" else SUBJECT, json_schema=json_schema)
    assert mismatch.value.details["rule"] == "pattern"


@pytest.mark.parametrize(("name", "json_schema", "where"), UNRUNNABLE, ids=IDS)
def test_a_pattern_re2_cannot_run_is_a_422_naming_its_path_wherever_it_is(
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
    assert "RE2" in body["message"] and "no backreferences" in body["message"] and where in body["message"]
    assert copy.deepcopy((store.runs, store.interactions, store.events)) == before
    # The hosted door, and the resume path for a schema stored before (refused before anything runs).
    with pytest.raises(ValidationFailedError) as created:
        InterruptSpec(session_id="s", prompt="p", json_schema=json_schema)
    assert created.value.details["path"] == where
    with pytest.raises(ValidationFailedError) as resumed:
        validate_answer("aa", json_schema=json_schema)
    assert resumed.value.details["path"] == where


def test_the_27_character_default_is_checked_by_re2_at_creation(python_re_compiles: list[str]) -> None:
    with pytest.raises(BadRequestError, match="default does not satisfy the schema"):
        check_schema_definition(None, {"$ref": "#/x", "x": EXPONENTIAL, "default": SUBJECT})
    check_schema_definition(None, {"$ref": "#/x", "x": EXPONENTIAL, "default": "aaa"})


def test_a_required_name_no_pattern_allows_is_refused_by_re2_while_compiling(python_re_compiles: list[str]) -> None:
    # fastjsonschema searched the `patternProperties` keys with `re` for it, at creation: hours at 40 characters.
    schema = {
        "type": "object",
        "additionalProperties": False,
        "patternProperties": {"^(a+)+$": {}},
        "required": ["a" * 40 + "!"],
    }
    with pytest.raises(BadRequestError, match="required but not allowed"):
        check_schema_definition(None, schema)
    allowed = {**schema, "required": ["a" * 40]}
    check_schema_definition(None, allowed)
    assert validate_answer({"a" * 40: 1}, json_schema=allowed) == {"a" * 40: 1}
    with pytest.raises(ValidationFailedError):
        validate_answer({"a" * 40: 1, "b": 2}, json_schema=allowed)


@pytest.mark.parametrize(
    "draft",
    [
        "http://json-schema.org/draft-04/schema#",
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-07/schema#",
        None,
    ],
)
def test_every_draft_runs_its_patterns_in_re2(draft: str | None, python_re_compiles: list[str]) -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"name": EXPONENTIAL},
        "patternProperties": {"^(x+)+$": {"type": "integer"}},
    }
    if draft is not None:
        schema["$schema"] = draft
    check_schema_definition(None, schema)
    with pytest.raises(ValidationFailedError) as name:
        validate_answer({"name": SUBJECT}, json_schema=schema)
    assert (name.value.details["path"], name.value.details["rule"]) == ("$.name", "pattern")
    with pytest.raises(ValidationFailedError) as key:
        validate_answer({"xxx": "not an integer"}, json_schema=schema)
    assert key.value.details["rule"] == "type"
    assert validate_answer({"x" * 40 + "!": "any", "name": "aa"}, json_schema=schema)


def test_dollar_is_the_end_of_the_text_as_in_json_schema() -> None:
    # ECMA-262's `$` (no `m` flag) does not match before a final newline; Python's did (fastjsonschema
    # rewrote it as `\Z`); RE2's is the end of the text.
    schema = {"type": "string", "pattern": "^ok$"}
    assert validate_answer("ok", json_schema=schema) == "ok"
    with pytest.raises(ValidationFailedError):
        validate_answer("ok\n", json_schema=schema)


def test_a_workflows_input_schema_runs_its_patterns_in_re2_too(python_re_compiles: list[str]) -> None:
    schema = {"type": "object", "properties": {"branch": EXPONENTIAL}}
    check_input("demo", {"branch": "aaa"}, schema)
    with pytest.raises(ValidationFailedError, match=r"input\.branch"):
        check_input("demo", {"branch": SUBJECT}, schema)


def test_plain_data_named_pattern_is_not_mistaken_for_a_pattern() -> None:
    schema = {"type": "object", "properties": {"pattern": {"type": "string"}}, "default": {"pattern": "x"}}
    check_schema_definition(None, schema)
    assert validate_answer({"pattern": "(a+)+"}, json_schema=schema) == {"pattern": "(a+)+"}
    assert list(schema_limits.iter_patterns(schema)) == [("#/default/pattern", "x")]


def test_a_schemas_patterns_together_have_a_memory_budget() -> None:
    # A bounded repeat of a large Unicode class is some 180,000 RE2 instructions: a few are fine, six are not.
    def names(count: int) -> dict[str, Any]:
        patterns = {f"p{n}": {"type": "string", "pattern": f"^[\\p{{L}} ]{{1,{150 + n}}}$"} for n in range(count)}
        return {"type": "object", "properties": patterns}

    check_schema_definition(None, names(2))
    assert validate_answer({"p0": "Ada Lovelace"}, json_schema=names(2)) == {"p0": "Ada Lovelace"}
    with pytest.raises(ValidationFailedError, match="RE2 instructions") as refused:
        check_schema_definition(None, names(6))
    assert refused.value.details["rule"] == "pattern"


def test_text_with_a_lone_surrogate_is_matched_as_u_fffd() -> None:
    # Refused at the door, but a stored default or state may hold one: RE2 takes UTF-8 only.
    schema = {"type": "string", "pattern": "^a.$"}
    assert validate_answer("a\ud800", json_schema=schema) == "a\ud800"
    with pytest.raises(ValidationFailedError):
        validate_answer("b\ud800", json_schema=schema)
