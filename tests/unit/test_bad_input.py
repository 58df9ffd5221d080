"""Bad input is a 4xx in the API's error shape, decided before any work, and changes nothing
(issue 18): deep JSON, non-UTF-8 and non-JSON bodies, self-referencing and ReDoS schemas, forged page
tokens, long state-edit paths, loose numbers and unknown channels; the local HTTP adapter's refusals;
and the OpenAPI declaring what the resolver can answer on every route."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest

from baton.adapters.dynamo_items import is_start_key
from baton.api.contract import ALWAYS
from baton.domain import schema_limits
from baton.domain.answer_schema import check_schema_definition, validate_answer
from baton.domain.fields import MAX_JSON_DEPTH, json_text_depth, json_value_depth
from baton.domain.state_edits import MAX_PATH_SEGMENTS, apply_state_edits
from baton.errors import BadRequestError, ValidationFailedError
from baton.local.http_adapter import to_proxy_event
from baton.services.core import Core
from tests.unit.conftest import LOCAL_TOKEN

TOKEN = LOCAL_TOKEN  # the `app` fixture's (tests/unit/conftest.py)
CREATE = {"sessionId": "sess-1", "prompt": "Pick one"}


def _call(app: Any, method: str, path: str, data: bytes, content_type: str = "application/json") -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}"} | ({"Content-Type": content_type} if content_type else {})
    result = app.resolve(to_proxy_event(method, path, headers, data, "127.0.0.1"), None)
    return result["statusCode"], json.loads(result["body"])


def _snapshot(core: Core) -> Any:
    store: Any = core.store
    return copy.deepcopy((store.runs, store.interactions, store.events, store.messages, store.waits))


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


ROUTES = [
    ("POST", "/api/v1/interrupts"),
    ("POST", "/api/runs/r1/questions"),
    ("POST", "/api/runs/r1/interactions/i1/answer"),
    ("POST", "/api/v1/interrupts/i1/resume"),
    ("POST", "/api/runs"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_json_nested_1000_deep_is_a_400_on_every_json_route(app: Any, core: Core, method: str, path: str) -> None:
    before = _snapshot(core)
    status, body = _call(app, method, path, ('{"state": ' + _deep(1000) + "}").encode())
    assert (status, body["error"]) == (400, "bad_request")
    assert body["limit"] == MAX_JSON_DEPTH and "message" in body
    assert _snapshot(core) == before


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        (b'{"sessionId": "s\xff"}', "application/json"),  # not UTF-8
        ('{"sessionId": "s"}'.encode("utf-16"), "application/json"),  # UTF-16 with its BOM
        (b'{"sessionId": "s"}', "multipart/form-data"),  # no boundary, and not JSON anyway
        (b"sessionId=s", "application/x-www-form-urlencoded"),
        (b'{"sessionId": "s"}', "application/json; charset=utf-16"),
    ],
)
def test_bodies_that_are_not_utf8_json_are_a_415_in_the_error_shape(
    app: Any, core: Core, data: bytes, content_type: str
) -> None:
    before = _snapshot(core)
    status, body = _call(app, "POST", "/api/v1/interrupts", data, content_type)
    assert (status, body["error"]) == (415, "unsupported_media_type")
    assert isinstance(body["message"], str)
    assert _snapshot(core) == before


def test_json_with_a_charset_and_without_a_content_type_still_works(app: Any) -> None:
    status, _ = _call(app, "POST", "/api/v1/interrupts", json.dumps(CREATE).encode(), "application/json; charset=UTF-8")
    assert status == 201
    status, _ = _call(app, "POST", "/api/v1/interrupts", json.dumps({**CREATE, "key": "k2"}).encode(), "")
    assert status == 201


@pytest.mark.parametrize(
    ("json_schema", "status", "error"),
    [
        ({"$ref": "#"}, 400, "bad_request"),
        (
            {"definitions": {"a": {"allOf": [{"$ref": "#/definitions/a"}]}}, "$ref": "#/definitions/a"},
            400,
            "bad_request",
        ),
        ({"type": "string", "minLength": -1}, 400, "bad_request"),
        ({"type": "array", "maxItems": 1.5}, 400, "bad_request"),
        ({"type": "number", "multipleOf": 0}, 400, "bad_request"),
        ({"type": "strng"}, 400, "bad_request"),
        # a default that does not match is the schema's fault (RE2 answers it at once: test_linear_patterns.py)
        ({"type": "string", "pattern": "^(a+)+$", "default": "a" * 26 + "!"}, 400, "bad_request"),
        ({"type": "string", "pattern": "^(a)\\1$"}, 422, "validation_failed"),
        ({"type": "string", "pattern": "^(?=a)a$"}, 422, "validation_failed"),
        ({"type": "string", "pattern": "^(?<!b)a$"}, 422, "validation_failed"),
        ({"type": "object", "patternProperties": {"(?!x)": {}}}, 422, "validation_failed"),
        ({"type": "string", "pattern": "(("}, 400, "bad_request"),
        ({"enum": [1], "description": "x" * (schema_limits.MAX_SCHEMA_BYTES + 1)}, 400, "bad_request"),
    ],
)
def test_json_schemas_are_checked_at_creation(
    app: Any, core: Core, json_schema: dict[str, Any], status: int, error: str
) -> None:
    before = _snapshot(core)
    got, body = _call(app, "POST", "/api/v1/interrupts", json.dumps({**CREATE, "jsonSchema": json_schema}).encode())
    assert (got, body["error"]) == (status, error), body
    assert body["field"] == "jsonSchema"
    assert _snapshot(core) == before


@pytest.mark.timeout(60)  # a bound on a hang (each takes hours or more in `re`), not a timing
@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("^(a+)+$", "a" * 50_000 + "!"),
        ("^(a|aa)*$", "a" * 50_000 + "!"),
        ("^\\d*\\d*\\d*\\d*$", "1" * 50_000 + "!"),
        ("^(?:" + "a?" * 300 + ")" + "a" * 300 + "$", "a" * 299),
    ],
)
def test_patterns_that_backtrack_in_re_are_accepted_and_run_in_linear_time(pattern: str, text: str) -> None:
    # RE2 (baton/domain/linear_patterns.py) runs them in time linear in the text: no size budget either.
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": pattern}}}
    check_schema_definition(None, schema)
    with pytest.raises(ValidationFailedError) as mismatch:
        validate_answer({"v": text}, json_schema=schema)
    assert (mismatch.value.details["path"], mismatch.value.details["rule"]) == ("$.v", "pattern")


def test_a_bounded_definition_reference_is_not_a_cycle() -> None:
    tree = {
        "definitions": {
            "node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/definitions/node"}}},
            }
        },
        "$ref": "#/definitions/node",
    }
    check_schema_definition(None, tree)
    assert validate_answer({"kids": [{"kids": []}]}, json_schema=tree) == {"kids": [{"kids": []}]}


def test_state_edit_paths_and_values_have_limits() -> None:
    long_path = ".".join(["a"] * (MAX_PATH_SEGMENTS + 1)) + "=1"
    with pytest.raises(ValidationFailedError, match="segments"):
        apply_state_edits({}, [long_path])
    with pytest.raises(ValidationFailedError, match="longer than"):
        apply_state_edits({}, ["a" * 2000 + "=1"])
    with pytest.raises(ValidationFailedError, match="nested deeper"):
        apply_state_edits({}, ["a=" + _deep(1500)])
    assert apply_state_edits({}, ["a.b=[[1]]"]) == {"a": {"b": [[1]]}}


def test_deep_state_and_schemas_are_refused_on_the_hosted_door_too() -> None:
    from baton.domain.interrupt_spec import InterruptSpec

    deep: Any = {}
    for _ in range(MAX_JSON_DEPTH + 5):
        deep = {"x": deep}
    with pytest.raises(BadRequestError, match="nested deeper"):
        InterruptSpec(session_id="s", prompt="p", state=deep)
    with pytest.raises(BadRequestError, match="nested deeper"):
        InterruptSpec(session_id="s", prompt="p", json_schema=deep)


def _token(raw: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(raw).encode()).decode()


@pytest.mark.parametrize(
    "token",
    [
        "not-base64!",
        _token({"k": ["PK"], "f": ["pending", None]}),
        _token({"k": {f"K{n}": n for n in range(20)}, "f": ["pending", None]}),
        _token({"k": None, "f": ["pending", None], "p": -1}),
    ],
)
def test_forged_page_tokens_are_a_400_before_the_store(app: Any, core: Core, token: str) -> None:
    status, body = _call(app, "GET", f"/api/v1/interrupts?next={token}", b"")
    assert (status, body["error"], body["field"]) == (400, "bad_request", "next")


@pytest.mark.parametrize("timeout", [True, "1000", "1e3", 1.5])
def test_timeout_ms_must_be_a_number(app: Any, core: Core, timeout: Any) -> None:
    before = _snapshot(core)
    status, body = _call(app, "POST", "/api/v1/interrupts", json.dumps({**CREATE, "timeoutMs": timeout}).encode())
    assert (status, body["error"]) == (422, "validation_failed")
    assert _snapshot(core) == before


def test_await_timeout_seconds_must_be_a_number(app: Any) -> None:
    status, body = _call(app, "POST", "/api/runs/r1/await", json.dumps({"timeout_seconds": "10"}).encode())
    assert (status, body["error"]) == (422, "validation_failed")


def test_questions_refuse_unknown_notify_channels_as_interrupts_do(app: Any, core: Core) -> None:
    ask = {"node": "draft", "question": "DB?", "notify": ["console", "pager"]}
    before = _snapshot(core)
    status, body = _call(app, "POST", "/api/runs/r1/questions", json.dumps(ask).encode())
    assert (status, body["error"]) == (422, "validation_failed")
    assert "pager" in body["message"]
    status, body = _call(app, "POST", "/api/v1/interrupts", json.dumps({**CREATE, "notify": ["pager"]}).encode())
    assert (status, body["error"]) == (422, "validation_failed")
    assert _snapshot(core) == before


def test_depth_is_measured_without_recursion() -> None:
    assert json_text_depth('{"a": "[[[[", "b": [1, {"c": []}]}') == 4
    assert json_text_depth(_deep(100_000)) == MAX_JSON_DEPTH + 1
    value: Any = []
    for _ in range(10_000):
        value = [value]
    assert json_value_depth(value) == MAX_JSON_DEPTH + 1


def test_every_route_declares_what_the_resolver_answers_before_it_runs(app: Any) -> None:
    spec = json.loads(app.get_openapi_json_schema(title="t", version="1"))
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            declared = {int(s) for s in operation["responses"]}
            assert set(ALWAYS) <= declared, f"{method.upper()} {path} declares {sorted(declared)}"
            for status in declared - {200, 201, 202}:
                content = operation["responses"][str(status)]["content"]["application/json"]
                assert content["schema"]["$ref"].endswith("/ErrorBody"), (method, path, status)


def test_the_dynamo_store_accepts_only_its_own_start_keys() -> None:
    own = {"PK": {"S": "RUN#r1"}, "SK": {"S": "INT#1"}, "GSI2PK": {"S": "interrupt#pending"}, "GSI2SK": {"S": "r1#t#1"}}
    assert is_start_key(own, with_index=True)
    assert not is_start_key(own, with_index=False)
    assert not is_start_key({**own, "GSI2SK": {"N": "1"}}, with_index=True)
    assert not is_start_key({**own, "PK": {"S": ""}}, with_index=True)
    assert not is_start_key({"PK": {"S": "x"}, "SK": {"S": "x" * 2000}}, with_index=False)
