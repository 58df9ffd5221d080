"""The local stack's moto fixes (baton.local.moto_fixes): each measured against plain moto, so a test
shows both that the fix is needed and that it holds. `fixed=False` runs plain moto."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.dynamodb.models.table import Table

from baton.local import persist
from baton.local.moto_fixes import atomic_dynamodb_writes, models_untracked, sns_messages_unkept
from baton.local.moto_scale import dynamodb_at_scale
from baton.workflows.table import create_table_kwargs
from tests.counting import CallsCounted

TABLE = "fixes-table"
OTHER_RUNS = 300  # items in other partitions: plain moto walks them, the fixed one does not


@pytest.fixture
def db(aws_env: None, request: pytest.FixtureRequest) -> Iterator[Any]:
    fixed = getattr(request, "param", True)
    with mock_aws(), ExitStack() as fixes:
        if fixed:
            fixes.enter_context(atomic_dynamodb_writes())
            fixes.enter_context(dynamodb_at_scale())
        client = boto3.client("dynamodb")
        client.create_table(**create_table_kwargs(TABLE))
        yield client


def _s(value: str) -> dict[str, str]:
    return {"S": value}


def _put(db: Any, pk: str, sk: str, **extra: str) -> None:
    db.put_item(TableName=TABLE, Item={"PK": _s(pk), "SK": _s(sk), **{k: _s(v) for k, v in extra.items()}})


def _fill(db: Any) -> None:
    for n in range(OTHER_RUNS):
        _put(db, f"RUN#other-{n}", "RUN", GSI2PK="run#running", GSI2SK=f"other-{n}")
    _put(db, "RUN#mine", "RUN")
    _put(db, "RUN#mine", "INT#1", GSI1PK="PENDING#question", GSI1SK="2026#1")
    _put(db, "RUN#mine", "INT#2", GSI1PK="PENDING#question", GSI1SK="2026#2")


class _Walked:
    """How many items moto's query looked at (the length of what `Table.all_items` gave it)."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def __enter__(self) -> _Walked:
        self._original = Table.__dict__["all_items"]

        def all_items(table: Any) -> Any:
            items = self._original(table)
            self.sizes.append(len(items))
            return items

        Table.all_items = all_items  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        Table.all_items = self._original  # type: ignore[method-assign]


def _pending_ids(db: Any) -> list[str]:
    found = db.query(
        TableName=TABLE,
        IndexName="pending",
        KeyConditionExpression="GSI1PK = :pk",
        ExpressionAttributeValues={":pk": _s("PENDING#question")},
    )["Items"]
    return [item["SK"]["S"] for item in found]


@pytest.mark.parametrize("db", [True, False], ids=["fixed", "plain-moto"], indirect=True)
def test_a_table_query_looks_at_its_partition_only(db: Any, request: pytest.FixtureRequest) -> None:
    _fill(db)
    with _Walked() as walked:
        found = db.query(
            TableName=TABLE, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": _s("RUN#mine")}
        )["Items"]
    assert [i["SK"]["S"] for i in found] == ["INT#1", "INT#2", "RUN"]
    if request.node.callspec.id == "fixed":
        assert walked.sizes == [3]
    else:
        assert walked.sizes == [OTHER_RUNS + 3]  # plain moto walks (and sorts) the whole table


@pytest.mark.parametrize("db", [True, False], ids=["fixed", "plain-moto"], indirect=True)
def test_a_gsi_query_looks_at_its_index_partition_only(db: Any, request: pytest.FixtureRequest) -> None:
    _fill(db)
    _pending_ids(db)  # the first GSI query builds the index map (one walk)
    with _Walked() as walked:
        assert _pending_ids(db) == ["INT#1", "INT#2"]
    assert walked.sizes == ([2] if request.node.callspec.id == "fixed" else [OTHER_RUNS + 3])


