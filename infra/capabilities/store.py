"""store: the one DynamoDB table, mapped from the shared definition in `baton.workflows.table`."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from baton.workflows import table as shared

_TYPES = {"S": dynamodb.AttributeType.STRING, "N": dynamodb.AttributeType.NUMBER, "B": dynamodb.AttributeType.BINARY}
_PROJECTIONS = {
    "ALL": dynamodb.ProjectionType.ALL,
    "KEYS_ONLY": dynamodb.ProjectionType.KEYS_ONLY,
}


class Store(Construct):
    """On-demand, point-in-time recovery, TTL on `baton.workflows.table.TTL_ATTRIBUTE`, retained on delete."""

    def __init__(self, scope: Construct, construct_id: str, *, table_name: str) -> None:
        super().__init__(scope, construct_id)
        types = dict(shared.KEY_ATTRIBUTES)

        def attribute(name: str) -> dynamodb.Attribute:
            return dynamodb.Attribute(name=name, type=_TYPES[types[name]])

        self.table = dynamodb.Table(
            self,
            "Table",
            table_name=table_name,
            partition_key=attribute(shared.PK),
            sort_key=attribute(shared.SK),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=shared.TTL_ATTRIBUTE,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            deletion_protection=True,
            removal_policy=RemovalPolicy.RETAIN,
        )
        for gsi in shared.GLOBAL_SECONDARY_INDEXES:
            self.table.add_global_secondary_index(
                index_name=gsi["name"],
                partition_key=attribute(gsi["partition_key"]),
                sort_key=attribute(gsi["sort_key"]),
                projection_type=_PROJECTIONS[gsi["projection"]],
            )
