"""The decision log's archive: an S3 bucket with Object Lock (`infra/capabilities/audit.py`), fed by the
table's DynamoDB stream. `decision_records` reads the chained records out of a stream batch; each is
put once (a conditional PutObject: a redelivered batch changes nothing) with a SHA-256 checksum (Object
Lock requires one on every upload)."""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import ClientError

from baton.adapters.dynamo_items import plain
from baton.domain.audit import AuditRecord, stored_data

_de = TypeDeserializer()


class S3AuditArchive:
    def __init__(self, bucket: str, client: Any) -> None:  # an S3 client (no stubs installed for it)
        self._bucket = bucket
        self._s3 = client

    def put(self, key: str, body: bytes) -> None:
        try:
            self._s3.put_object(
                Bucket=self._bucket,
                Key=key,
                Body=body,
                ContentType="application/json",
                ChecksumAlgorithm="SHA256",
                IfNoneMatch="*",
            )
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") != "PreconditionFailed":
                raise  # anything but "already archived" fails the batch: the stream delivers it again


def decision_records(stream_event: dict[str, Any]) -> list[AuditRecord]:
    """The chained decision records inserted in one DynamoDB stream batch (NEW_IMAGE), in order."""
    found: list[AuditRecord] = []
    for change in stream_event.get("Records", []):
        image = (change.get("dynamodb") or {}).get("NewImage") or {}
        if change.get("eventName") != "INSERT" or "seq" not in image or image.get("record") != {"S": "event"}:
            continue
        values = {k: plain(_de.deserialize(v)) for k, v in image.items()}
        found.append(
            AuditRecord(
                event_id=values["event_id"],
                run_id=values["run_id"],
                type=values["type"],
                at=values["at"],
                data=stored_data(values.get("data")),
                seq=int(values["seq"]),
                prev_hash=values["prev_hash"],
                hash=values["hash"],
            )
        )
    return found