def test_the_gsi_map_follows_every_kind_of_write(db: Any) -> None:
    _fill(db)
    assert _pending_ids(db) == ["INT#1", "INT#2"]
    # update_item changes the stored item in place: answered, it leaves the sparse index
    db.update_item(
        TableName=TABLE, Key={"PK": _s("RUN#mine"), "SK": _s("INT#1")}, UpdateExpression="REMOVE GSI1PK, GSI1SK"
    )
    assert _pending_ids(db) == ["INT#2"]
    db.update_item(
        TableName=TABLE,
        Key={"PK": _s("RUN#mine"), "SK": _s("INT#3")},
        UpdateExpression="SET GSI1PK = :pk, GSI1SK = :sk",
        ExpressionAttributeValues={":pk": _s("PENDING#question"), ":sk": _s("2026#0")},
    )
    assert _pending_ids(db) == ["INT#3", "INT#2"]
    db.delete_item(TableName=TABLE, Key={"PK": _s("RUN#mine"), "SK": _s("INT#2")})
    _put(db, "RUN#mine", "INT#3", GSI1PK="PENDING#interrupt", GSI1SK="2026#0")  # overwritten: moved index partition
    assert _pending_ids(db) == []
    db.transact_write_items(
        TransactItems=[
            {
                "Put": {
                    "TableName": TABLE,
                    "Item": {
                        "PK": _s("RUN#x"),
                        "SK": _s("INT#9"),
                        "GSI1PK": _s("PENDING#question"),
                        "GSI1SK": _s("2027"),
                    },
                }
            }
        ]
    )
    assert _pending_ids(db) == ["INT#9"]


class _TableCopies:
    """Counts deep copies of a whole moto Table."""

    def __init__(self) -> None:
        self.count = 0

    def __enter__(self) -> _TableCopies:
        def deepcopy(table: Any, memo: Any) -> Any:
            self.count += 1
            clone = Table.__new__(Table)
            memo[id(table)] = clone
            clone.__dict__.update({k: __import__("copy").deepcopy(v, memo) for k, v in table.__dict__.items()})
            return clone

        Table.__deepcopy__ = deepcopy  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc: object) -> None:
        del Table.__deepcopy__  # type: ignore[attr-defined]


def _transact_put(pk: str, sk: str, *, condition: str | None = None) -> dict[str, Any]:
    put: dict[str, Any] = {"TableName": TABLE, "Item": {"PK": _s(pk), "SK": _s(sk)}}
    if condition:
        put["ConditionExpression"] = condition
    return {"Put": put}


@pytest.mark.parametrize("db", [True, False], ids=["fixed", "plain-moto"], indirect=True)
def test_a_transaction_does_not_copy_the_table(db: Any, request: pytest.FixtureRequest) -> None:
    _fill(db)
    with _TableCopies() as copies:
        db.transact_write_items(TransactItems=[_transact_put("RUN#mine", "EVT#1"), _transact_put("RUN#mine", "MSG#1")])
    # plain moto deep-copies the whole table once per item of the transaction, and keeps no less
    assert copies.count == (0 if request.node.callspec.id == "fixed" else 2)


@pytest.mark.parametrize("db", [True, False], ids=["fixed", "plain-moto"], indirect=True)
def test_a_cancelled_transaction_leaves_every_item_as_it_was(db: Any) -> None:
    _fill(db)
    db.update_item(
        TableName=TABLE,
        Key={"PK": _s("RUN#mine"), "SK": _s("INT#1")},
        UpdateExpression="SET version = :v",
        ExpressionAttributeValues={":v": {"N": "1"}},
    )
    _pending_ids(db)
    before = db.scan(TableName=TABLE)["Items"]
    with pytest.raises(db.exceptions.TransactionCanceledException):
        db.transact_write_items(
            TransactItems=[
                _transact_put("RUN#mine", "EVT#1"),  # written, then rolled back
                {
                    "Update": {
                        "TableName": TABLE,
                        "Key": {"PK": _s("RUN#mine"), "SK": _s("INT#1")},
                        "UpdateExpression": "SET version = :v REMOVE GSI1PK",
                        "ExpressionAttributeValues": {":v": {"N": "2"}},
                    }
                },
                _transact_put("RUN#mine", "RUN", condition="attribute_not_exists(PK)"),  # fails
            ]
        )
    assert sorted(map(str, db.scan(TableName=TABLE)["Items"])) == sorted(map(str, before))
    assert _pending_ids(db) == ["INT#1", "INT#2"]


