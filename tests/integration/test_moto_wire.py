"""The local stack's moto wire paths (baton.local.moto_wire) and the kept condition parses
(baton.local.moto_speed.cached_condition_parsing): each gives moto's own answer, byte for byte, and does
less work than plain moto, counted (`fast=False` runs plain moto, showing the work it does)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import boto3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from moto import mock_aws
from moto.core import parse
from moto.core.utils import get_service_model
from moto.dynamodb.models import utilities
from moto.dynamodb.models.dynamo_type import DynamoType

from baton.local import moto_speed, moto_wire
from baton.local.moto_fixes import atomic_dynamodb_writes
from baton.local.moto_scale import dynamodb_at_scale
from baton.workflows.table import create_table_kwargs
from tests.counting import CallsCounted
from tests.dynamo_values import ATTRIBUTE_VALUES

TABLE = "wire-table"
ITEMS = 30
ATTRIBUTES = 8
# Every kind of attribute value, nested, with the wire form's edge cases (a binary goes through moto's own code).
TRICKY = {
    "S": {"S": 'héllo \u2603 "quoted"'},
    "empty": {"S": ""},
    "N": {"N": "-12.50"},
    "SS": {"SS": ["a", "b"]},
    "NS": {"NS": ["1", "2.5"]},
    "B": {"B": b"\x00\xffbinary"},
    "BS": {"BS": [b"x", b"y"]},
    "NULL": {"NULL": True},
    "BOOL": {"BOOL": False},
    "L": {"L": [{"S": "x"}, {"N": "1"}, {"M": {"deep": {"L": [{"BOOL": True}, {"B": b"\x01"}]}}}]},
    "M": {"M": {"a": {"S": "1"}, "b": {"M": {}}, "c": {"L": []}}},
}
KEY = {"PK": {"S": "RUN#tricky"}, "SK": {"S": "ITEM"}}


@pytest.fixture
def db(aws_env: None) -> Iterator[Any]:
    with mock_aws(), atomic_dynamodb_writes(), dynamodb_at_scale():
        client = boto3.client("dynamodb")
        client.create_table(**create_table_kwargs(TABLE))
        yield client


def _calls(db: Any) -> list[bytes]:
    """Writes and reads of every kind, conditional ones included, on a new table; the raw response body of each."""
    db.delete_table(TableName=TABLE)
    db.create_table(**create_table_kwargs(TABLE))
    run = "RUN#wire"
    bodies: list[bytes] = []

    def capture(response_dict: dict[str, Any], **_: Any) -> None:
        bodies.append(bytes(response_dict["body"]))

    db.meta.events.register("before-parse.dynamodb.*", capture, unique_id="baton-test-wire")
    key = {"PK": {"S": run}, "SK": {"S": "ITEM"}}
    try:
        db.put_item(TableName=TABLE, Item={**key, **TRICKY, "status": {"S": "pending"}})
        db.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": TABLE,
                        "Item": {**key, **TRICKY, "status": {"S": "answered"}, "answer": {"M": {"v": {"N": "2"}}}},
                        "ConditionExpression": "attribute_exists(PK) AND #s = :pending",
                        "ExpressionAttributeNames": {"#s": "status"},
                        "ExpressionAttributeValues": {":pending": {"S": "pending"}},
                    }
                },
                {"Put": {"TableName": TABLE, "Item": {"PK": {"S": run}, "SK": {"S": "MSG#1"}, **TRICKY}}},
            ]
        )
        with pytest.raises(db.exceptions.ConditionalCheckFailedException):
            db.put_item(
                TableName=TABLE,
                Item={**key, "status": {"S": "again"}},
                ConditionExpression="#s = :pending",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={":pending": {"S": "pending"}},
            )
        db.get_item(TableName=TABLE, Key=key)
        db.query(
            TableName=TABLE,
            KeyConditionExpression="PK = :pk AND SK >= :from",
            FilterExpression="#s <> :turn",
            ExpressionAttributeNames={"#s": "SK"},
            ExpressionAttributeValues={":pk": {"S": run}, ":from": {"S": "I"}, ":turn": {"S": "TURN"}},
        )
        db.update_item(
            TableName=TABLE,
            Key=key,
            UpdateExpression="SET #n = :n, #l = list_append(#l, :more)",
            ConditionExpression="attribute_exists(PK)",
            ExpressionAttributeNames={"#n": "N", "#l": "L"},
            ExpressionAttributeValues={":n": {"N": "7"}, ":more": {"L": [{"S": "y"}, {"B": b"\x02"}]}},
            ReturnValues="ALL_NEW",
        )
        db.batch_get_item(RequestItems={TABLE: {"Keys": [key]}})
        db.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": key}}])
        db.scan(TableName=TABLE)
    finally:
        db.meta.events.unregister("before-parse.dynamodb.*", unique_id="baton-test-wire")
    return bodies


def test_the_fast_paths_give_the_same_bytes_and_store_the_same_items_as_moto(db: Any) -> None:
    plain = _calls(db)
    fast_before, parses_before = moto_wire.FAST_REQUEST_VALUES[0], moto_speed.PARSES[0]
    with moto_wire.moto_wire_paths(), moto_speed.moto_fast_paths():  # every fast path the stack opens
        fast = _calls(db)
        again = _calls(db)  # the conditions from what was kept
    assert moto_wire.FAST_REQUEST_VALUES[0] > fast_before  # the fast paths were taken
    assert moto_speed.PARSES[0] > parses_before
    assert len(plain) == len(fast) == len(again) == 9
    assert fast == plain
    assert again == plain


# what a client may send that is not the plain form: moto's own parser decides what it means
_ODD = st.one_of(
    st.just({"S": None}),
    st.just({"S": 5}),
    st.just({"BOOL": "true"}),
    st.just({"X": "unknown member"}),
    st.just({"S": "a", "N": "1"}),
    st.just({}),
)
_ITEMS = st.dictionaries(st.text(min_size=1, max_size=4), st.one_of(ATTRIBUTE_VALUES, _ODD), min_size=1, max_size=4)


def _parsed(body: dict[str, Any]) -> Any:
    operation = get_service_model("dynamodb").operation_model("PutItem")
    raw = json.dumps(body, default=lambda b: base64.b64encode(b).decode()).encode()
    return parse.JSONParser(operation).parse({"body": raw})  # type: ignore[typeddict-item]


@settings(max_examples=150, deadline=None)
@given(item=_ITEMS)
def test_any_request_value_parses_as_moto_does(item: dict[str, Any]) -> None:
    body = {"TableName": TABLE, "Item": item, "ExpressionAttributeValues": {":v": next(iter(item.values()))}}
    plain = _parsed(body)
    with moto_wire.fast_request_values():
        fast = _parsed(body)
    assert fast == plain
    assert json.dumps(fast, default=repr) == json.dumps(plain, default=repr)  # the same member order too


def _walked() -> CallsCounted:
    """How many shapes moto's request parser walked."""
    return CallsCounted((parse.RequestParser, "_parse_shape"))


