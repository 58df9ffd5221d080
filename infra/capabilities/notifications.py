"""notifications: one KMS-encrypted SNS topic; per-channel filtered subscriptions (the subscriber
Lambdas and the people on the `email` channel); a second encrypted topic for alarms."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subs
from constructs import Construct

from baton.notify.sns import filter_policy_for

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from aws_cdk import aws_sqs as sqs

    from baton.workflows.resources import FunctionSpec


def filter_policy(channel: str) -> dict[str, sns.SubscriptionFilter]:
    """`baton.notify.sns.filter_policy_for(channel)` in CDK's terms (the same policy the local stack sets)."""
    return {
        attribute: sns.SubscriptionFilter.string_filter(allowlist=list(values))
        for attribute, values in filter_policy_for(channel).items()
    }


class Notifications(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, prefix: str, alarm_emails: Sequence[str]) -> None:
        super().__init__(scope, construct_id)
        self.key = kms.Key(
            self,
            "Key",
            alias=f"alias/{prefix}-notifications",
            description=f"{prefix}: encrypts the notifications and alarms topics",
            enable_key_rotation=True,
            removal_policy=RemovalPolicy.RETAIN,
        )
        # CloudWatch alarms publish to the (encrypted) alarms topic.
        self.key.grant(iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*")
        self.topic = sns.Topic(
            self,
            "Topic",
            topic_name=f"{prefix}-notifications",
            display_name="Baton",
            master_key=self.key,
            enforce_ssl=True,
        )
        self.alarm_topic = sns.Topic(
            self,
            "AlarmTopic",
            topic_name=f"{prefix}-alarms",
            display_name="Baton alarms",
            master_key=self.key,
            enforce_ssl=True,
        )
        for email in alarm_emails:
            self.alarm_topic.add_subscription(subs.EmailSubscription(email))

    def subscribe_emails(self, emails: Sequence[str]) -> None:
        for email in emails:
            self.topic.add_subscription(subs.EmailSubscription(email, filter_policy=filter_policy("email")))

    def subscribe_functions(
        self,
        functions: Mapping[str, lambda_.IFunction],
        specs: Sequence[FunctionSpec],
        *,
        skip: Sequence[str] = (),
        dead_letter_queue: Callable[[str], sqs.IQueue],
    ) -> None:
        """One filtered subscription per function that declares `subscribes_to_channel`. SNS invokes it
        asynchronously: `dead_letter_queue(name)` is the function's queue (its on-failure destination),
        also the subscription's, for a message SNS cannot hand to Lambda at all (a client error, such as a
        missing permission, is not retried)."""
        for spec in specs:
            channel = spec.subscribes_to_channel
            if channel is None or channel in skip:
                continue
            self.topic.add_subscription(
                subs.LambdaSubscription(
                    functions[spec.name],
                    filter_policy=filter_policy(channel),
                    dead_letter_queue=dead_letter_queue(spec.name),
                )
            )
