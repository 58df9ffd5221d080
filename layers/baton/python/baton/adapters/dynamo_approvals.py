"""The `ApprovalStore` part of the DynamoDB adapter (`baton/ports.py`): the votes on quorum pauses.

Items, in the run's partition (both sort before PEND#, so `snapshot_run` never reads them):
- `APV#<interaction>#<operator>`: one vote, put with `attribute_not_exists(PK)` (a second vote of the
  same operator is refused by the key: counted once);
- `APT#<interaction>`: the tally, `ADD approvals|rejections :one` conditioned on both counts being
  below their thresholds, so at most N approvals (or R rejections) are ever counted.
Both go in one transaction with a ConditionCheck that the interaction is still pending and the vote's
`approval_recorded` event, a decision: chained, with the run's decision-log head advanced in the same
transaction (`DynamoTable._record_items`), so `audit verify` covers every vote; a vote that lost the
head (or the tally) to a concurrent write reads the head again and retries (`DynamoTable._write_chained`).
The release itself is the interaction's own transition, guarded by `QuorumMet` (`quorum_check` below), written by
`DynamoStore.transition_interaction`.

A met quorum never waits: while its pause is open the tally carries the sparse keys
`GSI1PK = QUORUM`, `GSI1SK = <first vote's time>#<interaction>` of the `pending` index, with the
thresholds it was counted against; the release's `QuorumMet` item is an Update that removes them (in
the release's transaction, conditioned on the tally being met). So `list_met_tallies` (one Query of that
partition, filtered to tallies at a threshold; never a Scan) is exactly the quorums met but not
released: a decider that died after the vote that met it leaves its tally there, and the reconciler
releases it (`baton/services/reconciler.py`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from baton.adapters.dynamo_items import lost_any_race
from baton.adapters.dynamo_table import DynamoTable
from baton.domain.approval import Approval, ApprovalTally, MetTally
from baton.workflows.table import GSI_PENDING, TTL_ATTRIBUTE

if TYPE_CHECKING:
    from baton.domain.approval import VoteOutcome
    from baton.models import Event
    from baton.ports import QuorumMet

OPEN_TALLIES = "QUORUM"  # the `pending` index partition of the tallies of open quorum pauses
_ser = TypeSerializer()
_de = TypeDeserializer()
# Rounds of a vote that met a concurrent transaction on the tally or the run's chain head (each round, one
# racer wins; 50 votes and other decisions on one run need more rounds than a decision racing the head alone).
VOTE_ATTEMPTS = 40


def _item(values: dict[str, Any]) -> dict[str, Any]:
    return {k: _ser.serialize(v) for k, v in values.items() if v is not None}


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _de.deserialize(v) for k, v in item.items()}


def _pk(run_id: str) -> str:
    return f"RUN#{run_id}"


def vote_sk(interaction_id: str, operator: str) -> str:
    return f"APV#{interaction_id}#{operator}"


def tally_sk(interaction_id: str) -> str:
    return f"APT#{interaction_id}"


def quorum_check(table: str, guard: QuorumMet) -> dict[str, Any]:
    """The item of a `QuorumMet` guard: the tally has met the threshold it names, and (the release being
    in the same transaction) it leaves the met-but-unreleased list."""
    name, needed = ("approvals", guard.approvals) if guard.approvals is not None else ("rejections", guard.rejections)
    return {
        "Update": {
            "TableName": table,
            "Key": _item({"PK": _pk(guard.run_id), "SK": tally_sk(guard.interaction_id)}),
            "UpdateExpression": "REMOVE #gpk, #gsk",
            "ConditionExpression": "#n >= :needed",
            "ExpressionAttributeNames": {"#n": name, "#gpk": "GSI1PK", "#gsk": "GSI1SK"},
            "ExpressionAttributeValues": _item({":needed": needed}),
        }
    }


class _Refused(Exception):
    """A vote the table refused by a condition (a repeat, or a pause closed or at its threshold)."""

    def __init__(self, outcome: VoteOutcome) -> None:
        super().__init__(outcome)
        self.outcome = outcome


class DynamoApprovals(DynamoTable):
    def record_vote(
        self, vote: Approval, *, event: Event, approvals_needed: int, rejections_needed: int
    ) -> VoteOutcome:
        pk = _pk(vote.run_id)
        column = "approvals" if vote.vote == "approve" else "rejections"
        items: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": _item(
                        {"PK": pk, "SK": vote_sk(vote.interaction_id, vote.operator), "record": "approval"}
                        | vote.model_dump()
                        | {TTL_ATTRIBUTE: self._expiry(int(time.time()))}
                    ),
                    "ConditionExpression": "attribute_not_exists(PK)",
                }
            },
            {
                "Update": {
                    "TableName": self._table,
                    "Key": _item({"PK": pk, "SK": tally_sk(vote.interaction_id)}),
                    "UpdateExpression": "ADD #col :one SET #rec = :rec, #ttl = if_not_exists(#ttl, :ttl), "
                    "#gpk = :open, #gsk = if_not_exists(#gsk, :order), run_id = :run, interaction_id = :iid, "
                    "approvals_needed = :an, rejections_needed = :rn",
                    "ConditionExpression": "(attribute_not_exists(approvals) OR approvals < :an) AND "
                    "(attribute_not_exists(rejections) OR rejections < :rn)",
                    "ExpressionAttributeNames": {
                        "#col": column,
                        "#rec": "record",
                        "#ttl": TTL_ATTRIBUTE,
                        "#gpk": "GSI1PK",
                        "#gsk": "GSI1SK",
                    },
                    "ExpressionAttributeValues": _item(
                        {
                            ":one": 1,
                            ":rec": "tally",
                            ":an": approvals_needed,
                            ":rn": rejections_needed,
                            ":ttl": self._expiry(int(time.time())),
                            ":open": OPEN_TALLIES,
                            ":order": f"{vote.at}#{vote.interaction_id}",
                            ":run": vote.run_id,
                            ":iid": vote.interaction_id,
                        }
                    ),
                }
            },
            {
                "ConditionCheck": {
                    "TableName": self._table,
                    "Key": _item({"PK": pk, "SK": f"INT#{vote.interaction_id}"}),
                    "ConditionExpression": "#st = :pending",
                    "ExpressionAttributeNames": {"#st": "status"},
                    "ExpressionAttributeValues": _item({":pending": "pending"}),
                }
            },
        ]
        return self._vote_transaction(items, event)

    def _vote_transaction(self, items: list[dict[str, Any]], event: Event) -> VoteOutcome:
        """The vote, its tally, the pause's check and the chained event: the store's one head-race retry
        (`_write_chained`). A vote's tally is a hot item of its own (every vote on the pause updates it), so
        contention on it is a race to retry too (`lost_any_race`), not only the head's; the vote's or the
        tally's or the pause's condition failing is the outcome."""

        def failed(codes: list[str], err: ClientError) -> None:
            if codes[:1] == ["ConditionalCheckFailed"]:
                raise _Refused("already_counted") from err
            if "ConditionalCheckFailed" in codes[1:3]:
                raise _Refused("closed") from err

        try:
            self._write_chained(event.run_id, items, [event], None, failed, raced=lost_any_race, attempts=VOTE_ATTEMPTS)
        except _Refused as refused:
            return refused.outcome
        return "recorded"

    def list_votes(self, run_id: str, interaction_id: str) -> list[Approval]:
        resp = self._db.query(
            TableName=self._table,
            KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
            ExpressionAttributeValues=_item({":pk": _pk(run_id), ":prefix": f"APV#{interaction_id}#"}),
            ConsistentRead=True,
        )
        votes = [Approval.model_validate(_plain(i)) for i in resp.get("Items", [])]
        return sorted(votes, key=lambda v: (v.at, v.operator))

    def get_tally(self, run_id: str, interaction_id: str) -> ApprovalTally:
        resp = self._db.get_item(
            TableName=self._table,
            Key=_item({"PK": _pk(run_id), "SK": tally_sk(interaction_id)}),
            ConsistentRead=True,
        )
        found = _plain(resp.get("Item") or {})
        return ApprovalTally(approvals=int(found.get("approvals", 0)), rejections=int(found.get("rejections", 0)))

    def list_met_tallies(self) -> list[MetTally]:
        """The tallies at a threshold whose pause was not released (the sparse keys are removed by the
        release): one Query of the `pending` index, eventually consistent (the reconciler re-reads the
        interaction before it acts)."""
        found: list[MetTally] = []
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": GSI_PENDING,
            "KeyConditionExpression": "GSI1PK = :open",
            "FilterExpression": "approvals >= approvals_needed OR rejections >= rejections_needed",
            "ExpressionAttributeValues": _item({":open": OPEN_TALLIES}),
        }
        while True:
            resp = self._db.query(**kwargs)
            for raw in resp.get("Items", []):
                item = _plain(raw)
                found.append(MetTally(run_id=str(item["run_id"]), interaction_id=str(item["interaction_id"])))
            if not resp.get("LastEvaluatedKey"):
                return found
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    def close_tally(self, run_id: str, interaction_id: str) -> None:
        """Take a tally off the met-but-unreleased list (its pause ended another way: timed out)."""
        try:
            self._db.update_item(
                TableName=self._table,
                Key=_item({"PK": _pk(run_id), "SK": tally_sk(interaction_id)}),
                UpdateExpression="REMOVE #gpk, #gsk",
                ConditionExpression="attribute_exists(PK)",  # never create a tally
                ExpressionAttributeNames={"#gpk": "GSI1PK", "#gsk": "GSI1SK"},
            )
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise

    def clear_votes(self, run_id: str, interaction_id: str) -> None:
        keys = [{"PK": _pk(run_id), "SK": tally_sk(interaction_id)}]
        keys += [
            {"PK": _pk(run_id), "SK": vote_sk(v.interaction_id, v.operator)}
            for v in self.list_votes(run_id, interaction_id)
        ]
        for key in keys:
            self._db.delete_item(TableName=self._table, Key=_item(key))
