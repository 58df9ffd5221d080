"""Every cdk-nag AwsSolutions acknowledgement of the Baton stack, each with its reason, attached to
the narrowest construct that has the finding (a role, a resource), never to the whole stack."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from aws_cdk import Stack

from baton.domain.deadline import TIMER_STATE_MACHINE
from infra.capabilities.functions import bedrock_model_arns
from infra.nag import acknowledge
from infra.permissions import access_for

if TYPE_CHECKING:
    from baton.workflows.resources import FunctionSpec
    from infra.capabilities.api import Api
    from infra.capabilities.audit import AuditArchive
    from infra.capabilities.functions import Functions
    from infra.capabilities.gates import Gates
    from infra.capabilities.inbox import Inbox
    from infra.capabilities.merge import Merge
    from infra.capabilities.store import Store
    from infra.config import TeamConfig


class NaggedStack(Protocol):
    """What the acknowledgements read of the Baton stack (infra/stack.py's BatonStack): its capabilities."""

    @property
    def config(self) -> TeamConfig: ...
    @property
    def functions(self) -> Functions: ...
    @property
    def store(self) -> Store: ...
    @property
    def gates(self) -> Gates: ...
    @property
    def api(self) -> Api: ...
    @property
    def merge(self) -> Merge: ...
    @property
    def inbox(self) -> Inbox: ...
    @property
    def audit(self) -> AuditArchive | None: ...
    @property
    def state_machine_arns(self) -> dict[str, str]: ...
    def resolve(self, obj: Any) -> Any: ...


XRAY = (
    "X-Ray tracing: xray:PutTraceSegments/PutTelemetryRecords (and the sampling reads) support no "
    "resource-level permissions, so AWS requires Resource '*'"
)


def acknowledge_stack(stack: NaggedStack) -> None:
    from baton.workflows.resources import FUNCTIONS

    for spec in FUNCTIONS:
        _acknowledge_function(stack, spec)
    _acknowledge_gates(stack)
    _acknowledge_api(stack)
    _acknowledge_merge(stack)
    _acknowledge_inbox(stack)
    if stack.audit is not None:
        _acknowledge_audit(stack.audit)


def _acknowledge_function(stack: NaggedStack, spec: FunctionSpec) -> None:
    fn = stack.functions.functions[spec.name]
    role = stack.functions.roles[spec.name]
    acknowledge(
        fn,
        "AwsSolutions-L1",
        "Python 3.13, the version the test suite runs on (scripts/bootstrap.sh) and the runtime layer is "
        "built for (infra/runtime_layer.py); it is supported by Lambda until 2029. Move RUNTIME, "
        "infra/assets.py RUNTIME_PYTHON and the bootstrap's Python together",
    )
    acknowledge(role, "AwsSolutions-IAM5[Resource::*]", XRAY)
    access = access_for(spec)
    if "table" in access:
        acknowledge(
            role,
            f"AwsSolutions-IAM5[Resource::<{stack.resolve(stack.store.table.node.default_child.logical_id)}.Arn>/index/*]",  # type: ignore[union-attr]
            "Queries Baton's own GSIs (pending inbox, by-status): the grant covers only this table's "
            "indexes; Scan is not granted",
        )
    if "topic" in access:
        acknowledge(
            role,
            "AwsSolutions-IAM5[Action::kms:GenerateDataKey*]",
            "Publishing to the KMS-encrypted topic needs kms:GenerateDataKey* (SNS's documented "
            "requirement); the statement is limited to the one Baton key",
        )
    if "companion_model" in access and stack.config.companion_model:
        cdk_stack = Stack.of(stack.functions)
        for arn in bedrock_model_arns(cdk_stack, stack.config.companion_model):
            if ":bedrock:*:" in arn:
                acknowledge(
                    role,
                    f"AwsSolutions-IAM5[Resource::{arn.replace(cdk_stack.partition, '<AWS::Partition>')}]",
                    "A cross-region inference profile routes the call to the named model in any of the "
                    "profile's regions; the statement names that one model only",
                )
    if "start_execution" in access or "send_task" in access:  # send_task: a gone task's release describes its run
        for workflow in stack.state_machine_arns:
            acknowledge(
                role,
                f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:"
                f"execution:{stack.config.prefix}-{workflow}:*]",
                "Describe/stop executions of Baton's own state machine; execution names are run ids, "
                "only known at run time",
            )
    if "deadline_timer" in access and TIMER_STATE_MACHINE in stack.state_machine_arns:
        acknowledge(
            role,
            f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:"
            f"execution:{stack.config.prefix}-{TIMER_STATE_MACHINE}:*]",
            "Stops the deadline timers of the pauses it settles (StopExecution only, on the timer machine's "
            "executions); a timer's name derives from its pause, only known at run time",
        )


def _acknowledge_gates(stack: NaggedStack) -> None:
    for workflow, started in stack.gates.starts.items():
        for child in started:
            acknowledge(
                stack.gates.state_machines[workflow].role,
                f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:"
                f"execution:{stack.config.prefix}-{child}:*]",
                "Watches/stops the executions it starts of Baton's own child workflow (startExecution.sync); "
                "their names are run ids, only known at run time",
            )
    for machine in stack.gates.state_machines.values():
        acknowledge(
            machine.role,
            "AwsSolutions-IAM5[Resource::*]",
            "Step Functions log delivery (logs:CreateLogDelivery and friends) and X-Ray tracing support "
            "no resource-level permissions; CloudWatch Logs requires Resource '*' for vended-log delivery",
        )


def _acknowledge_api(stack: NaggedStack) -> None:
    api = stack.api
    for rest_api in (api.iam_api, api.web_api):
        acknowledge(
            rest_api,
            "AwsSolutions-APIG2",
            "Proxy integration to one Powertools resolver that validates every request body and parameter "
            "against its pydantic models (enable_validation=True) and answers 422 with details",
        )
        acknowledge(
            rest_api.deployment_stage,
            "AwsSolutions-APIG3",
            "No WAF by default: every route requires IAM SigV4 or a Cognito token, the stage is throttled, "
            "and the API is an internal team tool; attach a WAFv2 web ACL to the stage if it faces the internet",
        )
    acknowledge(
        api.iam_api_method,
        "AwsSolutions-COG4",
        "The machines API is authorized with IAM (SigV4) by design: the CLI, SDK and agents sign with "
        "their IAM identities; people use the Cognito-authorized web API",
    )
    acknowledge(
        api.user_pool,
        "AwsSolutions-COG8",
        "The Essentials plan is used: self sign-up is off (operators are invited), MFA (TOTP) is required "
        "and the password policy is strict; the Plus plan's threat protection is a per-user paid upgrade",
    )
    cloud_watch_role = api.iam_api.node.try_find_child("CloudWatchRole")
    if cloud_watch_role is not None:
        acknowledge(
            cloud_watch_role,
            "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
            "AmazonAPIGatewayPushToCloudWatchLogs]",
            "The account-level API Gateway logging role uses the AWS-documented managed policy; API Gateway "
            "(not Baton code) assumes it to write access and execution logs",
        )


def _acknowledge_merge(stack: NaggedStack) -> None:
    project_role = stack.merge.project.role
    assert project_role is not None
    account = "arn:<AWS::Partition>:{service}:<AWS::Region>:<AWS::AccountId>"
    project_id = stack.resolve(stack.merge.project.node.default_child.logical_id)  # type: ignore[union-attr]
    for finding, reason in {
        "Action::s3:GetObject*": "Reads the baton package asset (the build's source) from the CDK assets bucket",
        "Action::s3:GetBucket*": "CodeBuild reads the S3 source's bucket location/versioning (CDK's S3 source grant)",
        "Action::s3:List*": "CodeBuild lists the S3 source's bucket (CDK's S3 source grant, assets bucket only)",
        f"Resource::{account.format(service='logs')}:log-group:/aws/codebuild/<{project_id}>:*": (
            "CodeBuild's default log streams of this project only (log stream names are build ids)"
        ),
        f"Resource::{account.format(service='codebuild')}:report-group/<{project_id}>-*": (
            "Report groups of this project only (CodeBuild's default grant)"
        ),
        "Action::kms:ReEncrypt*": "CodeBuild encrypts build output with the Baton key; limited to that one key",
        "Action::kms:GenerateDataKey*": "CodeBuild encrypts build output with the Baton key; limited to that one key",
    }.items():
        acknowledge(project_role, f"AwsSolutions-IAM5[{finding}]", reason)


def _acknowledge_inbox(stack: NaggedStack) -> None:
    distribution = stack.inbox.distribution
    acknowledge(
        distribution,
        "AwsSolutions-CFR1",
        "The inbox is for a team's operators wherever they are; every API call needs a Cognito sign-in "
        "with MFA, so a country allow-list would add no protection (set one on the distribution if required)",
    )
    acknowledge(
        distribution,
        "AwsSolutions-CFR2",
        "No WAF by default, as for the APIs (AwsSolutions-APIG3): static files and a Cognito-authorized, "
        "throttled API; attach a WAFv2 web ACL (us-east-1) to the distribution if the team needs one",
    )
    acknowledge(
        distribution,
        "AwsSolutions-CFR4",
        "The distribution uses its cloudfront.net name and certificate, whose security policy CloudFront "
        "fixes at TLSv1; minimum_protocol_version TLSv1.2_2021 is set and applies once a custom domain "
        "and ACM certificate are attached",
    )
    cdk_stack = Stack.of(distribution)
    deployment = next(
        child for child in cdk_stack.node.children if child.node.id.startswith("Custom::CDKBucketDeployment")
    )
    acknowledge(
        deployment,
        "AwsSolutions-L1",
        "CDK's BucketDeployment provider Lambda: its runtime is chosen and kept current by aws-cdk-lib, "
        "not by Baton; it runs only at deployment time",
    )
    acknowledge(
        deployment,
        "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
        "CDK's BucketDeployment provider Lambda writes its own logs with the AWS basic execution policy; "
        "it runs only at deployment time",
    )
    site = cdk_stack.resolve(stack.inbox.bucket.node.default_child.logical_id)  # type: ignore[union-attr]
    for finding in (
        "Action::s3:GetObject*",
        "Action::s3:GetBucket*",
        "Action::s3:List*",
        "Action::s3:DeleteObject*",
        "Action::s3:Abort*",
        "Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*",
        f"Resource::<{site}.Arn>/*",
    ):
        acknowledge(
            deployment,
            f"AwsSolutions-IAM5[{finding}]",
            "CDK's BucketDeployment copies the built inbox from the CDK assets bucket into the inbox bucket: "
            "its grant is read on the assets bucket and read/write on the inbox bucket's objects only",
        )


def _acknowledge_audit(audit: AuditArchive) -> None:
    """The decision log's archive (infra/capabilities/audit.py)."""
    acknowledge(
        audit.function,
        "AwsSolutions-L1",
        "Python 3.13, like every Baton function: the version the tests run on and the runtime layer it "
        "shares with them is built for",
    )
    acknowledge(audit.role, "AwsSolutions-IAM5[Resource::*]", XRAY + "; dynamodb:ListStreams takes no resource")
    acknowledge(
        audit.role,
        f"AwsSolutions-IAM5[Resource::<{audit.bucket.stack.resolve(audit.bucket.node.default_child.logical_id)}.Arn>/runs/*]",  # type: ignore[union-attr]
        "PutObject of new decision records under runs/ of the audit bucket only (one object per record, "
        "named by run and seq); no read, delete or retention change",
    )
    acknowledge(
        audit.failed,
        "AwsSolutions-SQS3",
        "The queue is itself the failure destination of the audit stream's event source mapping (its OnFailure "
        "destination, which cdk-nag's redrive check does not see); its depth alarms (audit-archive-failed)",
    )