def test_reads_and_writes_from_many_threads_never_fail(db: Any) -> None:
    _fill(db)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for k in range(20):
                db.transact_write_items(TransactItems=[_transact_put(f"RUN#t{n}-{k}", "RUN")])
        except BaseException as err:
            errors.append(err)

    def read() -> None:
        try:
            for _ in range(20):
                _pending_ids(db)
                db.scan(TableName=TABLE, Limit=50)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(3)] + [
        threading.Thread(target=read) for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert db.scan(TableName=TABLE, Select="COUNT")["Count"] == OTHER_RUNS + 3 + 60


@pytest.mark.parametrize("in_process", [True, False], ids=["fixed", "plain-moto"])
def test_the_stacks_own_calls_reach_moto_without_a_socket(aws_env: None, in_process: bool) -> None:
    from botocore.config import Config
    from botocore.exceptions import EndpointConnectionError

    from baton.local.in_process import calls_in_process

    nobody_listens = "http://127.0.0.1:9"  # the discard port: a socket there is refused
    with mock_aws(), ExitStack() as fixes:
        if in_process:
            fixes.enter_context(calls_in_process(nobody_listens, "us-east-1"))
        client = boto3.client("dynamodb", endpoint_url=nobody_listens, config=Config(retries={"max_attempts": 1}))
        if in_process:
            client.create_table(**create_table_kwargs(TABLE))
            assert client.list_tables()["TableNames"] == [TABLE]
        else:
            with pytest.raises(EndpointConnectionError):
                client.list_tables()


@pytest.mark.parametrize("db", [True, False], ids=["fixed", "plain-moto"], indirect=True)
def test_a_read_never_runs_inside_a_write(db: Any, request: pytest.FixtureRequest) -> None:
    """A write is held midway (inside moto's table, after its checks); a scan from another thread must
    wait for it. Plain moto lets the scan walk the table meanwhile: the overlap that ends in
    "dictionary changed size during iteration" and a 500."""
    _fill(db)
    inside, release, scanned = threading.Event(), threading.Event(), threading.Event()
    put_item = Table.__dict__["put_item"]

    def held_put_item(table: Any, *args: Any, **kwargs: Any) -> Any:
        inside.set()
        release.wait(30)
        return put_item(table, *args, **kwargs)

    Table.put_item = held_put_item  # type: ignore[method-assign]
    try:
        writer = threading.Thread(target=_put, args=(db, "RUN#held", "RUN"))
        writer.start()
        assert inside.wait(30)
        reader = threading.Thread(target=lambda: (db.scan(TableName=TABLE, Limit=50), scanned.set()))
        reader.start()
        fixed = request.node.callspec.id == "fixed"
        overlapped = scanned.wait(1 if fixed else 30)
        release.set()
        writer.join(30)
        reader.join(30)
    finally:
        release.set()
        Table.put_item = put_item  # type: ignore[method-assign]
    assert scanned.is_set()
    assert overlapped is not fixed  # fixed: the scan waited for the write; plain moto: it ran inside it


# (key condition on SK, its values, which sort keys match it): every comparison moto's queries accept
_SORT_CONDITIONS: list[tuple[str, dict[str, Any], Any]] = [
    ("SK >= :a", {":a": "PEND#"}, lambda sk: sk >= "PEND#"),
    ("SK > :a", {":a": "PEND#2"}, lambda sk: sk > "PEND#2"),
    ("SK < :a", {":a": "EVT#0003"}, lambda sk: sk < "EVT#0003"),
    ("SK <= :a", {":a": "EVT#0003"}, lambda sk: sk <= "EVT#0003"),
    ("SK = :a", {":a": "RUN"}, lambda sk: sk == "RUN"),
    ("SK BETWEEN :a AND :b", {":a": "EVT#0398", ":b": "PEND#1"}, lambda sk: "EVT#0398" <= sk <= "PEND#1"),
    ("begins_with(SK, :a)", {":a": "PEND#"}, lambda sk: sk.startswith("PEND#")),
    ("begins_with(SK, :a)", {":a": "WAIT"}, lambda sk: sk.startswith("WAIT")),
]


def _sort_query(db: Any, condition: str, values: dict[str, Any], forward: bool = True) -> list[str]:
    found = db.query(
        TableName=TABLE,
        KeyConditionExpression=f"PK = :pk AND {condition}",
        ExpressionAttributeValues={":pk": _s("RUN#hist"), **{k: _s(v) for k, v in values.items()}},
        ScanIndexForward=forward,
        ConsistentRead=True,
    )
    return [item["SK"]["S"] for item in found["Items"]]


def _write_every_way(db: Any, stored: set[str]) -> None:
    """Puts, deletes, an update that creates an item, a batch and a transaction (one that commits, one
    that is cancelled): `stored` follows what should be in the partition."""
    _put(db, "RUN#hist", "PEND#4")
    stored.add("PEND#4")
    db.delete_item(TableName=TABLE, Key={"PK": _s("RUN#hist"), "SK": _s("PEND#1")})
    stored.discard("PEND#1")
    db.update_item(
        TableName=TABLE,
        Key={"PK": _s("RUN#hist"), "SK": _s("PEND#0")},
        UpdateExpression="SET answered = :no",
        ExpressionAttributeValues={":no": _s("no")},
    )
    stored.add("PEND#0")
    db.batch_write_item(
        RequestItems={
            TABLE: [
                {"PutRequest": {"Item": {"PK": _s("RUN#hist"), "SK": _s("WAIT#2")}}},
                {"DeleteRequest": {"Key": {"PK": _s("RUN#hist"), "SK": _s("EVT#0001")}}},
            ]
        }
    )
    stored.add("WAIT#2")
    stored.discard("EVT#0001")
    db.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": TABLE, "Item": {"PK": _s("RUN#hist"), "SK": _s("PEND#5")}}},
            {"Delete": {"TableName": TABLE, "Key": {"PK": _s("RUN#hist"), "SK": _s("PEND#2")}}},
        ]
    )
    stored.add("PEND#5")
    stored.discard("PEND#2")
    with pytest.raises(db.exceptions.TransactionCanceledException):
        db.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": TABLE, "Item": {"PK": _s("RUN#hist"), "SK": _s("PEND#6")}}},
                {"Delete": {"TableName": TABLE, "Key": {"PK": _s("RUN#hist"), "SK": _s("PEND#3")}}},
                {
                    "Put": {
                        "TableName": TABLE,
                        "Item": {"PK": _s("RUN#hist"), "SK": _s("RUN")},
                        "ConditionExpression": "attribute_not_exists(PK)",
                    }
                },
            ]
        )


