"""Agents' states of `DynamoStore` (`AgentStateStore` in `baton/ports.py`): one `AGENT#<key>` item per
state in its run's partition, so it lives and expires with the run's records. `AGENT#` sorts before
`PEND#`, so `snapshot_run`'s Query (from `PEND#` on) never reads a state: a large one costs the run's
answers nothing. Each write is one UpdateItem that bumps the version atomically."""

from __future__ import annotations

from typing import Any, Final

from botocore.exceptions import ClientError

from baton.adapters.dynamo_items import from_item, is_conditional_failure, run_pk, to_item
from baton.adapters.dynamo_table import DynamoTable
from baton.contracts.agent_state import AgentStateView, AgentStateWritten
from baton.errors import ConflictError
from baton.ids import parse_iso
from baton.workflows.table import TTL_ATTRIBUTE

_STATE_PREFIX: Final = "AGENT#"


def _key(run_id: str, key: str) -> dict[str, Any]:
    return to_item({"PK": run_pk(run_id), "SK": f"{_STATE_PREFIX}{key}"})


class DynamoAgentStates(DynamoTable):
    def put_agent_state(
        self, run_id: str, key: str, state: str, *, expected_version: int | None, at: str
    ) -> AgentStateWritten:
        names = {"#rec": "record", "#st": "state", "#at": "updated_at", "#v": "version", "#ttl": TTL_ATTRIBUTE}
        values: dict[str, Any] = {
            ":rec": "agent_state",
            ":st": state,
            ":at": at,
            ":one": 1,
            ":ttl": self._expiry(int(parse_iso(at).timestamp())),
        }
        update: dict[str, Any] = {
            "UpdateExpression": "SET #rec = :rec, #st = :st, #at = :at, #ttl = :ttl ADD #v :one",
            "ExpressionAttributeNames": names,
        }
        if expected_version == 0:
            update["ConditionExpression"] = "attribute_not_exists(PK)"
        elif expected_version is not None:
            update["ConditionExpression"] = "#v = :seen"
            values[":seen"] = expected_version
        try:
            resp = self._db.update_item(
                TableName=self._table,
                Key=_key(run_id, key),
                ExpressionAttributeValues=to_item(values),
                ReturnValues="UPDATED_NEW",
                **update,
            )
        except ClientError as err:
            if not is_conditional_failure(err):
                raise
            current = self.get_agent_state(run_id, key)
            version = current.version if current else 0
            raise ConflictError(
                f"agent state {key} is at version {version}, not {expected_version}",
                details={"key": key, "version": version},
            ) from err
        version = int(from_item(resp["Attributes"])["version"])
        return AgentStateWritten(run_id=run_id, key=key, version=version, updated_at=at)

    def get_agent_state(self, run_id: str, key: str) -> AgentStateView | None:
        values = self._get(run_pk(run_id), f"{_STATE_PREFIX}{key}")
        if values is None:
            return None
        return AgentStateView(
            run_id=run_id,
            key=key,
            state=str(values["state"]),
            version=int(values["version"]),
            updated_at=str(values["updated_at"]),
        )

    def delete_agent_state(self, run_id: str, key: str) -> bool:
        resp = self._db.delete_item(TableName=self._table, Key=_key(run_id, key), ReturnValues="ALL_OLD")
        return bool(resp.get("Attributes"))
