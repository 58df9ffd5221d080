"""The one DynamoDB table, declared once. The CDK construct and the local stack both read this.

Keys:
  PK = RUN#<run_id>
  SK = RUN | INT#<iid> | EVT#<ulid> | MSG#<node>#<ulid> | DLG#<iid>#<n> | AGENT#<key> | WAIT#<gate> | PEND#<iid>
       | AUD#<seq, 12 digits>
  AUD#<seq> is a copy of a run's chained decision record (its EVT# item is the event log's), put in the
  record's own transaction, before PEND# (never in a snapshot), so a page of the decision log is one
  consistent Query of a sort key range of the run's partition (`read_audit_page`), with no index;
  records chained before it have no copy (the page then reads the chain whole). Not an index on purpose:
  CloudFormation fails a stack update that creates two GSIs, and this release's one new index is GSI5
  (`tests/infra/test_table_upgrade.py`).
  AGENT#<key> is an agent's opaque state (`dynamo_agent_states.py`), also before PEND#: never in a snapshot.
  PEND#<iid> is the marker of a pending question, tool await or pause (a copy of its item, present exactly
  while it is pending): it sorts after DLG# (a review's dialogue turns), EVT#, INT# and MSG#, so one Query
  from PEND# on reads the open questions, the run and its waits (O(pending)), never the run's history or
  its review dialogues (turns stored before they moved sit under TURN#<iid>#<n>); no index is needed, and the
  read is consistent (a GSI's is not).
GSI1 (sparse, "pending"): present only while an interaction is pending or a token is parked, or while
  a quorum pause's vote tally (APT#<iid>) is open (QUORUM: the reconciler's met-but-unreleased list,
  `baton/adapters/dynamo_approvals.py`).
  GSI1PK = PENDING#<kind> | PARKED | QUORUM ; GSI1SK = <created_at>#<id>
GSI2 ("by_status"): every interaction, by kind and status; the sort key starts with the run id so
  "interrupts of one session with one status" is a begins_with Query.
  GSI2PK = <kind>#<status> ; GSI2SK = <run_id>#<created_at>#<iid>
GSI3 (sparse, "all_pending"): every pending interaction of every kind, in one partition, so the inbox's
  first page over all kinds (or several) is ONE Query (`DynamoStore.page_all_pending`), not one per kind.
  GSI3PK = PENDING ; GSI3SK = <created_at>#<iid> — written with the GSI1 keys, gone with them (an item
  is written whole, and only a pending one carries them). One partition is acceptable for a team table:
  a GSI partition takes 1,000 writes/s and 3,000 reads/s, and each key here changes only when an item
  starts or stops waiting for a person (a claim or a status change); a team asks people a few questions
  a minute, orders of magnitude below that. A table many teams share would shard it
  (`PENDING#<n>`, one Query per shard). Items written before the index lack the keys: the local stack
  adds them when it loads its saved table (`baton/local/persist.py`); a deployed table's older pending
  items get them from `DynamoStore.backfill_all_pending` (`baton migrate index-keys`, once); until
  then such an item is listed under its kind's filter (GSI1) but not on the all-kinds page.
  A pending interaction also carries `blocks`, the gate parked on it (written by the park: `put_wait`,
  `mark_blocked`), so the page is that one Query with no read of the WAIT# items; the same backfill
  writes it for waits parked before it (`baton.runtime.migrations.mark_parked_blocks`).
GSI4 (sparse, "due"): a pending interaction whose deadline Baton acts on by itself, by its deadline, so a
  sweep reads what is due, never everything pending: every interrupt with an `expires_at` (the interrupt
  sweeper times it out or takes its default), a question only when it declared a default (the
  reconciler takes it), every tool approval and `ask` with one (the reconciler ends it as its waiter's
  read would, so a blocking ask whose agent died still ends; a hosted pause is left to its token's
  deadline). GSI4PK = DUE#<kind> ; GSI4SK = <expires_at>#<iid> (`due_keys`); the sweep's Query is
  `GSI4SK < "<now>$"` (timestamps are one fixed-length ISO form, `baton.ids.iso`, and "$" sorts right
  after "#"). Written with the GSI1 keys, gone with them. Items written before the index lack the keys:
  the local stack adds them when it loads its saved table (`baton/local/persist.py`); a deployed table's
  get them from `DynamoStore.backfill_all_pending` (`baton migrate index-keys`, once).
GSI5 (sparse, "pending_by_node"): every pending interaction of one node, in created order, so the inbox's
  node filter is a key condition (`page_pending`, `page_all_pending`): a rare node's page reads its own
  items, never every pending one. GSI5PK = PENDING#node#<node> ; GSI5SK = <created_at>#<iid>
  (`pending_node_keys`), written with the GSI1 keys in the same put, gone with them. Items written before
  the index lack the keys: `DynamoStore.backfill_all_pending` adds them with the GSI3 keys (`baton
  migrate index-keys`; the local stack on load); until then such an item is missing from node pages.
Outside the runs: PK = INBOX_SESSIONS ; SK = SESSION#<operator>#<session_id>, one open local inbox session
  each (`baton/adapters/inbox_sessions.py`; TTL at its expiry), read by GetItem, ended by Query + DeleteItem.
  PK = AWAY ; SK = OPERATOR#<operator>, one operator away with their delegate each
  (`baton/adapters/dynamo_aways.py`; TTL a day after its `until`), read by GetItem or one Query of all.
The TTL attribute (`expiration`) is set only on items that may expire; decision records and a run's
chain head never carry it.
"""