@pytest.mark.parametrize("fast", [False, True])
def test_a_request_is_not_walked_member_by_member(db: Any, fast: bool) -> None:
    nested = {"M": {"v": {"S": "value"}, "w": {"N": "1"}}}
    item = {"PK": {"S": "RUN#walk"}, "SK": {"S": "ITEM"}, **{f"a{k}": nested for k in range(ATTRIBUTES)}}
    with ExitStack() as stack:
        if fast:
            stack.enter_context(moto_wire.fast_request_values())
        walked = stack.enter_context(_walked())
        db.put_item(TableName=TABLE, Item=item)
    assert db.get_item(TableName=TABLE, Key={"PK": {"S": "RUN#walk"}, "SK": {"S": "ITEM"}})["Item"] == item
    if fast:
        assert walked.count <= 2 * len(item) + 5  # the input, then each attribute's name and value, no deeper
    else:
        assert walked.count >= 8 * ATTRIBUTES  # plain moto: every member of every value, all the way down


@settings(max_examples=150, deadline=None)
@given(item=st.dictionaries(st.text(min_size=1, max_size=4), ATTRIBUTE_VALUES, min_size=1, max_size=4))
def test_any_result_becomes_the_plain_values_moto_makes(item: dict[str, Any]) -> None:
    result = {"Items": [{k: DynamoType(v) for k, v in item.items()}], "Count": 1, "Nested": [[{"x": None, "y": 1.5}]]}
    plain = utilities.dynamo_to_dict(result)
    with moto_wire.fast_result_values():
        fast = utilities.dynamo_to_dict(result)
    assert fast == plain


