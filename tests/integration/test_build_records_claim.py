"""A build's end claims its record on the DynamoDB adapter (moto) in one conditional UpdateItem that
returns the record either way: claimed once, then refused as handled; a later build's record, or none,
refused as not this build."""

from __future__ import annotations

from typing import TYPE_CHECKING

import boto3

from baton.adapters.build_records import DynamoBuildRecords
from baton.domain.merge_contracts import BuildRecord

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack


def test_a_builds_end_claims_its_record_once(moto_stack: MotoStack) -> None:
    records = DynamoBuildRecords(moto_stack.provisioned.table_name, boto3.client("dynamodb"))
    record = BuildRecord(run_id="r1", gate="ship", kind="diff", build_key="b1", task_token="tok", started_at="t")
    assert records.claim_build("r1", "ship", "diff", "b1") == (False, None)  # no record yet
    records.put_build(record)
    assert records.claim_build("r1", "ship", "diff", "b1") == (True, record.model_copy(update={"status": "finished"}))
    assert records.claim_build("r1", "ship", "diff", "b1") == (False, record.model_copy(update={"status": "finished"}))
    later = record.model_copy(update={"build_key": "b2"})
    records.put_build(later)  # the gate entered again: its new build replaces the record
    assert records.claim_build("r1", "ship", "diff", "b1") == (False, later)
    assert records.get_build("r1", "ship", "diff") == later  # untouched by the stale end
