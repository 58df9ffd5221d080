"""The local stack's moto fast paths (baton.local.moto_speed): each gives moto's own answer, byte for byte,
and does less work than plain moto, counted (`fast=False` runs plain moto, showing the work it does)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import boto3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from moto import mock_aws
from moto.core import serialize
from moto.core.utils import get_service_model
from moto.dynamodb.comparisons import ConditionExpressionParser

from baton.local import moto_speed, moto_updates
from baton.local.moto_fixes import atomic_dynamodb_writes
from baton.local.moto_scale import dynamodb_at_scale
from baton.workflows.table import create_table_kwargs
from tests.counting import CallsCounted
from tests.dynamo_values import ATTRIBUTE_VALUES

TABLE = "speed-table"
ITEMS = 40
ATTRIBUTES = 8
# Every kind of attribute value, nested, with the edge cases of the wire form (empty strings, unicode,
# a binary, which goes through moto's own serializer).
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


@pytest.fixture
def db(aws_env: None) -> Iterator[Any]:
    with mock_aws(), atomic_dynamodb_writes(), dynamodb_at_scale():
        client = boto3.client("dynamodb")
        client.create_table(**create_table_kwargs(TABLE))
        yield client


def _raw_bodies(client: Any) -> list[bytes]:
    """Collects the raw response body of every call the client makes."""
    bodies: list[bytes] = []

    def capture(response_dict: dict[str, Any], **_: Any) -> None:
        bodies.append(bytes(response_dict["body"]))

    client.meta.events.register("before-parse.dynamodb.*", capture, unique_id="baton-test-capture")
    return bodies


def _reads(db: Any) -> None:
    key = {"PK": {"S": "RUN#tricky"}, "SK": {"S": "ITEM"}}
    db.get_item(TableName=TABLE, Key=key)
    db.query(
        TableName=TABLE,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": "RUN#tricky"}},
    )
    db.scan(TableName=TABLE)
    db.batch_get_item(RequestItems={TABLE: {"Keys": [key]}})
    db.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": key}}])
    db.update_item(
        TableName=TABLE,
        Key=key,
        UpdateExpression="SET #n = :n",
        ExpressionAttributeNames={"#n": "N"},
        ExpressionAttributeValues={":n": {"N": "-12.50"}},
        ReturnValues="ALL_NEW",
    )


def test_fast_item_values_write_the_same_bytes_as_moto(db: Any) -> None:
    db.put_item(TableName=TABLE, Item={"PK": {"S": "RUN#tricky"}, "SK": {"S": "ITEM"}, **TRICKY})
    plain = _raw_bodies(db)
    _reads(db)
    db.meta.events.unregister("before-parse.dynamodb.*", unique_id="baton-test-capture")
    fast_before = moto_speed.FAST_VALUES[0]
    with moto_speed.fast_attribute_values():
        fast = _raw_bodies(db)
        _reads(db)
    assert moto_speed.FAST_VALUES[0] > fast_before  # the fast path was taken
    assert len(fast) == len(plain) == 6
    assert fast == plain


def _serialized(result: dict[str, Any]) -> str:
    operation = get_service_model("dynamodb").operation_model("GetItem")
    serializer = serialize.get_serializer_class("dynamodb", "json")(
        operation_model=operation, pretty_print=False, value_picker=serialize.XFormedAttributePicker()
    )
    return str(serializer.serialize(result)["body"])


@settings(max_examples=150, deadline=None)
@given(item=st.dictionaries(st.text(min_size=1, max_size=4), ATTRIBUTE_VALUES, min_size=1, max_size=4))
def test_any_attribute_value_serializes_as_moto_does(item: dict[str, Any]) -> None:
    plain = _serialized({"Item": item})
    with moto_speed.fast_attribute_values():
        fast = _serialized({"Item": item})
    assert fast == plain


def _picked() -> CallsCounted:
    """How many times moto's serializer asked its attribute picker for a value."""
    return CallsCounted((serialize.AttributePicker, "__call__"))


@pytest.mark.parametrize("fast", [False, True])
def test_a_query_response_does_not_pick_every_member_of_every_value(db: Any, fast: bool) -> None:
    for n in range(ITEMS):
        extra = {f"a{k}": {"S": f"value {k}"} for k in range(ATTRIBUTES)}
        db.put_item(TableName=TABLE, Item={"PK": {"S": "RUN#many"}, "SK": {"S": f"INT#{n:03d}"}, **extra})
    with ExitStack() as stack:
        if fast:
            stack.enter_context(moto_speed.fast_attribute_values())
        picked = stack.enter_context(_picked())
        found = db.query(
            TableName=TABLE,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": "RUN#many"}},
        )["Items"]
    assert len(found) == ITEMS
    values = ITEMS * (ATTRIBUTES + 2)
    if fast:
        assert picked.count < 20  # the output structure's own members, whatever the items hold
    else:
        assert picked.count >= 10 * values  # plain moto: every member of every value


