"""DynamoDB adapter of `PushSubscriptionStore` (`baton/push_ports.py`): one item per Web Push subscription,
`PK=OPERATOR#<operator>`, `SK=PUSH#<subscription_id>` (the id is the endpoint's digest: the same browser
subscribing again writes nothing). An operator's subscriptions are one Query; no index, no TTL (the push
service's 404/410 deletes a subscription it no longer serves)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import ClientError

from baton.adapters.dynamo_items import from_item, is_conditional_failure, to_item
from baton.contracts.push import PushSubscription

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

SUBSCRIPTION_PREFIX: Final = "PUSH#"
_FIELDS: Final = ("operator", "subscription_id", "endpoint", "keys", "created_at")


def _key(operator: str, subscription_id: str) -> dict[str, Any]:
    return to_item({"PK": f"OPERATOR#{operator}", "SK": f"{SUBSCRIPTION_PREFIX}{subscription_id}"})


def _subscription(item: dict[str, Any]) -> PushSubscription:
    values = from_item(item)
    return PushSubscription.model_validate({name: values[name] for name in _FIELDS})


class DynamoPushSubscriptions:
    def __init__(self, table_name: str, client: DynamoDBClient) -> None:
        self._table = table_name
        self._db = client

    def add_subscription(self, subscription: PushSubscription) -> tuple[PushSubscription, bool]:
        key = _key(subscription.operator, subscription.subscription_id)
        item = key | to_item({"record": "push_subscription", **subscription.model_dump()})
        try:
            self._db.put_item(
                TableName=self._table,
                Item=item,
                ConditionExpression="attribute_not_exists(PK)",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as err:
            if not is_conditional_failure(err):
                raise
            stored: Any = err.response.get("Item")  # the subscription the operator has (ALL_OLD)
            return (_subscription(stored) if stored else subscription), False
        return subscription, True

    def list_subscriptions(self, operator: str) -> list[PushSubscription]:
        query: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
            "ExpressionAttributeValues": to_item({":pk": f"OPERATOR#{operator}", ":prefix": SUBSCRIPTION_PREFIX}),
            "ConsistentRead": True,
        }
        found: list[PushSubscription] = []
        while True:
            page = self._db.query(**query)
            found.extend(_subscription(item) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return found
            query["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def delete_subscription(self, operator: str, subscription_id: str) -> bool:
        gone = self._db.delete_item(TableName=self._table, Key=_key(operator, subscription_id), ReturnValues="ALL_OLD")
        return "Attributes" in gone
