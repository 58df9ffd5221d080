"""What deploys onto an existing stack: DynamoDB creates (or deletes) one GSI per UpdateTable, and
CloudFormation fails a stack update of a table that creates or deletes two (aws-cdk issue 12246: "Cannot
perform more than one GSI creation or deletion in a single update"), then rolls back. A new stack takes
any number, so only a diff against the previous release's table shows it: this release's table may add
or remove at most one index, and the indexes it keeps keep their keys (a changed key is a delete and a
create)."""

from __future__ import annotations

from typing import Any

import pytest

from baton.workflows.table import GLOBAL_SECONDARY_INDEXES
from tests.infra.conftest import resources

pytestmark = pytest.mark.infra

# The previous release's indexes, (name, partition key, sort key), as of commit 7a6b1a5
# (`git show 7a6b1a5:layers/baton/python/baton/workflows/table.py`). When a release ships, move this to
# its table, so each release's upgrade is checked against the one before it.
PREVIOUS_RELEASE = "7a6b1a5"
PREVIOUS_INDEXES = {
    ("pending", "GSI1PK", "GSI1SK"),
    ("by_status", "GSI2PK", "GSI2SK"),
    ("all_pending", "GSI3PK", "GSI3SK"),
    ("due", "GSI4PK", "GSI4SK"),
}


def _deployed_indexes(cfn: dict[str, Any]) -> set[tuple[str, str, str]]:
    (table,) = resources(cfn, "AWS::DynamoDB::Table").values()
    indexes = set()
    for gsi in table["Properties"]["GlobalSecondaryIndexes"]:
        keys = {k["KeyType"]: k["AttributeName"] for k in gsi["KeySchema"]}
        indexes.add((gsi["IndexName"], keys["HASH"], keys["RANGE"]))
    return indexes


def test_this_release_creates_or_deletes_at_most_one_index(cfn: dict[str, Any]) -> None:
    deployed = _deployed_indexes(cfn)
    previous_names = {name for name, _, _ in PREVIOUS_INDEXES}
    created = {name for name, _, _ in deployed} - previous_names
    deleted = previous_names - {name for name, _, _ in deployed}
    assert len(created) + len(deleted) <= 1, (PREVIOUS_RELEASE, sorted(created), sorted(deleted))
    assert deployed >= PREVIOUS_INDEXES  # kept, with the same keys
    assert created == {"pending_by_node"}  # GSI5; the decision log's pages need none (AUD#<seq> copies)


def test_the_deployed_indexes_are_the_shared_declaration(cfn: dict[str, Any]) -> None:
    declared = {(g["name"], g["partition_key"], g["sort_key"]) for g in GLOBAL_SECONDARY_INDEXES}
    assert _deployed_indexes(cfn) == declared
