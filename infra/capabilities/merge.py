"""merge: the CodeBuild project the review gate's merge task starts (through the `merge_start`
Lambda, a .waitForTaskToken task). Its buildspec (infra/buildspec/merge.yml) runs
`python -m baton.merge` against the team repository, pushes, and reports back with SendTaskSuccess/Failure
through `python -m baton.merge.report` (layers/baton/python/baton/merge/report.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3_assets as s3_assets
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.assets import asset_options

if TYPE_CHECKING:
    from collections.abc import Sequence

    from infra.config import TeamConfig

BUILDSPEC = Path(__file__).resolve().parents[1] / "buildspec" / "merge.yml"
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
        state_machine_arns: Sequence[str],
        key: kms.IKey,
    ) -> None:
        super().__init__(scope, construct_id)
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
            description="Baton: merge a reviewed run branch and report to the waiting gate",
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
        if state_machine_arns:
            role.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=["states:SendTaskSuccess", "states:SendTaskFailure"], resources=list(state_machine_arns)
                )
            )
        match = _CODECOMMIT.match(config.repository)
        if match:
            region, name = match.groups()
            repo_arn = stack.format_arn(service="codecommit", region=region, resource=name)
            role.add_to_principal_policy(
                iam.PolicyStatement(actions=["codecommit:GitPull", "codecommit:GitPush"], resources=[repo_arn])
            )
