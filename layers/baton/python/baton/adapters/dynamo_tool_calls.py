"""The open tool call of a run (`InteractionStore.open_tool_call`, issue 30): `CALL#<key>` in the run's
partition (the key: `domain.tool_calls.open_call_key`, of the session and the call's digest) names the
approval a repeat of that call finds. CALL# sorts before DLG#, EVT#, INT# and PEND#, so neither a prefix
Query of the run nor the snapshot's Query from PEND# on reads it. It is written in the same transaction
as the approval it names, on condition that it is absent or still names the approval it replaces, so of
concurrent identical requests exactly one creates an approval; a used, denied or timed-out one is replaced
by the next request's, never deleted (a repeat reads one item, not the run's history)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.adapters.dynamo_items import (
    interaction_values,
    is_marked,
    marker_values,
    run_pk,
    to_item,
)
from baton.adapters.dynamo_table import DynamoTable
from baton.errors import ConflictError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from botocore.exceptions import ClientError

    from baton.models import Event, Interaction


def _call_sk(call_key: str) -> str:
    return f"CALL#{call_key}"


class DynamoToolCalls(DynamoTable):
    def open_tool_call(self, run_id: str, call_key: str) -> str | None:
        found = self._get(run_pk(run_id), _call_sk(call_key))
        return str(found["interaction_id"]) if found else None

    def put_tool_call_approval(
        self, interaction: Interaction, call_key: str, *, replacing: str | None, events: Sequence[Event]
    ) -> None:
        """The approval, its call's marker and `events` (decisions chained after the run's head, read here)
        in one transaction; ConflictError when another request's approval became the call's open one first
        (the marker is no longer what the caller read). A lost race for the head reads it again."""
        run_id, values = interaction.run_id, interaction_values(interaction)
        if replacing is None:
            condition: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(PK)"}
        else:
            condition = {
                "ConditionExpression": "interaction_id = :replaced",
                "ExpressionAttributeValues": to_item({":replaced": replacing}),
            }
        marker = {"PK": run_pk(run_id), "SK": _call_sk(call_key), "record": "tool_call"}
        items: list[Any] = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": to_item(values),
                    "ConditionExpression": "attribute_not_exists(PK)",
                }
            },
            *(
                [{"Put": {"TableName": self._table, "Item": to_item(marker_values(values))}}]
                if is_marked(interaction)
                else []
            ),
            {
                "Put": {
                    "TableName": self._table,
                    "Item": to_item({**marker, "interaction_id": interaction.interaction_id}),
                    **condition,
                }
            },
        ]

        def failed(codes: list[str], err: ClientError) -> None:
            if "ConditionalCheckFailed" in codes:
                raise ConflictError(
                    f"tool call {call_key} already has an open approval", details={"call_key": call_key}
                ) from err

        self._write_chained(run_id, items, events, None, failed)
