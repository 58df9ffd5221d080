"""DynamoDB adapter of `PasskeyStore` (`baton/passkey_ports.py`): one item per registered WebAuthn credential,
`PK=OPERATOR#<operator>`, `SK=PASSKEY#<credential_id>` (beside the operator's push subscriptions), and one
per issued challenge, `SK=WEBAUTHN#<challenge>`, with a TTL at its expiry. An operator's passkeys are one
Query; taking a challenge is one DeleteItem returning the old item (the second take finds none); a sign
count advances only from the count the verification read (a conditional Update)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import ClientError

from baton.adapters.dynamo_items import from_item, is_conditional_failure, to_item
from baton.contracts.passkeys import PasskeyChallenge, StoredPasskey
from baton.ids import parse_iso
from baton.workflows.table import TTL_ATTRIBUTE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

PASSKEY_PREFIX: Final = "PASSKEY#"
CHALLENGE_PREFIX: Final = "WEBAUTHN#"


def _key(operator: str, sort_key: str) -> dict[str, Any]:
    return to_item({"PK": f"OPERATOR#{operator}", "SK": sort_key})


def _passkey(item: dict[str, Any]) -> StoredPasskey:
    values = from_item(item)
    return StoredPasskey.model_validate({name: values.get(name) for name in StoredPasskey.model_fields})


class DynamoPasskeys:
    def __init__(self, table_name: str, client: DynamoDBClient) -> None:
        self._table = table_name
        self._db = client

    def add_passkey(self, passkey: StoredPasskey) -> bool:
        key = _key(passkey.operator, PASSKEY_PREFIX + passkey.credential_id)
        item = key | to_item({"record": "passkey", **passkey.model_dump(exclude_none=True)})
        try:
            self._db.put_item(TableName=self._table, Item=item, ConditionExpression="attribute_not_exists(PK)")
        except ClientError as err:
            if not is_conditional_failure(err):
                raise
            return False
        return True

    def list_passkeys(self, operator: str) -> list[StoredPasskey]:
        query: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
            "ExpressionAttributeValues": to_item({":pk": f"OPERATOR#{operator}", ":prefix": PASSKEY_PREFIX}),
            "ConsistentRead": True,
        }
        found: list[StoredPasskey] = []
        while True:
            page = self._db.query(**query)
            found.extend(_passkey(item) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return found
            query["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def get_passkey(self, operator: str, credential_id: str) -> StoredPasskey | None:
        found = self._db.get_item(
            TableName=self._table, Key=_key(operator, PASSKEY_PREFIX + credential_id), ConsistentRead=True
        )
        return _passkey(found["Item"]) if "Item" in found else None

    def delete_passkey(self, operator: str, credential_id: str) -> bool:
        gone = self._db.delete_item(
            TableName=self._table, Key=_key(operator, PASSKEY_PREFIX + credential_id), ReturnValues="ALL_OLD"
        )
        return "Attributes" in gone

    def advance_sign_count(self, operator: str, credential_id: str, *, old: int, new: int, at: str) -> bool:
        try:
            self._db.update_item(
                TableName=self._table,
                Key=_key(operator, PASSKEY_PREFIX + credential_id),
                UpdateExpression="SET sign_count = :new, last_used_at = :at",
                ConditionExpression="attribute_exists(PK) AND sign_count = :old",
                ExpressionAttributeValues=to_item({":new": new, ":old": old, ":at": at}),
            )
        except ClientError as err:
            if not is_conditional_failure(err):
                raise
            return False
        return True

    def put_challenge(self, challenge: PasskeyChallenge) -> None:
        expiry = int(parse_iso(challenge.expires_at).timestamp()) + 1
        item = _key(challenge.operator, CHALLENGE_PREFIX + challenge.challenge) | to_item(
            {"record": "passkey_challenge", TTL_ATTRIBUTE: expiry, **challenge.model_dump(exclude_none=True)}
        )
        self._db.put_item(TableName=self._table, Item=item)

    def take_challenge(self, operator: str, challenge: str) -> PasskeyChallenge | None:
        gone = self._db.delete_item(
            TableName=self._table, Key=_key(operator, CHALLENGE_PREFIX + challenge), ReturnValues="ALL_OLD"
        )
        if "Attributes" not in gone:
            return None
        values = from_item(gone["Attributes"])
        return PasskeyChallenge.model_validate({name: values.get(name) for name in PasskeyChallenge.model_fields})
