"""The review dialogue of `DynamoStore` (`ReviewTurnStore` in `baton/review_ports.py`): one `DLG#<interaction>#<n>`
item per turn in the run's partition. `DLG#` sorts before `PEND#`, so `snapshot_run`'s Query (from
`PEND#` on) never reads them: a run's long review dialogue costs its answers nothing. Turns stored
under the old `TURN#` prefix are still read (`dynamo_migrations.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import ClientError

from baton.adapters.dynamo_items import (
    interaction_values,
    is_conditional_failure,
    is_marked,
    marker_values,
    run_pk,
    to_item,
)
from baton.adapters.dynamo_migrations import lacks_first_turn, legacy_turn_prefix, with_legacy_turns
from baton.adapters.dynamo_table import DynamoTable
from baton.adapters.dynamo_transactions import cancellation_codes, transact_write
from baton.errors import ConflictError
from baton.models import ReviewTurn

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.models import Event, Interaction

_TURN_PREFIX: Final = "DLG#"


def _turn_sk(interaction_id: str, n: int) -> str:
    return f"{_TURN_PREFIX}{interaction_id}#{n:06d}"


class DynamoReviewTurns(DynamoTable):
    def put_turn(self, turn: ReviewTurn, *, review: Interaction | None = None, events: Sequence[Event] = ()) -> None:
        """One item per turn (a long dialogue never nears the item size limit); a taken `n` is a 409. With
        `review` (a new review: its first turn) and `events`, those join it: one transaction."""
        item: dict[str, Any] = {
            "TableName": self._table,
            "Item": to_item(
                {
                    "PK": run_pk(turn.run_id),
                    "SK": _turn_sk(turn.interaction_id, turn.n),
                    "record": "turn",
                    "turn": turn.model_dump_json(),
                }
            ),
            "ConditionExpression": "attribute_not_exists(PK)",
        }
        try:
            if review is None and not events:
                self._db.put_item(**item)
                return
            transact_write(self._db, [*self._review_items(review), {"Put": item}, *self._events(turn.run_id, events)])
        except ClientError as err:
            codes = cancellation_codes(err)
            if review is not None and codes and codes[0] == "ConditionalCheckFailed":
                raise ConflictError(
                    f"interaction {review.interaction_id} already exists",
                    details={"interaction_id": review.interaction_id},
                ) from err
            if is_conditional_failure(err) or "ConditionalCheckFailed" in (codes or ()):
                raise ConflictError(
                    f"turn {turn.n} of interaction {turn.interaction_id} already exists",
                    details={"interaction_id": turn.interaction_id, "n": turn.n},
                ) from err
            raise

    def _review_items(self, review: Interaction | None) -> list[dict[str, Any]]:
        """A new review's item (and its pending marker, were it marked), put only where none is."""
        if review is None:
            return []
        values = interaction_values(review)
        put = {"TableName": self._table, "Item": to_item(values), "ConditionExpression": "attribute_not_exists(PK)"}
        marker = [{"Put": {"TableName": self._table, "Item": to_item(marker_values(values))}}]
        return [{"Put": put}, *(marker if is_marked(review) else [])]

    def _events(self, run_id: str, events: Sequence[Event]) -> list[dict[str, Any]]:
        return self._record_items(run_id, events, self._head_for(run_id, events, None))

    def _turns_at(self, run_id: str, prefix: str) -> list[ReviewTurn]:
        items = self._query_all(
            KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
            ExpressionAttributeValues=to_item({":pk": run_pk(run_id), ":prefix": prefix}),
            ConsistentRead=True,
        )
        return [ReviewTurn.model_validate_json(v["turn"]) for v in items]

    def list_turns(self, run_id: str, interaction_id: str) -> list[ReviewTurn]:
        """One Query of the dialogue's `DLG#` items; a dialogue begun before turns moved there has no
        turn 0 among them, and its old turns are read too (a second Query, for such dialogues only)."""
        turns = self._turns_at(run_id, f"{_TURN_PREFIX}{interaction_id}#")
        if lacks_first_turn(turns):
            turns = with_legacy_turns(turns, self._turns_at(run_id, legacy_turn_prefix(interaction_id)))
        return sorted(turns, key=lambda t: t.n)