from __future__ import annotations

from typing import Any, Final

PK: Final = "PK"
SK: Final = "SK"
GSI_PENDING: Final = "pending"
GSI_BY_STATUS: Final = "by_status"
GSI_ALL_PENDING: Final = "all_pending"
ALL_PENDING_PK_ATTRIBUTE: Final = "GSI3PK"
ALL_PENDING_SK_ATTRIBUTE: Final = "GSI3SK"
ALL_PENDING_PK: Final = "PENDING"
GSI_DUE: Final = "due"
DUE_PK_ATTRIBUTE: Final = "GSI4PK"
DUE_SK_ATTRIBUTE: Final = "GSI4SK"
# what the sweeps read by deadline (see GSI4 above)
DUE_KINDS: Final = ("interrupt", "question", "tool_approval", "ask")
GSI_PENDING_BY_NODE: Final = "pending_by_node"
NODE_PK_ATTRIBUTE: Final = "GSI5PK"
NODE_SK_ATTRIBUTE: Final = "GSI5SK"
TTL_ATTRIBUTE: Final = "expiration"

KEY_ATTRIBUTES: Final[list[tuple[str, str]]] = [
    (PK, "S"),
    (SK, "S"),
    ("GSI1PK", "S"),
    ("GSI1SK", "S"),
    ("GSI2PK", "S"),
    ("GSI2SK", "S"),
    (ALL_PENDING_PK_ATTRIBUTE, "S"),
    (ALL_PENDING_SK_ATTRIBUTE, "S"),
    (DUE_PK_ATTRIBUTE, "S"),
    (DUE_SK_ATTRIBUTE, "S"),
    (NODE_PK_ATTRIBUTE, "S"),
    (NODE_SK_ATTRIBUTE, "S"),
]

GLOBAL_SECONDARY_INDEXES: Final[list[dict[str, Any]]] = [
    {"name": GSI_PENDING, "partition_key": "GSI1PK", "sort_key": "GSI1SK", "projection": "ALL"},
    {"name": GSI_BY_STATUS, "partition_key": "GSI2PK", "sort_key": "GSI2SK", "projection": "ALL"},
    {
        "name": GSI_ALL_PENDING,
        "partition_key": ALL_PENDING_PK_ATTRIBUTE,
        "sort_key": ALL_PENDING_SK_ATTRIBUTE,
        "projection": "ALL",
    },
    {"name": GSI_DUE, "partition_key": DUE_PK_ATTRIBUTE, "sort_key": DUE_SK_ATTRIBUTE, "projection": "ALL"},
    {
        "name": GSI_PENDING_BY_NODE,
        "partition_key": NODE_PK_ATTRIBUTE,
        "sort_key": NODE_SK_ATTRIBUTE,
        "projection": "ALL",
    },
]


def pending_node_partition(node: str) -> str:
    """The `pending_by_node` partition of `node`'s pending interactions."""
    return f"PENDING#node#{node}"


def pending_node_keys(node: str, created_at: str, interaction_id: str) -> dict[str, str]:
    """The `pending_by_node` index's keys of a pending interaction."""
    return {NODE_PK_ATTRIBUTE: pending_node_partition(node), NODE_SK_ATTRIBUTE: f"{created_at}#{interaction_id}"}


def due_keys(kind: str, interaction_id: str, expires_at: str | None, *, has_default: bool) -> dict[str, str]:
    """The `due` index's keys of a pending interaction ({} when no sweep reads it by its deadline)."""
    if expires_at is None or kind not in DUE_KINDS or (kind == "question" and not has_default):
        return {}
    return {DUE_PK_ATTRIBUTE: f"DUE#{kind}", DUE_SK_ATTRIBUTE: f"{expires_at}#{interaction_id}"}


def due_before(now: str) -> str:
    """The bound of a due Query: every `GSI4SK` of a deadline at or before `now` sorts below it."""
    return f"{now}$"


def create_table_kwargs(table_name: str) -> dict[str, Any]:
    """`CreateTable` arguments for the local stack (the CDK construct maps the same lists)."""
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": t} for n, t in KEY_ATTRIBUTES],
        "KeySchema": [
            {"AttributeName": PK, "KeyType": "HASH"},
            {"AttributeName": SK, "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": gsi["name"],
                "KeySchema": [
                    {"AttributeName": gsi["partition_key"], "KeyType": "HASH"},
                    {"AttributeName": gsi["sort_key"], "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": gsi["projection"]},
            }
            for gsi in GLOBAL_SECONDARY_INDEXES
        ],
    }