def _lexed() -> CallsCounted:
    """How many nodes moto's condition parser lexed."""
    return CallsCounted((ConditionExpressionParser, "_lex_one_node"))


def _conditional_put(db: Any, sk: str, status: str) -> bool:
    try:
        db.put_item(
            TableName=TABLE,
            Item={"PK": {"S": "RUN#cond"}, "SK": {"S": sk}, "status": {"S": status}},
            ConditionExpression="attribute_not_exists(PK) OR #s = :pending",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":pending": {"S": "pending"}},
        )
    except db.exceptions.ConditionalCheckFailedException:
        return False
    return True


@pytest.mark.parametrize("fast", [False, True])
def test_a_condition_expression_is_lexed_once_and_still_decides(db: Any, fast: bool) -> None:
    with ExitStack() as stack:
        if fast:
            stack.enter_context(moto_speed.cached_condition_lexing())
        assert _conditional_put(db, "INT#1", "pending")  # the item did not exist
        lexed = stack.enter_context(_lexed())
        assert _conditional_put(db, "INT#1", "answered")  # it was pending
        assert not _conditional_put(db, "INT#1", "answered")  # it is answered: the condition refuses
        assert _conditional_put(db, "INT#2", "pending")  # another item: allowed
    if fast:
        assert lexed.count == 0  # the same text: its tokens were kept
    else:
        assert lexed.count > 3 * 10  # plain moto lexes the whole text on every call


def test_handler_methods_are_listed_once_per_class_and_follow_changes(db: Any, monkeypatch: Any) -> None:
    from moto.core import responses
    from moto.dynamodb.responses import DynamoHandler

    calls = []
    real_getmembers = inspect.getmembers

    def getmembers(obj: Any, predicate: Any = None) -> Any:
        calls.append(obj)
        return real_getmembers(obj, predicate)

    monkeypatch.setattr(inspect, "getmembers", getmembers)
    plain = responses.method_names_from_class(DynamoHandler)
    calls.clear()
    with moto_speed.cached_handler_methods():
        for _ in range(5):
            db.describe_table(TableName=TABLE)
        assert calls.count(DynamoHandler) == 1  # plain moto lists them on every request
        assert responses.method_names_from_class(DynamoHandler) == plain
        monkeypatch.setattr(DynamoHandler, "baton_added", lambda self: None, raising=False)
        assert "baton_added" in responses.method_names_from_class(DynamoHandler)
    calls.clear()
    db.describe_table(TableName=TABLE)
    assert calls.count(DynamoHandler) == 1  # closed: moto's own function again


def _sized() -> CallsCounted:
    """How many attribute sizes moto computed (top-level `DynamoType.size` calls and their recursion)."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    return CallsCounted((DynamoType, "size"))


WIDE = 40  # attributes of one item


@pytest.mark.parametrize("fast", [False, True])
def test_an_item_is_sized_once_per_attribute_and_the_limit_still_holds(db: Any, fast: bool) -> None:
    wide = {"PK": {"S": "RUN#wide"}, "SK": {"S": "ITEM"}, **{f"a{k:02d}": {"S": f"value {k}"} for k in range(WIDE)}}
    # moto's limit is on the sum of names and values: 405,000 bytes
    at_limit = {"PK": {"S": "RUN#big"}, "SK": {"S": "A"}, "blob": {"S": "x" * (405000 - 20)}}
    over = {"PK": {"S": "RUN#big"}, "SK": {"S": "B"}, "blob": {"S": "x" * 405000}, "z": {"S": "z"}}
    with ExitStack() as stack:
        if fast:
            stack.enter_context(moto_speed.item_size_once())
        with _sized() as sized:
            db.put_item(TableName=TABLE, Item=wide)
        db.put_item(TableName=TABLE, Item=at_limit)
        with pytest.raises(db.exceptions.ClientError, match="Item size has exceeded the maximum allowed size"):
            db.put_item(TableName=TABLE, Item=over)
    assert db.get_item(TableName=TABLE, Key={"PK": wide["PK"], "SK": wide["SK"]})["Item"] == wide
    assert "Item" in db.get_item(TableName=TABLE, Key={"PK": at_limit["PK"], "SK": at_limit["SK"]})
    assert "Item" not in db.get_item(TableName=TABLE, Key={"PK": over["PK"], "SK": over["SK"]})
    attributes = WIDE + 2
    if fast:
        assert sized.count <= 4 * attributes  # once as it is built (and the few whole-item sizes moto takes)
    else:
        assert sized.count >= attributes * (attributes - 1) // 2  # every earlier attribute, at each one


def _tokenized() -> CallsCounted:
    """How many update expressions moto tokenized (the first step of each of its parses)."""
    from moto.dynamodb.parsing.tokens import ExpressionTokenizer

    return CallsCounted((ExpressionTokenizer, "make_list"))


def _park(db: Any, sk: str) -> None:
    """A parked wait as the park stores it (what `_release` then releases)."""
    parked = {"status": {"S": "parked"}, "version": {"N": "1"}, "GSI1PK": {"S": "PARKED"}}
    db.put_item(TableName=TABLE, Item={"PK": {"S": "RUN#upd"}, "SK": {"S": sk}, **parked})


def _release(db: Any, sk: str) -> dict[str, Any]:
    """The release's shape: one Update in a transaction, then the item as stored."""
    key = {"PK": {"S": "RUN#upd"}, "SK": {"S": sk}}
    db.transact_write_items(
        TransactItems=[
            {
                "Update": {
                    "TableName": TABLE,
                    "Key": key,
                    "UpdateExpression": "SET #st = :new, #ver = #ver + :one REMOVE GSI1PK",
                    "ConditionExpression": "#st = :parked",
                    "ExpressionAttributeNames": {"#st": "status", "#ver": "version"},
                    "ExpressionAttributeValues": {
                        ":new": {"S": "released"},
                        ":parked": {"S": "parked"},
                        ":one": {"N": "1"},
                    },
                }
            }
        ]
    )
    return dict(db.get_item(TableName=TABLE, Key=key, ConsistentRead=True)["Item"])


