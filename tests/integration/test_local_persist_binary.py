"""The local stack keeps binary attributes across a restart: a build's report is stored compressed
(`adapters/build_records.py`), and `local/persist.py` once failed to save any table holding one, so
Ctrl-C lost every change since the last save."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import boto3
from moto import mock_aws

from baton.local import persist
from baton.workflows.table import create_table_kwargs


def test_a_binary_attribute_is_saved_and_restored_byte_for_byte(tmp_path: Path) -> None:
    os.environ.setdefault("AWS_REGION", "us-east-1")
    payload = zlib.compress(b"diff --git a/x b/x\n" * 200)
    with mock_aws():
        client = boto3.client("dynamodb", region_name=os.environ["AWS_REGION"])
        client.create_table(**create_table_kwargs("before"))
        item = {"PK": {"S": "RUN#r1"}, "SK": {"S": "BUILD#diff"}, "report": {"B": payload}, "n": {"N": "1"}}
        client.put_item(TableName="before", Item=item)
        path = tmp_path / persist.DATA_FILE
        persist.save(path, "token", persist.snapshot("before"))

        saved = persist.load(path)
        assert saved is not None and saved.token == "token"
        client.create_table(**create_table_kwargs("after"))
        persist.restore("after", saved.items)
        restored = client.get_item(TableName="after", Key={"PK": item["PK"], "SK": item["SK"]})["Item"]
    assert restored["report"]["B"] == payload
    assert restored["n"] == {"N": "1"}