@pytest.mark.parametrize("db", [True, False], ids=["fixed", "plain-moto"], indirect=True)
def test_the_sort_key_order_follows_every_kind_of_write(db: Any) -> None:
    stored = {f"EVT#{n:04d}" for n in range(5)} | {"EVT#0398", "EVT#0399", "PEND#1", "PEND#2", "PEND#3", "RUN"}
    for sk in sorted(stored):
        _put(db, "RUN#hist", sk)
    for condition, values, _ in _SORT_CONDITIONS:
        _sort_query(db, condition, values)  # the partition's order is kept from here on
    _write_every_way(db, stored)
    for condition, values, matches in _SORT_CONDITIONS:
        expected = sorted(sk for sk in stored if matches(sk))
        assert _sort_query(db, condition, values) == expected, condition
        assert _sort_query(db, condition, values, forward=False) == expected[::-1], condition


def _saved(path: Any) -> list[str]:
    saved = persist.load(path)
    assert saved is not None
    return sorted(json.dumps(item, sort_keys=True, default=repr) for item in saved.items)


def _now(db: Any) -> list[str]:
    return sorted(json.dumps(item, sort_keys=True) for item in db.scan(TableName=TABLE, ConsistentRead=True)["Items"])


def test_each_write_journals_only_what_it_wrote(db: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The local stack's saver (baton/local/persist.py) keeps each item's text; the write hooks of
    `dynamodb_at_scale` tell it which items changed, and the lock's write hook (`after_each_write`) appends
    them to the journal before the request returns. Snapshot + journal must hold the table as it is after
    every kind of write, having encoded only the items written."""
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    _fill(db)
    encoded: list[Any] = []
    item_text = persist._item_text

    def counted(item: Any) -> str:
        encoded.append(item)
        return item_text(item)

    monkeypatch.setattr(persist, "_item_text", counted)
    saver = persist.Persister(tmp_path / persist.DATA_FILE, TABLE, "token")
    saver.start()
    try:
        assert len(encoded) == OTHER_RUNS + 3  # the snapshot at start: every item
        assert _saved(saver.path) == _now(db)
        stored = {"PEND#1", "PEND#2", "PEND#3", "RUN", "EVT#0001"}
        for sk in sorted(stored):
            encoded.clear()
            _put(db, "RUN#hist", sk)
            assert len(encoded) == 1  # journaled by the write itself, before it returned
            assert _saved(saver.path) == _now(db)
        encoded.clear()
        _write_every_way(db, stored)  # puts, deletes, an update, a batch, transactions (one cancelled)
        assert _saved(saver.path) == _now(db)
        assert len(encoded) <= 12  # the items those writes named, not the table's 300-odd
        lines = saver.journal.appended
        _now(db)
        db.query(TableName=TABLE, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": _s("RUN#hist")})
        assert saver.journal.appended == lines  # reads journal nothing
    finally:
        saver.stop()
        saver.close()
    assert _saved(saver.path) == _now(db)
    assert saver.journal.path.stat().st_size == 0  # the stop's snapshot holds it all


def _item_copies() -> CallsCounted:
    """How many stored items moto (or the fix) deep-copied."""
    from moto.dynamodb.models.dynamo_type import Item

    return CallsCounted((Item, "__deepcopy__"))


@pytest.mark.parametrize("db", [True, False], ids=["fixed", "plain-moto"], indirect=True)
def test_a_transaction_copies_only_what_it_changes_in_place(db: Any, request: pytest.FixtureRequest) -> None:
    _fill(db)
    _put(db, "RUN#mine", "EVT#0", note="old")
    before = sorted(map(str, db.scan(TableName=TABLE)["Items"]))
    replace_and_delete = [
        _transact_put("RUN#mine", "INT#1"),  # over the stored item
        {"Delete": {"TableName": TABLE, "Key": {"PK": _s("RUN#mine"), "SK": _s("EVT#0")}}},
    ]
    failing = _transact_put("RUN#mine", "RUN", condition="attribute_not_exists(PK)")
    with _item_copies() as copies, pytest.raises(db.exceptions.TransactionCanceledException):
        db.transact_write_items(TransactItems=[*replace_and_delete, failing])
    assert sorted(map(str, db.scan(TableName=TABLE)["Items"])) == before  # rolled back: the same items
    with _item_copies() as committed:
        db.transact_write_items(TransactItems=replace_and_delete)
    assert _pending_ids(db) == ["INT#2"]  # the replaced item left the pending index
    assert "Item" not in db.get_item(TableName=TABLE, Key={"PK": _s("RUN#mine"), "SK": _s("EVT#0")})
    if request.node.callspec.id == "fixed":
        assert copies.count == committed.count == 0  # a Put or a Delete leaves the stored item as it was
    else:
        assert committed.count >= OTHER_RUNS  # plain moto copies the whole table for its rollback


class _HeldCopy:
    """moto's UpdateItem handler deep-copies the stored item before it calls the backend: hold it there."""

    def __init__(self) -> None:
        import copy

        self.inside, self.release = threading.Event(), threading.Event()
        self._deepcopy = copy.deepcopy

    def deepcopy(self, value: Any, *args: Any) -> Any:
        if value is not None and not self.inside.is_set():  # the handler's copy of the stored item
            self.inside.set()
            self.release.wait(30)
        return self._deepcopy(value, *args)


@pytest.mark.parametrize("lock", ["whole-request", "backend-only"])
def test_an_update_items_copy_never_overlaps_a_transaction(
    aws_env: None, lock: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An UpdateItem is held at its handler's copy of the stored item (outside every backend method); a
    transaction that changes that item in place from another thread must wait for it. With the lock on
    the backend's methods only, the transaction runs inside the copy: the overlap that failed a local
    e2e run with "dictionary changed size during iteration" in moto's `DynamoHandler.update_item`."""
    from moto.dynamodb import responses
    from moto.dynamodb.responses import DynamoHandler

    with mock_aws(), atomic_dynamodb_writes(), dynamodb_at_scale():
        if lock == "backend-only":
            unlocked = DynamoHandler.__dict__["call_action"].__wrapped__
            monkeypatch.setattr(DynamoHandler, "call_action", unlocked)
        db = boto3.client("dynamodb")
        db.create_table(**create_table_kwargs(TABLE))
        _put(db, "RUN#mine", "INT#1", status="pending")
        held = _HeldCopy()
        monkeypatch.setattr(responses, "copy", held)
        update = {"Key": {"PK": _s("RUN#mine"), "SK": _s("INT#1")}, "TableName": TABLE}
        updater = threading.Thread(
            target=db.update_item,
            kwargs={**update, "UpdateExpression": "SET a = :v", "ExpressionAttributeValues": {":v": _s("1")}},
        )
        updater.start()
        assert held.inside.wait(30)
        done = threading.Event()
        transacted = {**update, "UpdateExpression": "SET b = :v", "ExpressionAttributeValues": {":v": _s("2")}}
        writer = threading.Thread(
            target=lambda: (db.transact_write_items(TransactItems=[{"Update": transacted}]), done.set())
        )
        writer.start()
        overlapped = done.wait(0.5 if lock == "whole-request" else 30)
        held.release.set()
        updater.join(30)
        writer.join(30)
        item = db.get_item(TableName=TABLE, Key=update["Key"])["Item"]
    assert done.is_set() and item["a"] == _s("1") and item["b"] == _s("2")
    assert overlapped is (lock == "backend-only")  # whole request locked: the transaction waited


@pytest.mark.usefixtures("aws_env")
@pytest.mark.parametrize("fixed", [True, False], ids=["fixed", "plain-moto"])
def test_an_item_written_over_is_freed(fixed: bool) -> None:
    """Plain moto keeps every model it ever made in its class's `instances_tracked` (its dashboard's list):
    an item written over stays in memory for the life of the process. Fixed, it is freed; the table reads
    the same."""
    import gc
    import weakref

    from moto.dynamodb.models.dynamo_type import Item

    with mock_aws(), ExitStack() as fixes:
        if fixed:
            fixes.enter_context(models_untracked())
        client = boto3.client("dynamodb")
        client.create_table(**create_table_kwargs(TABLE))
        tracked_before = len(Item.instances_tracked)  # type: ignore[attr-defined]
        key = {"PK": _s("RUN#r"), "SK": _s("RUN")}
        client.put_item(TableName=TABLE, Item={**key, "n": {"N": "0"}})
        [table] = [t for t in _backend_tables() if t.name == TABLE]
        first = weakref.ref(table.get_item(_dynamo(key["PK"]), _dynamo(key["SK"])))
        for n in range(1, 20):
            client.put_item(TableName=TABLE, Item={**key, "n": {"N": str(n)}})
        gc.collect()
        assert client.get_item(TableName=TABLE, Key=key)["Item"]["n"] == {"N": "19"}
        tracked = len(Item.instances_tracked) - tracked_before  # type: ignore[attr-defined]
        if fixed:
            assert first() is None and tracked == 0
        else:
            assert first() is not None and tracked >= 20


def _backend_tables() -> list[Table]:
    from moto.dynamodb.models import dynamodb_backends

    return [t for regions in dynamodb_backends.values() for b in regions.values() for t in b.tables.values()]


def _dynamo(value: dict[str, str]) -> Any:
    from moto.dynamodb.models.dynamo_type import DynamoType

    return DynamoType(value)


@pytest.mark.parametrize("fixed", [True, False], ids=["fixed", "plain-moto"])
def test_a_topic_keeps_no_delivered_message(aws_env: None, fixed: bool) -> None:
    """Plain moto keeps every message published to a topic; the fixed one delivers each and keeps none."""
    from moto.sns.models import sns_backends

    with mock_aws(), ExitStack() as fixes:
        if fixed:
            fixes.enter_context(sns_messages_unkept())
        sns, sqs = boto3.client("sns"), boto3.client("sqs")
        topic = sns.create_topic(Name="fixes-topic")["TopicArn"]
        queue = sqs.create_queue(QueueName="fixes-queue")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn, Attributes={"RawMessageDelivery": "true"})
        for n in range(5):
            sns.publish(TopicArn=topic, Message=f"message {n}")
        delivered = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
        assert sorted(m["Body"] for m in delivered) == [f"message {n}" for n in range(5)]
        [kept] = [
            b.topics[topic].sent_notifications for r in sns_backends.values() for b in r.values() if topic in b.topics
        ]
        assert len(kept) == (0 if fixed else 5)
