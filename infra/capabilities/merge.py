"""merge: the CodeBuild project of the review gate's builds, the bounded diff (started by `diff_start`)
and the merge (`merge_start`), each a .waitForTaskToken task whose token stays in Baton's table. Its
buildspec (infra/buildspec/merge.yml) runs `python -m baton.merge.build`, which clones the team
repository, diffs or merges (and pushes), and writes its report into the table: the build's role may
PutItem there and nothing else on the table (no read, no return values), and it may not call Step
Functions at all. The project's state-change rule (`report_to`) invokes `build_finished`, which sends
the token."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3_assets as s3_assets
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.assets import asset_options

if TYPE_CHECKING:
    from aws_cdk import aws_lambda as lambda_
    from aws_cdk import aws_sqs as sqs

    from infra.config import TeamConfig

BUILDSPEC = Path(__file__).resolve().parents[1] / "buildspec" / "merge.yml"
# What a build's report item holds (baton/adapters/build_records.py `put_report`): its only write.
REPORT_ATTRIBUTES = ["PK", "SK", "record", "build_key", "report"]
# CodeBuild's terminal build statuses: the end of a build, whatever it did.
FINISHED_STATUSES = ["SUCCEEDED", "FAILED", "FAULT", "STOPPED", "TIMED_OUT"]
_CODECOMMIT = re.compile(r"^https://git-codecommit\.([a-z0-9-]+)\.amazonaws\.com/v1/repos/([A-Za-z0-9._-]+)$")


def load_buildspec() -> dict[str, object]:
    loaded = yaml.safe_load(BUILDSPEC.read_text())
    if not isinstance(loaded, dict):
        raise ValueError(f"{BUILDSPEC} is not a buildspec mapping")
    return loaded


class Merge(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: TeamConfig,
        package_dir: str,
        table: dynamodb.ITable,
        key: kms.IKey,
    ) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        stack = Stack.of(self)
        package = s3_assets.Asset(self, "BatonPackage", path=package_dir, **asset_options(package_dir))
        log_group = logs.LogGroup(
            self,
            "Logs",
            log_group_name=f"/aws/codebuild/{config.prefix}-merge",
            retention=logs.RetentionDays.THREE_MONTHS,
            removal_policy=RemovalPolicy.DESTROY,
        )
        env: dict[str, codebuild.BuildEnvironmentVariable] = {
            "BATON_REPO_URL": codebuild.BuildEnvironmentVariable(value=config.repository),
            "BATON_TABLE_NAME": codebuild.BuildEnvironmentVariable(value=table.table_name),
        }
        token_secret: secretsmanager.ISecret | None = None
        if config.repository_token_secret:
            if config.repository_token_secret.startswith("arn:"):
                token_secret = secretsmanager.Secret.from_secret_complete_arn(
                    self, "RepoToken", config.repository_token_secret
                )
            else:
                token_secret = secretsmanager.Secret.from_secret_name_v2(
                    self, "RepoToken", config.repository_token_secret
                )
            env["BATON_GIT_TOKEN"] = codebuild.BuildEnvironmentVariable(
                type=codebuild.BuildEnvironmentVariableType.SECRETS_MANAGER, value=token_secret.secret_name
            )
        self.project = codebuild.Project(
            self,
            "Project",
            project_name=f"{config.prefix}-merge",
            description="Baton: the bounded diff or the merge of a run branch, reported into Baton's table",
            source=codebuild.Source.s3(bucket=package.bucket, path=package.s3_object_key),
            build_spec=codebuild.BuildSpec.from_object(load_buildspec()),
            environment=codebuild.BuildEnvironment(
                build_image=codebuild.LinuxArmBuildImage.AMAZON_LINUX_2023_STANDARD_3_0,
                compute_type=codebuild.ComputeType.SMALL,
                privileged=False,
            ),
            environment_variables=env,
            encryption_key=key,
            timeout=Duration.minutes(20),
            concurrent_build_limit=None,
            logging=codebuild.LoggingOptions(cloud_watch=codebuild.CloudWatchLoggingOptions(log_group=log_group)),
        )
        role = self.project.role
        assert role is not None
        # The build's one write: its report item, without reading anything back (no return values).
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["dynamodb:PutItem"],
                resources=[table.table_arn],
                conditions={
                    "ForAllValues:StringEquals": {"dynamodb:Attributes": REPORT_ATTRIBUTES},
                    "StringEqualsIfExists": {"dynamodb:ReturnValues": "NONE"},
                },
            )
        )
        match = _CODECOMMIT.match(config.repository)
        if match:
            region, name = match.groups()
            repo_arn = stack.format_arn(service="codecommit", region=region, resource=name)
            role.add_to_principal_policy(
                iam.PolicyStatement(actions=["codecommit:GitPull", "codecommit:GitPush"], resources=[repo_arn])
            )

    def report_to(self, function: lambda_.IFunction, *, dead_letter_queue: sqs.IQueue | None = None) -> events.Rule:
        """The end of every build of this project invokes `function` (build_finished), and nothing else does:
        the rule matches this project's terminal state changes only. An end EventBridge could not deliver
        waits in `dead_letter_queue` (the function's own, infra/capabilities/dead_letters.py)."""
        return events.Rule(
            self,
            "BuildFinished",
            rule_name=f"{self.config.prefix}-build-finished",
            description=f"A {self.project.project_name} build ended: send the review gate's parked token",
            event_pattern=events.EventPattern(
                source=["aws.codebuild"],
                detail_type=["CodeBuild Build State Change"],
                detail={"project-name": [self.project.project_name], "build-status": FINISHED_STATUSES},
            ),
            targets=[
                targets.LambdaFunction(
                    function, retry_attempts=4, max_event_age=Duration.hours(2), dead_letter_queue=dead_letter_queue
                )
            ],
        )
