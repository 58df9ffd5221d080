"""The claim writes of `DynamoStore` (`InteractionStore.write_claim` in `baton/ports.py`): an interrupt's
claim, take-over or release (`baton.services.claims`), a put of its `INT#` item conditional on the
version read and on the holder then, with the change's decision event chained in the same transaction
when there is one. A marked kind (question, tool await, pause) is never claimed: it moves with its
marker (`dynamo_interactions.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from baton.adapters.dynamo_items import (
    interaction_values,
    is_conditional_failure,
    is_marked,
    to_item,
)
from baton.adapters.dynamo_table import DynamoTable
from baton.errors import ConflictError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.domain.audit import AuditHead
    from baton.models import Event, Interaction, InteractionStatus


class DynamoClaims(DynamoTable):
    def write_claim(
        self,
        interaction: Interaction,
        new_state: InteractionStatus,
        *,
        expected_holder: str | None,
        now: str,
        with_records: Sequence[Event] = (),
        audit_head: AuditHead | None = None,
    ) -> Interaction:
        """A claim change (`baton.services.claims`): one conditional put on the version read AND the holder
        then: `claimed_by = :holder`, or for a free one no live lease (`lease_expires_at <= :now`). With
        `with_records` (the change's event, a decision) the put, the event and the chain head's advance
        are one transaction (chained after `audit_head`; a lost head race reads the head and retries)."""
        if is_marked(interaction):
            raise ValueError("claims are for interrupts; a marked kind moves with its marker")
        expected = interaction.state.version
        updated = interaction.model_copy(update={"state": new_state.model_copy(update={"version": expected + 1})})
        names = {"#ver": "version", "#claimed": "claimed_by", "#st": "status"}
        values: dict[str, Any] = {":expected": expected, ":pending": "pending"}
        if expected_holder is None:
            holder = "(attribute_not_exists(#claimed) OR attribute_not_exists(#lease) OR #lease <= :now)"
            names["#lease"], values[":now"] = "lease_expires_at", now
        else:
            holder = "#claimed = :holder"
            values[":holder"] = expected_holder
        put = {
            "TableName": self._table,
            "Item": to_item(interaction_values(updated)),
            "ConditionExpression": f"attribute_exists(PK) AND #ver = :expected AND #st = :pending AND {holder}",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": to_item(values),
        }
        changed = ConflictError(
            f"interaction {interaction.interaction_id} changed while its claim was written",
            details={"interaction_id": interaction.interaction_id},
        )

        def failed(codes: list[str], err: ClientError) -> None:
            if codes[:1] == ["ConditionalCheckFailed"]:
                raise changed from err

        if with_records:  # the change's event is a decision: chained, with the head's advance
            self._write_chained(interaction.run_id, [{"Put": put}], with_records, audit_head, failed)
            return updated
        try:
            self._db.put_item(**put)  # type: ignore[arg-type]
        except ClientError as err:
            if not is_conditional_failure(err):
                raise
            raise changed from err
        return updated
