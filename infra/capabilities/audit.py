"""audit (optional, context `audit_bucket=true`): the decision log streamed to an S3 bucket with Object Lock.

Every chained decision record (baton/domain/audit.py) is copied, as its canonical JSON with its hash, to
`runs/<run>/<seq>-<event id>.json` in a bucket where it cannot be changed or deleted until its retention
ends: the table's DynamoDB stream (NEW_IMAGE, filtered to inserted event items that carry a `seq`, not
a record's `AUD#<seq>` copy for the decision log's pages) feeds the `audit_archive` Lambda
(functions/audit_archive), which puts each record once. With the table alone, a rewrite of a whole chain
and its head goes unseen; the bucket's copy is what such a rewrite is checked against.

Options (infra/config.py): `audit_retention_days` (default 365) and `audit_lock_mode`: `GOVERNANCE`
(default: users with s3:BypassGovernanceRetention may still shorten or delete, e.g. to fix a mistaken
deployment) or `COMPLIANCE` (nobody, the root user included, can delete a record or shorten its
retention until it ends; choose it only once the retention is right). The bucket is private (all public
access blocked, bucket-owner objects), TLS only, S3-managed encryption, versioned (Object Lock needs it),
retained when the stack is deleted, and logs its access to a bucket of its own.

A batch the Lambda cannot archive is retried (bisected, so one bad record is retried alone) up to
`STREAM_RETRIES` times or until it is `MAX_RECORD_AGE` old, then described on the failure queue (an SQS
queue, SQS-managed encryption, TLS only, kept 14 days): its message names the shard and the sequence
numbers of the records not archived, which are still in the table (`baton audit export <run>`). The
`audit-archive-failed` alarm fires on the first message in it, so no record leaves the stream unseen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from baton.workflows.source_tree import source_tree
from infra.assets import asset_options
from infra.buckets import log_access, private_bucket
from infra.capabilities.functions import ARCHITECTURE, RUNTIME

if TYPE_CHECKING:
    from collections.abc import Sequence

    from infra.config import TeamConfig

FUNCTION = "audit_archive"
STREAM_RETRIES = 10  # then the batch goes to the failure queue (the stream's default retries forever)
MAX_RECORD_AGE = Duration.hours(12)  # well inside the stream's 24 h retention: nothing expires unseen


class AuditArchive(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: TeamConfig,
        table: dynamodb.Table,
        layers: Sequence[lambda_.ILayerVersion],
        alarm_topic: sns.ITopic | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        cfn_table = table.node.default_child
        assert isinstance(cfn_table, dynamodb.CfnTable)
        cfn_table.stream_specification = dynamodb.CfnTable.StreamSpecificationProperty(stream_view_type="NEW_IMAGE")
        self.access_logs = private_bucket(
            self, "AccessLogs", expire_after_days=365, removal_policy=RemovalPolicy.RETAIN
        )
        retention = Duration.days(config.audit_retention_days)
        self.bucket = private_bucket(
            self,
            "Bucket",
            versioned=True,
            object_lock_default_retention=s3.ObjectLockRetention.compliance(retention)
            if config.audit_lock_mode == "COMPLIANCE"
            else s3.ObjectLockRetention.governance(retention),
            removal_policy=RemovalPolicy.RETAIN,
        )
        log_access(self.bucket, self.access_logs, "audit/")
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"{config.prefix}-{FUNCTION}: reads the table's stream, puts records in the audit bucket",
        )
        log_group = logs.LogGroup(
            self,
            "Logs",
            log_group_name=f"/aws/lambda/{config.prefix}-{FUNCTION}",
            retention=logs.RetentionDays.THREE_MONTHS,
            removal_policy=RemovalPolicy.DESTROY,
        )
        log_group.grant_write(self.role)
        directory = str(source_tree().function_dir(FUNCTION))
        self.function = lambda_.Function(
            self,
            "Function",
            function_name=f"{config.prefix}-{FUNCTION}",
            description="Copies each chained decision record to the Object Lock audit bucket",
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler="handler.lambda_handler",
            code=lambda_.Code.from_asset(directory, **asset_options(directory)),
            layers=list(layers),
            timeout=Duration.seconds(60),
            memory_size=256,
            role=self.role,
            log_group=log_group,
            tracing=lambda_.Tracing.ACTIVE,
            environment={"BATON_AUDIT_BUCKET": self.bucket.bucket_name, "POWERTOOLS_SERVICE_NAME": "baton"},
        )
        # Only new objects: no read, no delete, no retention change.
        self.role.add_to_policy(
            iam.PolicyStatement(actions=["s3:PutObject"], resources=[self.bucket.arn_for_objects("runs/*")])
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
                resources=[cfn_table.attr_stream_arn],
            )
        )
        self.role.add_to_policy(iam.PolicyStatement(actions=["dynamodb:ListStreams"], resources=["*"]))
        self.failed = sqs.Queue(
            self,
            "Failed",
            queue_name=f"{config.prefix}-{FUNCTION}-failed",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        self.failed_alarm = cw.Alarm(
            self,
            "FailedAlarm",
            alarm_name=f"{config.prefix}-audit-archive-failed",
            alarm_description="Decision records the audit archive could not copy to the Object Lock bucket "
            "(the failure queue names their shard and sequence numbers; the records are still in the table)",
            metric=self.failed.metric_approximate_number_of_messages_visible(
                period=Duration.minutes(5), statistic="Maximum"
            ),
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
        )
        if alarm_topic is not None:
            self.failed_alarm.add_alarm_action(cw_actions.SnsAction(alarm_topic))
        self.stream = lambda_.EventSourceMapping(
            self,
            "Stream",
            target=self.function,
            event_source_arn=cfn_table.attr_stream_arn,
            starting_position=lambda_.StartingPosition.TRIM_HORIZON,
            batch_size=100,
            bisect_batch_on_error=True,  # a bad record is retried alone; the others still land
            retry_attempts=STREAM_RETRIES,
            max_record_age=MAX_RECORD_AGE,
            on_failure=event_sources.SqsDlq(self.failed),
            filters=[
                lambda_.FilterCriteria.filter(
                    {
                        "eventName": lambda_.FilterRule.is_equal("INSERT"),
                        "dynamodb": {
                            "NewImage": {
                                "seq": {"N": lambda_.FilterRule.exists()},
                                "record": {"S": lambda_.FilterRule.is_equal("event")},
                            }
                        },
                    }
                )
            ],
        )
        self.function.node.add_dependency(self.role)
