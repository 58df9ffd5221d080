"""DynamoDB adapter of `AnswerLinkStore` (`baton/ports.py`): one item per used email answer link, in its
run's partition as `LINK#<link_id>` (below the `PEND#` markers, so the answer path's snapshot Query
never reads it), with a TTL a week past the link's own expiry. It shares the table and the key helpers
of `baton/adapters/dynamo_items.py`; kept apart so the link's rules read in one place."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from baton.adapters.dynamo_items import from_item, is_conditional_failure, run_pk, to_item
from baton.channels.email.links import LinkUse
from baton.workflows.table import TTL_ATTRIBUTE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

KEEP_AFTER_EXPIRY_SECONDS = 7 * 86400  # a used link's record outlives the link, so a late replay still learns why


def _key(run_id: str, link_id: str) -> dict[str, Any]:
    return to_item({"PK": run_pk(run_id), "SK": f"LINK#{link_id}"})


def _use_from(values: dict[str, Any]) -> LinkUse:
    answer = values.get("answer")
    return LinkUse(
        link_id=values["link_id"],
        run_id=values["run_id"],
        interaction_id=values["interaction_id"],
        recipient=values["recipient"],
        at=values["at"],
        state=values["state"],
        answer=json.loads(answer) if isinstance(answer, str) else None,
        expires_at=int(values.get("expires_at") or 0),
        channel=values.get("channel") or "email",  # a use recorded before push credentials: a mail link's
    )


class DynamoAnswerLinks:
    def __init__(self, table_name: str, client: DynamoDBClient) -> None:
        self._table = table_name
        self._db = client

    def claim_link(self, use: LinkUse, *, stale_before: str) -> LinkUse | None:
        values = {
            "PK": run_pk(use.run_id),
            "SK": f"LINK#{use.link_id}",
            "record": "link",
            "link_id": use.link_id,
            "run_id": use.run_id,
            "interaction_id": use.interaction_id,
            "recipient": use.recipient,
            "at": use.at,
            "state": "claimed",
            "expires_at": use.expires_at,
            "channel": use.channel,
            TTL_ATTRIBUTE: use.expires_at + KEEP_AFTER_EXPIRY_SECONDS,
        }
        try:
            # Protects "a link answers once": written only if the link was never used, or if a claim
            # that never completed (its request died) is older than `stale_before`.
            self._db.put_item(
                TableName=self._table,
                Item=to_item(values),
                ConditionExpression="attribute_not_exists(PK) OR (#state = :claimed AND #at < :stale)",
                ExpressionAttributeNames={"#state": "state", "#at": "at"},
                ExpressionAttributeValues=to_item({":claimed": "claimed", ":stale": stale_before}),
            )
        except ClientError as err:
            if not is_conditional_failure(err):
                raise
            return self.get_link(use.run_id, use.link_id) or use
        return None

    def complete_link(self, use: LinkUse) -> None:
        try:
            # Only the claim this request made (same `at`) becomes the answered use.
            self._db.update_item(
                TableName=self._table,
                Key=_key(use.run_id, use.link_id),
                UpdateExpression="SET #state = :answered, answer = :answer",
                ConditionExpression="#state = :claimed AND #at = :at",
                ExpressionAttributeNames={"#state": "state", "#at": "at"},
                ExpressionAttributeValues=to_item(
                    {":answered": "answered", ":claimed": "claimed", ":at": use.at, ":answer": json.dumps(use.answer)}
                ),
            )
        except ClientError as err:
            # Our claim went stale and another request took it over: the answer is stored all the same,
            # and that request's answer gets the 409 naming it.
            if not is_conditional_failure(err):
                raise

    def release_link(self, use: LinkUse) -> None:
        try:
            # Only this request's own claim is dropped, never an answered use.
            self._db.delete_item(
                TableName=self._table,
                Key=_key(use.run_id, use.link_id),
                ConditionExpression="#state = :claimed AND #at = :at",
                ExpressionAttributeNames={"#state": "state", "#at": "at"},
                ExpressionAttributeValues=to_item({":claimed": "claimed", ":at": use.at}),
            )
        except ClientError as err:
            if not is_conditional_failure(err):
                raise

    def get_link(self, run_id: str, link_id: str) -> LinkUse | None:
        resp = self._db.get_item(TableName=self._table, Key=_key(run_id, link_id), ConsistentRead=True)
        item = resp.get("Item")
        return _use_from(from_item(item)) if item else None
