"""The `BuildRecords` port over Baton's DynamoDB table: the review gate's builds (the bounded diff and
the merge) in the run's partition.

* `BUILD#<gate>#<kind>`: the started build and its parked task token, written and read only by Baton's
  functions (diff_start, merge_start, build_finished). `claim_build` is a conditional write, so of two
  deliveries of one build's end exactly one sends the token.
* `REPORT#<gate>#<kind>`: what the build wrote (`BuildReport`, zlib-compressed JSON: a bounded diff of
  up to 400 kB fits an item). The build itself may only PutItem this item (infra/capabilities/merge.py
  grants PutItem alone, without return values), never read the table.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

from baton.domain.merge_contracts import BuildRecord, BuildReport
from baton.errors import ValidationFailedError

if TYPE_CHECKING:
    from collections.abc import Callable

    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import AttributeValueTypeDef

    from baton.domain.merge_contracts import BuildKind

# DynamoDB's item limit is 400 KB; leave room for the keys and the other attributes.
MAX_REPORT_BYTES = 380_000
RECORD_FIELDS = ("run_id", "gate", "kind", "build_key", "task_token", "started_at", "status")


def _record_of(item: dict[str, Any]) -> BuildRecord:
    return BuildRecord.model_validate({name: item[name]["S"] for name in RECORD_FIELDS if name in item})


def _pk(run_id: str) -> str:
    return f"RUN#{run_id}"


def build_sk(gate: str, kind: str) -> str:
    return f"BUILD#{gate}#{kind}"


def report_sk(gate: str, kind: str) -> str:
    return f"REPORT#{gate}#{kind}"


def encode_report(report: BuildReport) -> bytes:
    """The report as stored; one too large for an item is refused with what to change."""
    blob = zlib.compress(report.model_dump_json().encode(), 6)
    if len(blob) > MAX_REPORT_BYTES:
        raise ValidationFailedError(
            f"the {report.kind} report of gate '{report.gate}' is {len(blob)} bytes compressed, over the "
            f"{MAX_REPORT_BYTES}-byte item budget; lower diff_max_bytes",
            details={"path": "diff_max_bytes"},
        )
    return blob


def decode_report(blob: bytes) -> BuildReport:
    return BuildReport.model_validate_json(zlib.decompress(blob))


class DynamoBuildRecords:
    """`client` may be a factory: the client is then built on first use (a function that never touches a
    build, such as the API, never builds it)."""

    def __init__(self, table_name: str, client: DynamoDBClient | Callable[[], DynamoDBClient]) -> None:
        self._table = table_name
        self._client = client

    @property
    def _db(self) -> DynamoDBClient:
        if callable(self._client):
            self._client = self._client()
        return self._client

    # ---- the build's own write ----------------------------------------------------------------
    def put_report(self, report: BuildReport) -> None:
        self._db.put_item(
            TableName=self._table,
            Item={
                "PK": {"S": _pk(report.run_id)},
                "SK": {"S": report_sk(report.gate, report.kind)},
                "record": {"S": "build_report"},
                "build_key": {"S": report.build_key},
                "report": {"B": encode_report(report)},
            },
        )

    # ---- Baton's functions ----------------------------------------------------------------------
    def get_report(self, run_id: str, gate: str, kind: BuildKind) -> BuildReport | None:
        item = self._get(_pk(run_id), report_sk(gate, kind))
        return decode_report(item["report"]["B"]) if item and "B" in item.get("report", {}) else None

    def put_build(self, record: BuildRecord) -> None:
        item: dict[str, AttributeValueTypeDef] = {
            "PK": {"S": _pk(record.run_id)},
            "SK": {"S": build_sk(record.gate, record.kind)},
            "record": {"S": "build"},
        }
        values = record.model_dump()
        item.update({name: {"S": str(values[name])} for name in RECORD_FIELDS})
        self._db.put_item(TableName=self._table, Item=item)

    def get_build(self, run_id: str, gate: str, kind: BuildKind) -> BuildRecord | None:
        item = self._get(_pk(run_id), build_sk(gate, kind))
        return _record_of(item) if item is not None else None

    def claim_build(self, run_id: str, gate: str, kind: BuildKind, build_key: str) -> tuple[bool, BuildRecord | None]:
        """One conditional UpdateItem, returning the record either way: claimed running -> finished if it
        holds this build; else as it is (None: there is no record)."""
        try:
            resp = self._db.update_item(
                TableName=self._table,
                Key={"PK": {"S": _pk(run_id)}, "SK": {"S": build_sk(gate, kind)}},
                UpdateExpression="SET #st = :new",
                ConditionExpression="#st = :old AND build_key = :key",
                ExpressionAttributeNames={"#st": "status"},
                ExpressionAttributeValues={
                    ":new": {"S": "finished"},
                    ":old": {"S": "running"},
                    ":key": {"S": build_key},
                },
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise
            old = cast("dict[str, Any] | None", err.response.get("Item"))  # the record as it is, if any
            return False, _record_of(old) if old else None
        return True, _record_of(dict(resp["Attributes"]))

    def reopen_build(self, record: BuildRecord) -> None:
        self._move(record, "finished", "running")

    def _move(self, record: BuildRecord, old: str, new: str) -> bool:
        try:
            self._db.update_item(
                TableName=self._table,
                Key={"PK": {"S": _pk(record.run_id)}, "SK": {"S": build_sk(record.gate, record.kind)}},
                UpdateExpression="SET #st = :new",
                ConditionExpression="#st = :old AND build_key = :key",
                ExpressionAttributeNames={"#st": "status"},
                ExpressionAttributeValues={":new": {"S": new}, ":old": {"S": old}, ":key": {"S": record.build_key}},
            )
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def _get(self, pk: str, sk: str) -> dict[str, AttributeValueTypeDef] | None:
        resp = self._db.get_item(TableName=self._table, Key={"PK": {"S": pk}, "SK": {"S": sk}}, ConsistentRead=True)
        item = resp.get("Item")
        return dict(item) if item else None
