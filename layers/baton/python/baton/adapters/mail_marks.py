"""DynamoDB adapter of `MailLedger` (`baton/channels/email/mail.py`): one item per notification mailed
to one recipient, `MAILED#<interaction>#<digest>#<recipient>` in the run's partition (below the `PEND#`
markers, so the answer path's snapshot Query never reads it), with a TTL: a retry comes within hours,
so the mark outlives every retry of its notification and is then dropped."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from baton.adapters.dynamo_items import is_conditional_failure, run_pk, to_item
from baton.workflows.table import TTL_ATTRIBUTE

if TYPE_CHECKING:
    from collections.abc import Callable

    from mypy_boto3_dynamodb import DynamoDBClient

    from baton.channels.email.mail import MailedMark

KEEP_SECONDS = 7 * 86400  # SNS -> Lambda retries of one event end long before this


def _key(mark: MailedMark) -> dict[str, str]:
    return {"PK": run_pk(mark.run_id), "SK": f"MAILED#{mark.subject_id}#{mark.digest}#{mark.recipient}"}


class DynamoMailMarks:
    def __init__(self, table_name: str, client: DynamoDBClient, *, now: Callable[[], float] = time.time) -> None:
        self._table = table_name
        self._db = client
        self._now = now

    def was_mailed(self, mark: MailedMark) -> bool:
        found = self._db.get_item(TableName=self._table, Key=to_item(_key(mark)), ConsistentRead=True)
        return "Item" in found

    def record_mailed(self, mark: MailedMark) -> None:
        item = _key(mark) | {"record": "mailed", TTL_ATTRIBUTE: int(self._now()) + KEEP_SECONDS}
        try:
            # Written once: a concurrent delivery of the same notification that marked it first wins.
            self._db.put_item(TableName=self._table, Item=to_item(item), ConditionExpression="attribute_not_exists(PK)")
        except ClientError as err:
            if not is_conditional_failure(err):
                raise