@pytest.mark.parametrize("fast", [False, True])
def test_an_update_expression_is_parsed_once_and_still_applies(db: Any, fast: bool) -> None:
    rounds = 5
    for n in range(rounds):
        _park(db, f"WAIT#{n}")
    with ExitStack() as stack:
        if fast:
            stack.enter_context(moto_updates.cached_update_parsing())
        with _tokenized() as tokenized:
            stored = [_release(db, f"WAIT#{n}") for n in range(rounds)]
        with pytest.raises(db.exceptions.TransactionCanceledException):
            _release(db, "WAIT#0")  # released: the condition still decides
        for _ in range(2):  # a text that does not parse fails each time, as in moto
            with pytest.raises(db.exceptions.ClientError, match="Invalid UpdateExpression"):
                db.update_item(TableName=TABLE, Key={"PK": {"S": "RUN#upd"}, "SK": {"S": "X"}}, UpdateExpression="SET")
    for item in stored:
        assert item["status"] == {"S": "released"} and item["version"] == {"N": "2"} and "GSI1PK" not in item
    if fast:
        assert tokenized.count == 1  # the one text, parsed once for every request and the backend
    else:
        assert tokenized.count == 2 * rounds  # plain moto: the handler's parse and the backend's, each time


def _item_copies() -> CallsCounted:
    """How many stored items moto (or a fix) deep-copied."""
    from moto.dynamodb.models.dynamo_type import Item

    return CallsCounted((Item, "__deepcopy__"))


@pytest.mark.parametrize("scaled", [False, True])
def test_an_update_copies_the_stored_item_once_for_its_rollback(aws_env: None, scaled: bool) -> None:
    with mock_aws(), atomic_dynamodb_writes(), ExitStack() as stack:
        if scaled:
            stack.enter_context(dynamodb_at_scale())
        db = boto3.client("dynamodb")
        db.create_table(**create_table_kwargs(TABLE))
        for n in range(ITEMS):
            _park(db, f"WAIT#{n}")
        with _item_copies() as copies:
            stored = _release(db, "WAIT#0")
        assert stored["status"] == {"S": "released"}
    if scaled:
        assert copies.count == 1  # the transaction's rollback copy; no old image for a stream it has not
    else:
        assert copies.count >= ITEMS + 1  # plain moto: the whole table, and the item's old image again


def test_a_table_with_a_stream_still_gets_the_old_image(aws_env: None) -> None:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    with mock_aws(), atomic_dynamodb_writes(), dynamodb_at_scale():
        db = boto3.client("dynamodb")
        spec = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
        db.create_table(**create_table_kwargs(TABLE), StreamSpecification=spec)
        _park(db, "WAIT#0")
        with _item_copies() as copies:
            _release(db, "WAIT#0")
        shard = dynamodb_backends[DEFAULT_ACCOUNT_ID][db.meta.region_name].tables[TABLE].stream_shard
        records = [r.record for r in shard.items]
    assert copies.count == 2  # the rollback copy and the stream's old image
    modify = [r for r in records if r["eventName"] == "MODIFY"]
    assert len(modify) == 1
    assert modify[0]["dynamodb"]["OldImage"]["status"] == {"S": "parked"}
    assert modify[0]["dynamodb"]["NewImage"]["status"] == {"S": "released"}


