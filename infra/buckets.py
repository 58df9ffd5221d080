"""The team's private S3 buckets, set up one way (the inbox's site and logs, the audit archive and its
access logs: `infra/capabilities/inbox.py`, `infra/capabilities/audit.py`).

Every bucket here is private (all public access blocked), TLS only (a bucket policy denies plain HTTP)
and SSE-S3 encrypted; objects are the bucket owner's unless a writer needs an ACL grant (CloudFront's
standard logs). A bucket's server access logs are delivered under a bucket policy for the logging
service (`log_access`): CDK's own `server_access_logs_bucket` grants an ACL unless a feature flag is set
in cdk.json."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3

if TYPE_CHECKING:
    from constructs import Construct


def private_bucket(
    scope: Construct,
    construct_id: str,
    *,
    removal_policy: RemovalPolicy,
    expire_after_days: int | None = None,
    object_ownership: s3.ObjectOwnership = s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    versioned: bool | None = None,
    object_lock_default_retention: s3.ObjectLockRetention | None = None,
) -> s3.Bucket:
    """A private, TLS-only, SSE-S3 bucket; `expire_after_days` deletes objects that old (logs).
    A default retention turns Object Lock on (it needs `versioned`)."""
    return s3.Bucket(
        scope,
        construct_id,
        encryption=s3.BucketEncryption.S3_MANAGED,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        object_ownership=object_ownership,
        enforce_ssl=True,
        versioned=versioned,
        object_lock_enabled=True if object_lock_default_retention is not None else None,
        object_lock_default_retention=object_lock_default_retention,
        lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(expire_after_days))]
        if expire_after_days is not None
        else None,
        removal_policy=removal_policy,
    )


def log_access(bucket: s3.Bucket, target: s3.Bucket, prefix: str) -> None:
    """S3 server access logs of `bucket` to `target` under `prefix`, under a bucket policy for the
    logging service that names `bucket` and this account."""
    cfn_bucket = bucket.node.default_child
    assert isinstance(cfn_bucket, s3.CfnBucket)
    cfn_bucket.logging_configuration = s3.CfnBucket.LoggingConfigurationProperty(
        destination_bucket_name=target.bucket_name, log_file_prefix=prefix
    )
    target.add_to_resource_policy(
        iam.PolicyStatement(
            principals=[iam.ServicePrincipal("logging.s3.amazonaws.com")],
            actions=["s3:PutObject"],
            resources=[target.arn_for_objects(f"{prefix}*")],
            conditions={
                "ArnLike": {"aws:SourceArn": bucket.bucket_arn},
                "StringEquals": {"aws:SourceAccount": Stack.of(bucket).account},
            },
        )
    )
