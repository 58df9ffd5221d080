"""The cost bench's capacity meter (bench/parts/capacity.py): DynamoDB's sizing rules, and the units it
finds for real calls made through botocore against moto's table (a put, an update that moves an item
into an index, a transaction, reads of each consistency)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from baton.workflows.table import create_table_kwargs

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "parts"))
from capacity import CapacityMeter, index_writes, item_size, number_size, read_units, write_units


def test_item_sizes_follow_dynamodbs_rules() -> None:
    assert item_size({"PK": {"S": "RUN#a"}}) == 2 + 5
    assert item_size({"n": {"N": "123"}}) == 1 + 3  # 3 significant digits: 2 bytes, plus 1
    assert number_size("1000") == number_size("1") == 2  # trailing zeroes are trimmed
    assert item_size({"m": {"M": {"a": {"N": "1"}}}}) == 1 + 3 + (1 + 1 + 2)  # map: 3, 1 per element
    assert item_size({"l": {"L": [{"BOOL": True}, {"NULL": True}]}}) == 1 + 3 + 2 * (1 + 1)
    assert item_size({"é": {"S": "日本"}}) == 2 + 6  # UTF-8 bytes, names and values
    assert item_size(None) == 0


def test_units_round_up_per_kilobyte_and_per_four() -> None:
    assert write_units(0, 1024) == 1
    assert write_units(0, 1025) == 2
    assert write_units(3000, 10) == 3  # the larger of before and after
    assert write_units(0, 0) == 1  # a delete of nothing still costs a unit
    assert read_units(4096, consistent=True) == 1
    assert read_units(4097, consistent=True) == 2
    assert read_units(10, consistent=False) == 0.5


def test_index_writes_count_entering_leaving_and_moving() -> None:
    base = {"PK": {"S": "RUN#a"}, "SK": {"S": "INT#1"}}
    pending = base | {"GSI1PK": {"S": "PENDING#question"}, "GSI1SK": {"S": "t#1"}}
    moved = base | {"GSI1PK": {"S": "PENDING#question"}, "GSI1SK": {"S": "t#2"}}
    assert index_writes(None, base) == 0
    assert index_writes(base, pending) == 1  # enters GSI1
    assert index_writes(pending, base) == 1  # leaves it
    assert index_writes(pending, moved) == 2  # its index key changed: a delete and a put
    assert index_writes(pending, pending | {"x": {"S": "y"}}) == 1  # changed in place (projection ALL)


@pytest.fixture
def metered(aws_env: None) -> Iterator[tuple[Any, CapacityMeter]]:
    with mock_aws():
        client = boto3.client("dynamodb")
        client.create_table(**create_table_kwargs("t"))
        meter = CapacityMeter(boto3.client("dynamodb"))
        meter.attach(client)
        meter.counting.set()
        yield client, meter


def test_the_meter_sizes_real_calls(metered: tuple[Any, CapacityMeter]) -> None:
    client, meter = metered
    key = {"PK": {"S": "RUN#a"}, "SK": {"S": "INT#1"}}
    client.put_item(TableName="t", Item=key | {"big": {"S": "x" * 1500}})  # 1,523 bytes: 2 units
    assert meter.writes["PutItem"] == 2
    client.update_item(
        TableName="t",
        Key=key,
        UpdateExpression="SET GSI1PK = :p, GSI1SK = :s",
        ExpressionAttributeValues={":p": {"S": "PENDING#q"}, ":s": {"S": "t#1"}},
    )
    assert (meter.writes["UpdateItem"], meter.writes["UpdateItem (indexes)"]) == (2, 2)  # the item enters GSI1
    client.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": "t", "Item": {"PK": {"S": "RUN#a"}, "SK": {"S": "EVT#1"}}}},
            {"ConditionCheck": {"TableName": "t", "Key": key, "ConditionExpression": "attribute_exists(PK)"}},
        ]
    )
    assert meter.writes["TransactWriteItems"] == 2 * 1 + 2 * 2  # both doubled; the checked item is 2 KB-ish
    client.get_item(TableName="t", Key=key, ConsistentRead=True)
    client.get_item(TableName="t", Key=key)
    assert meter.reads["GetItem"] == 1 + 0.5
    client.query(
        TableName="t",
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": "RUN#a"}},
        ConsistentRead=True,
    )
    assert meter.reads["Query"] == 1
    assert meter.figures()["write_units"] == 2 + 2 + 2 + 6
    meter.counting.clear()
    client.put_item(TableName="t", Item=key)
    assert meter.writes["PutItem"] == 2  # nothing is metered outside the window