def _shape_checks() -> CallsCounted:
    """How many times moto ran its clause-count check of an update expression (at every node of it)."""
    from moto.dynamodb.parsing.validators import ActionCountValidator

    return CallsCounted((ActionCountValidator, "verify_action_counts"))


def _set(db: Any, sk: str, name: str) -> None:
    db.update_item(
        TableName=TABLE,
        Key={"PK": {"S": "RUN#upd"}, "SK": {"S": sk}},
        UpdateExpression="SET #a = :v",
        ExpressionAttributeNames={"#a": name},
        ExpressionAttributeValues={":v": {"S": "x"}},
    )


@pytest.mark.parametrize("fast", [False, True])
def test_an_update_expression_is_checked_once_and_still_refused(db: Any, fast: bool) -> None:
    rounds = 5
    for n in range(rounds):
        _park(db, f"WAIT#{n}")
    with ExitStack() as stack:
        if fast:
            stack.enter_context(moto_updates.update_expressions_once())
        with _shape_checks() as checks:
            stored = [_release(db, "WAIT#0")]
            first = checks.count  # one per node of the expression's tree
            stored += [_release(db, f"WAIT#{n}") for n in range(1, rounds)]
        for _ in range(2):  # the same text and names updating a key attribute: refused every time
            with pytest.raises(db.exceptions.ClientError, match="Cannot update attribute SK"):
                _set(db, "WAIT#0", "SK")
        _set(db, "WAIT#0", "note")  # the same text with other names: checked for those, allowed
    for item in stored:
        assert item["status"] == {"S": "released"} and item["version"] == {"N": "2"} and "GSI1PK" not in item
    assert db.get_item(TableName=TABLE, Key={"PK": {"S": "RUN#upd"}, "SK": {"S": "WAIT#0"}})["Item"]["note"] == {
        "S": "x"
    }
    assert first > 1
    if fast:
        assert checks.count == first  # the first release's; the same (tree, names, keys) is not checked again
    else:
        assert checks.count == rounds * first  # plain moto: every node, every time


def _condition_parses() -> CallsCounted:
    """How many condition expressions moto parsed (each parse is followed by an evaluation)."""
    return CallsCounted((ConditionExpressionParser, "parse"), counts=lambda parser: bool(parser.condition_expression))


def _guarded_puts(db: Any, sks: list[str]) -> None:
    db.transact_write_items(
        TransactItems=[
            {
                "Put": {
                    "TableName": TABLE,
                    "Item": {"PK": {"S": "RUN#txn"}, "SK": {"S": sk}, "status": {"S": "answered"}},
                    "ConditionExpression": "attribute_not_exists(PK) OR #s = :pending",
                    "ExpressionAttributeNames": {"#s": "status"},
                    "ExpressionAttributeValues": {":pending": {"S": "pending"}},
                }
            }
            for sk in sks
        ]
    )


@pytest.mark.parametrize("scaled", [False, True])
def test_a_transaction_decides_each_condition_once(aws_env: None, scaled: bool) -> None:
    with mock_aws(), atomic_dynamodb_writes(), ExitStack() as stack:
        if scaled:
            stack.enter_context(dynamodb_at_scale())
        db = boto3.client("dynamodb")
        db.create_table(**create_table_kwargs(TABLE))
        db.put_item(TableName=TABLE, Item={"PK": {"S": "RUN#txn"}, "SK": {"S": "B"}, "status": {"S": "pending"}})
        with _condition_parses() as parses:
            _guarded_puts(db, ["A", "B", "C"])  # new, pending, new: all allowed
        with pytest.raises(db.exceptions.TransactionCanceledException) as refused:
            _guarded_puts(db, ["D", "B"])  # B is answered now: the whole transaction is refused
        codes = [r["Code"] for r in refused.value.response["CancellationReasons"]]
        stored = db.query(
            TableName=TABLE,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": "RUN#txn"}},
            ConsistentRead=True,
        )["Items"]
    assert codes == ["None", "ConditionalCheckFailed"]
    assert sorted(i["SK"]["S"] for i in stored) == ["A", "B", "C"]  # D rolled back with it
    if scaled:
        assert parses.count == 2 * 3  # the request handler's check of its placeholders, the transaction's
    else:
        assert parses.count == 3 * 3  # plain moto: and again by put_item, on the item it reads again
