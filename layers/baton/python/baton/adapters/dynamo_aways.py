"""Operators away of `DynamoStore` (`AwayStore` in `baton/ports.py`): one item per operator,
`PK=AWAY`, `SK=OPERATOR#<operator>`, expiring (TTL) a day after its `until`. One partition holds them
all, so "who is away" is one Query; a team has a handful."""

from __future__ import annotations

from typing import Any, Final

from baton.adapters.dynamo_items import to_item
from baton.adapters.dynamo_table import DynamoTable
from baton.contracts.away import Away
from baton.ids import parse_iso
from baton.workflows.table import TTL_ATTRIBUTE

AWAY_PK: Final = "AWAY"
_PREFIX: Final = "OPERATOR#"
_KEPT_AFTER_SECONDS: Final = 86400  # read as not away from `until` on; the TTL only tidies


def _key(operator: str) -> dict[str, Any]:
    return to_item({"PK": AWAY_PK, "SK": f"{_PREFIX}{operator}"})


def _away(item: dict[str, Any]) -> Away:
    return Away(operator=item["operator"], until=item["until"], delegate=item["delegate"], set_at=item["set_at"])


class DynamoAways(DynamoTable):
    def put_away(self, away: Away) -> None:
        expires = int(parse_iso(away.until).timestamp()) + _KEPT_AFTER_SECONDS
        item = {"PK": AWAY_PK, "SK": f"{_PREFIX}{away.operator}", "record": "away", TTL_ATTRIBUTE: expires}
        self._db.put_item(TableName=self._table, Item=to_item(item | away.model_dump()))

    def get_away(self, operator: str) -> Away | None:
        found = self._get(AWAY_PK, f"{_PREFIX}{operator}")
        return _away(found) if found else None

    def list_aways(self) -> list[Away]:
        items = self._query_all(
            KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
            ExpressionAttributeValues=to_item({":pk": AWAY_PK, ":prefix": _PREFIX}),
            ConsistentRead=True,
        )
        return [_away(item) for item in items]

    def delete_away(self, operator: str) -> bool:
        resp = self._db.delete_item(TableName=self._table, Key=_key(operator), ReturnValues="ALL_OLD")
        return "Attributes" in resp
