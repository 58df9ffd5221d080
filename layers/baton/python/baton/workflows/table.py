"""The one DynamoDB table, declared once. The CDK construct and the local stack both read this.

Keys:
  PK = RUN#<run_id>
  SK = RUN | INT#<iid> | EVT#<ulid> | MSG#<node>#<ulid> | TURN#<iid>#<n> | WAIT#<gate> | PEND#<iid>
  PEND#<iid> is the marker of a pending question or tool await (a copy of its item, present exactly
  while it is pending): it sorts after EVT#, INT# and MSG#, so one Query from PEND# on reads the open
  questions, the run and its waits (O(pending)), never the run's history; no index is needed, and the
  read is consistent (a GSI's is not).
GSI1 (sparse, "pending"): present only while an interaction is pending or a token is parked.
  GSI1PK = PENDING#<kind> | PARKED ; GSI1SK = <created_at>#<id>
GSI2 ("by_status"): every interaction, by kind and status; the sort key starts with the run id so
  "interrupts of one session with one status" is a begins_with Query.
  GSI2PK = <kind>#<status> ; GSI2SK = <run_id>#<created_at>#<iid>
The TTL attribute is shared with Powertools Idempotency records (they write `expiration` too).
"""

from __future__ import annotations

from typing import Any, Final

PK: Final = "PK"
SK: Final = "SK"
GSI_PENDING: Final = "pending"
GSI_BY_STATUS: Final = "by_status"
TTL_ATTRIBUTE: Final = "expiration"

KEY_ATTRIBUTES: Final[list[tuple[str, str]]] = [
    (PK, "S"),
    (SK, "S"),
    ("GSI1PK", "S"),
    ("GSI1SK", "S"),
    ("GSI2PK", "S"),
    ("GSI2SK", "S"),
]

GLOBAL_SECONDARY_INDEXES: Final[list[dict[str, Any]]] = [
    {"name": GSI_PENDING, "partition_key": "GSI1PK", "sort_key": "GSI1SK", "projection": "ALL"},
    {"name": GSI_BY_STATUS, "partition_key": "GSI2PK", "sort_key": "GSI2SK", "projection": "ALL"},
]


def create_table_kwargs(table_name: str) -> dict[str, Any]:
    """`CreateTable` arguments for the local stack (the CDK construct maps the same lists)."""
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": t} for n, t in KEY_ATTRIBUTES],
        "KeySchema": [
            {"AttributeName": PK, "KeyType": "HASH"},
            {"AttributeName": SK, "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": gsi["name"],
                "KeySchema": [
                    {"AttributeName": gsi["partition_key"], "KeyType": "HASH"},
                    {"AttributeName": gsi["sort_key"], "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": gsi["projection"]},
            }
            for gsi in GLOBAL_SECONDARY_INDEXES
        ],
    }
