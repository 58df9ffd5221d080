"""A transaction under `dynamodb_at_scale` (baton.local.moto_scale) copies only the item it updates for its
rollback, where plain moto copies the whole table (counted against plain moto)."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import boto3
import pytest
from moto import mock_aws

from baton.local.moto_fixes import atomic_dynamodb_writes
from baton.local.moto_scale import dynamodb_at_scale
from baton.workflows.table import create_table_kwargs
from tests.counting import CallsCounted

TABLE = "copies-table"
ITEMS = 40


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
        assert copies.count == 2  # the transaction's rollback copy of the item, and update_item's old image
    else:
        assert copies.count >= ITEMS + 1  # plain moto: the whole table, and the item's old image again
