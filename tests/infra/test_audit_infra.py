"""The decision log's deployed option (infra/capabilities/audit.py): with `audit_bucket=true` the table
streams to a Lambda that copies each chained record to a private, TLS-only S3 bucket with Object Lock;
cdk-nag clean. Without the option none of it is deployed (the shared synth in conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from tests.infra.conftest import PREFIX

pytestmark = pytest.mark.infra


@pytest.fixture(scope="module")
def audited(synthesized_full: Any) -> Any:
    # FULL_CONTEXT: audit_bucket=true, 400 days, COMPLIANCE (and the other optional parts on).
    return synthesized_full


@pytest.fixture(scope="module")
def template(audited: Any) -> Template:
    return Template.from_json(json.loads(Path(audited.template_path).read_text()))


def test_the_bucket_is_object_locked_private_versioned_and_retained(template: Template) -> None:
    template.has_resource(
        "AWS::S3::Bucket",
        {
            "Properties": Match.object_like(
                {
                    "ObjectLockEnabled": True,
                    "ObjectLockConfiguration": {
                        "ObjectLockEnabled": "Enabled",
                        "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 400}},
                    },
                    "VersioningConfiguration": {"Status": "Enabled"},
                    "PublicAccessBlockConfiguration": {
                        "BlockPublicAcls": True,
                        "BlockPublicPolicy": True,
                        "IgnorePublicAcls": True,
                        "RestrictPublicBuckets": True,
                    },
                    "LoggingConfiguration": Match.object_like({"LogFilePrefix": "audit/"}),
                }
            ),
            "DeletionPolicy": "Retain",
        },
    )


def test_the_bucket_refuses_plain_http(template: Template) -> None:
    policies = template.find_resources("AWS::S3::BucketPolicy")
    denies = [
        s
        for p in policies.values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Deny" and s.get("Condition", {}).get("Bool", {}).get("aws:SecureTransport") == "false"
    ]
    assert len(denies) >= 2  # the audit bucket and its access-log bucket (and the inbox's own)


def test_the_table_streams_new_images_to_the_archive_function_filtered_to_chained_inserts(template: Template) -> None:
    template.has_resource_properties("AWS::DynamoDB::Table", {"StreamSpecification": {"StreamViewType": "NEW_IMAGE"}})
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "FunctionName": f"{PREFIX}-audit_archive",
            "Environment": {"Variables": Match.object_like({"BATON_AUDIT_BUCKET": Match.any_value()})},
        },
    )
    mappings = template.find_resources("AWS::Lambda::EventSourceMapping")
    [mapping] = mappings.values()
    props = mapping["Properties"]
    assert props["StartingPosition"] == "TRIM_HORIZON" and props["BisectBatchOnFunctionError"] is True
    [pattern] = [json.loads(f["Pattern"]) for f in props["FilterCriteria"]["Filters"]]
    # a chained event item, never its AUD#<seq> copy (the same record, archived once)
    assert pattern == {
        "eventName": ["INSERT"],
        "dynamodb": {"NewImage": {"seq": {"N": [{"exists": True}]}, "record": {"S": ["event"]}}},
    }


def test_the_archive_role_may_only_put_records(template: Template) -> None:
    roles = template.find_resources("AWS::IAM::Policy")
    statements = [
        s
        for p in roles.values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if "s3:PutObject" in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
    ]
    assert statements, "no role may put into the audit bucket"
    for statement in statements:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        assert not [a for a in actions if a.startswith("s3:") and a != "s3:PutObject"], statement


def test_the_audited_stack_is_cdk_nag_clean(audited: Any) -> None:
    from infra.nag import findings

    found = findings(audited.stack)
    assert not found, "unacknowledged cdk-nag findings:\n" + "\n".join(str(f) for f in found)


def test_without_the_option_nothing_is_deployed(synthesized: Any) -> None:
    template = json.loads(Path(synthesized.template_path).read_text())
    kinds = [r["Type"] for r in template["Resources"].values()]
    assert "AWS::Lambda::EventSourceMapping" not in kinds
    assert not any(r.get("Properties", {}).get("ObjectLockEnabled") for r in template["Resources"].values())


def test_a_bad_lock_mode_or_retention_is_refused() -> None:
    from infra.config import TeamConfig

    with pytest.raises(ValueError, match="audit_lock_mode"):
        TeamConfig(audit_bucket=True, audit_lock_mode="LOOSE")
    with pytest.raises(ValueError, match="audit_retention_days"):
        TeamConfig(audit_bucket=True, audit_retention_days=0)


def _ref_of(template: Template, kind: str, name_part: str) -> str:
    [logical] = [k for k, r in template.find_resources(kind).items() if name_part in json.dumps(r["Properties"])]
    return logical


def test_a_batch_that_cannot_be_archived_goes_to_an_encrypted_failure_queue_after_finite_retries(
    template: Template,
) -> None:
    queue = _ref_of(template, "AWS::SQS::Queue", f"{PREFIX}-audit_archive-failed")
    props = template.find_resources("AWS::SQS::Queue")[queue]["Properties"]
    assert props["SqsManagedSseEnabled"] is True and props["MessageRetentionPeriod"] == 14 * 24 * 3600
    [mapping] = template.find_resources("AWS::Lambda::EventSourceMapping").values()
    stream = mapping["Properties"]
    # finite: the stream's default (-1) retries a failing batch until it expires, never reaching a destination
    assert stream["MaximumRetryAttempts"] == 10 and stream["MaximumRecordAgeInSeconds"] == 12 * 3600
    assert stream["DestinationConfig"]["OnFailure"]["Destination"] == {"Fn::GetAtt": [queue, "Arn"]}
    # the queue refuses plain HTTP, and the archive function may send to it
    [policy] = [
        p
        for p in template.find_resources("AWS::SQS::QueuePolicy").values()
        if {"Ref": queue} in p["Properties"]["Queues"]
    ]
    assert any(
        s["Effect"] == "Deny" and s.get("Condition", {}).get("Bool", {}).get("aws:SecureTransport") == "false"
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
    )
    sends = [
        s
        for p in template.find_resources("AWS::IAM::Policy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if "sqs:SendMessage" in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
    ]
    assert any(s["Resource"] == {"Fn::GetAtt": [queue, "Arn"]} for s in sends)


def test_the_failure_queue_s_depth_alarms_to_the_alarm_topic(template: Template) -> None:
    queue = _ref_of(template, "AWS::SQS::Queue", f"{PREFIX}-audit_archive-failed")
    [alarm] = [
        a["Properties"]
        for a in template.find_resources("AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("AlarmName") == f"{PREFIX}-audit-archive-failed"
    ]
    assert alarm["MetricName"] == "ApproximateNumberOfMessagesVisible" and alarm["Namespace"] == "AWS/SQS"
    assert alarm["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": [queue, "QueueName"]}}]
    assert alarm["Threshold"] == 1 and alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    [action] = alarm["AlarmActions"]
    topics = template.find_resources("AWS::SNS::Topic")
    assert action["Ref"] in topics and "alarm" in json.dumps(topics[action["Ref"]]).lower()
