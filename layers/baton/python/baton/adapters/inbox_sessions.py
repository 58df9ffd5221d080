"""DynamoDB adapter of `InboxSessionStore` (`baton/ports.py`): one item per open local inbox session,
`PK=INBOX_SESSIONS`, `SK=SESSION#<operator>#<session_id>`, with a TTL at the session's expiry. One
partition holds them all, so "every session of one operator" and "every session" are each one Query
(begins_with), never a Scan; a local stack has a handful."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from baton.adapters.dynamo_items import to_item
from baton.workflows.table import TTL_ATTRIBUTE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

SESSIONS_PK: Final = "INBOX_SESSIONS"


def _prefix(operator: str | None) -> str:
    return "SESSION#" if operator is None else f"SESSION#{operator}#"


def _key(operator: str, session_id: str) -> dict[str, Any]:
    return to_item({"PK": SESSIONS_PK, "SK": f"{_prefix(operator)}{session_id}"})


class DynamoInboxSessions:
    def __init__(self, table_name: str, client: DynamoDBClient) -> None:
        self._table = table_name
        self._db = client

    def open_session(self, operator: str, session_id: str, expires_at: int) -> None:
        item: dict[str, Any] = {"PK": SESSIONS_PK, "SK": f"{_prefix(operator)}{session_id}", "record": "inbox_session"}
        item |= {"operator": operator, "expires_at": expires_at, TTL_ATTRIBUTE: expires_at}
        self._db.put_item(TableName=self._table, Item=to_item(item))

    def is_open(self, operator: str, session_id: str) -> bool:
        found = self._db.get_item(
            TableName=self._table, Key=_key(operator, session_id), ConsistentRead=True, ProjectionExpression="PK"
        )
        return "Item" in found

    def end_session(self, operator: str, session_id: str) -> None:
        self._db.delete_item(TableName=self._table, Key=_key(operator, session_id))

    def end_sessions(self, operator: str | None) -> int:
        keys: list[dict[str, Any]] = []
        query: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
            "ExpressionAttributeValues": to_item({":pk": SESSIONS_PK, ":prefix": _prefix(operator)}),
            "ProjectionExpression": "PK, SK",
            "ConsistentRead": True,
        }
        while True:
            page = self._db.query(**query)
            keys.extend(page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                break
            query["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        for key in keys:
            self._db.delete_item(TableName=self._table, Key=key)
        return len(keys)