@pytest.mark.parametrize("fast", [False, True])
def test_a_query_result_is_made_plain_by_type(db: Any, fast: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.dynamodb import responses

    for n in range(ITEMS):
        extra = {f"a{k}": {"M": {"v": {"S": f"value {k}"}}} for k in range(ATTRIBUTES)}
        db.put_item(TableName=TABLE, Item={"PK": {"S": "RUN#many"}, "SK": {"S": f"INT#{n:03d}"}, **extra})
    asked: list[Any] = []
    original = utilities.dynamo_to_dict

    def counted(obj: Any) -> Any:  # moto's own function, counted (the fast one falls back to it)
        asked.append(obj)
        return original(obj)

    monkeypatch.setattr(utilities, "dynamo_to_dict", counted)
    monkeypatch.setattr(responses, "dynamo_to_dict", counted)
    with ExitStack() as stack:
        if fast:
            stack.enter_context(moto_wire.fast_result_values())
        found = db.query(
            TableName=TABLE,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": "RUN#many"}},
        )["Items"]
    assert len(found) == ITEMS
    assert found[3]["a2"] == {"M": {"v": {"S": "value 2"}}}
    if fast:
        assert asked == []  # moto's own function never asked: every value was plain
    else:
        assert len(asked) >= ITEMS * ATTRIBUTES * 3  # plain moto asks every value, map and string


def _versioned_put(db: Any, sk: str, version: int, expected: int | None) -> bool:
    condition = {}
    if expected is not None:
        condition = {
            "ConditionExpression": "attribute_exists(PK) AND #ver = :expected",
            "ExpressionAttributeNames": {"#ver": "version"},
            "ExpressionAttributeValues": {":expected": {"N": str(expected)}},
        }
    try:
        db.put_item(
            TableName=TABLE,
            Item={"PK": {"S": "RUN#cond"}, "SK": {"S": sk}, "version": {"N": str(version)}},
            **condition,
        )
    except db.exceptions.ConditionalCheckFailedException:
        return False
    return True


@pytest.mark.parametrize("fast", [False, True])
def test_a_condition_is_parsed_once_and_still_decides(db: Any, fast: bool) -> None:
    with ExitStack() as stack:
        if fast:
            stack.enter_context(moto_speed.cached_condition_parsing())
        assert _versioned_put(db, "INT#1", 1, None)
        assert _versioned_put(db, "INT#2", 1, None)
        before = moto_speed.PARSES[0]
        assert _versioned_put(db, "INT#1", 2, 1)  # version 1: it wins
        assert not _versioned_put(db, "INT#1", 3, 1)  # it is at 2 now: the same condition refuses
        assert _versioned_put(db, "INT#2", 2, 1)  # another item at 1: the same condition allows
        assert not _versioned_put(db, "INT#9", 2, 1)  # no such item: attribute_exists refuses
        assert _versioned_put(db, "INT#1", 3, 2)  # other values: parsed anew, decided on them
        parsed = moto_speed.PARSES[0] - before
    versions = [
        db.get_item(TableName=TABLE, Key={"PK": {"S": "RUN#cond"}, "SK": {"S": sk}})["Item"]["version"]
        for sk in ("INT#1", "INT#2")
    ]
    assert versions == [{"N": "3"}, {"N": "2"}]
    if fast:
        assert parsed == 2  # the (text, names, values) seen: {":expected": 1} and {":expected": 2}
    else:
        assert parsed == 0  # plain moto: its parse is not counted, nothing is kept


def _refusals(db: Any) -> list[str]:
    item = {"PK": {"S": "RUN#names"}, "SK": {"S": "X"}}
    requests = [
        {"ConditionExpression": "attribute_not_exists(PK)", "ExpressionAttributeNames": {"#unused": "status"}},
        {
            "ConditionExpression": "#s = :v",
            "ExpressionAttributeNames": {"#s": "status"},
            "ExpressionAttributeValues": {":v": {"S": "x"}, ":unused": {"S": "y"}},
        },
        {
            "ConditionExpression": "#s = :v AND",
            "ExpressionAttributeNames": {"#s": "s"},
            "ExpressionAttributeValues": {":v": {"S": "x"}},
        },
    ]
    said = []
    for request in requests:
        with pytest.raises(Exception) as refused:  # whatever moto raises, a kept parse raises too
            db.put_item(TableName=TABLE, Item=item, **request)
        said.append(f"{type(refused.value).__name__}: {refused.value}")
    assert "Item" not in db.get_item(TableName=TABLE, Key=item)
    return said


def test_a_kept_parse_refuses_what_moto_refuses(db: Any) -> None:
    plain = _refusals(db)
    assert "unused in expressions: keys: {#unused}" in plain[0]
    with moto_speed.cached_condition_parsing():
        assert _refusals(db) == plain
        assert _refusals(db) == plain  # from what was kept


def _client_calls(db: Any) -> tuple[list[bytes], list[str]]:
    """The bodies botocore sent and what it parsed out of the answers, for calls of every kind."""
    sent: list[bytes] = []

    def capture(request: Any, **_: Any) -> None:  # a transaction's idempotency token is new each time
        sent.append(re.sub(rb'"ClientRequestToken": "[^"]+"', b'"ClientRequestToken": "-"', bytes(request.body)))

    db.meta.events.register("request-created.dynamodb.*", capture, unique_id="baton-test-sent")
    try:
        _calls(db)
        db.put_item(TableName=TABLE, Item={"PK": {"S": "RUN#odd"}, "SK": {"S": "X"}, "two": {"S": "a", "N": "1"}})
        got = [
            db.get_item(TableName=TABLE, Key={"PK": {"S": "RUN#wire"}, "SK": {"S": "ITEM"}}),
            db.query(
                TableName=TABLE,
                KeyConditionExpression="PK = :pk",
                ExpressionAttributeValues={":pk": {"S": "RUN#wire"}},
            ),
            db.scan(TableName=TABLE),
        ]
    finally:
        db.meta.events.unregister("request-created.dynamodb.*", unique_id="baton-test-sent")
    return sent, [json.dumps({k: v for k, v in r.items() if k != "ResponseMetadata"}, default=repr) for r in got]


def test_client_paths_send_and_read_what_botocore_does(db: Any) -> None:
    plain_sent, plain_read = _client_calls(db)
    before = moto_wire.FAST_CLIENT_VALUES[0]
    with moto_wire.fast_client_values():
        fast_sent, fast_read = _client_calls(db)
    assert moto_wire.FAST_CLIENT_VALUES[0] > before
    assert len(fast_sent) == len(plain_sent) > 10
    assert fast_sent == plain_sent
    assert fast_read == plain_read


def _sent_and_read(item: dict[str, Any]) -> tuple[bytes | str, str]:
    """What botocore's serializer (validation off: it would refuse the odd values first) sends for the item,
    or how it fails; and what its parser reads from an answer holding it."""
    from botocore.parsers import create_parser
    from botocore.serialize import create_serializer

    model = get_service_model("dynamodb")
    put = model.operation_model("PutItem")
    serializer = create_serializer("json", include_validation=False)
    try:
        body: bytes | str = serializer.serialize_to_request({"TableName": TABLE, "Item": item}, put)["body"]
    except (KeyError, TypeError) as failed:
        body = repr(failed)
    get = model.operation_model("GetItem")
    answer = json.dumps({"Item": item}, default=lambda b: base64.b64encode(b).decode()).encode()
    read = create_parser("json").parse({"body": answer, "headers": {}, "status_code": 200}, get.output_shape)
    return body, json.dumps(read, default=repr)


@settings(max_examples=150, deadline=None)
@given(item=_ITEMS)
def test_any_value_is_sent_and_read_as_botocore_does(item: dict[str, Any]) -> None:
    plain = _sent_and_read(item)
    with moto_wire.fast_client_values():
        fast = _sent_and_read(item)
    assert fast == plain


def _client_walks() -> CallsCounted:
    """How many shapes botocore's serializer and response parser walked."""
    from botocore.parsers import ResponseParser
    from botocore.serialize import JSONSerializer

    return CallsCounted((JSONSerializer, "_serialize"), (ResponseParser, "_parse_shape"))


@pytest.mark.parametrize("fast", [False, True])
def test_the_client_does_not_walk_every_member(db: Any, fast: bool) -> None:
    nested = {"M": {"v": {"S": "value"}, "w": {"L": [{"N": "1"}, {"BOOL": True}]}}}
    item = {"PK": {"S": "RUN#walk"}, "SK": {"S": "ITEM"}, **{f"a{k}": nested for k in range(ATTRIBUTES)}}
    with ExitStack() as stack:
        if fast:
            stack.enter_context(moto_wire.fast_client_values())
        walked = stack.enter_context(_client_walks())
        db.put_item(TableName=TABLE, Item=item)
        got = db.get_item(TableName=TABLE, Key={"PK": {"S": "RUN#walk"}, "SK": {"S": "ITEM"}})["Item"]
    assert got == item
    if fast:
        assert walked.count <= 4 * len(item) + 20  # each attribute's name and value, sent and read
    else:
        assert walked.count >= 2 * 10 * ATTRIBUTES  # every member of every value, both ways
