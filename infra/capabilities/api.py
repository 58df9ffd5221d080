"""api: the HTTP API in front of the API Lambda, as two REST APIs with the same routes.

One REST API per kind of caller, both `/api/{proxy+}` -> the same API
Lambda (proxy integration), so the handler sees the same paths either way:

- `<prefix>-api` (IAM auth, SigV4): machines — the CLI, the SDK, agents, CI. The caller's IAM
  principal arrives as `requestContext.identity.userArn`.
- `<prefix>-web` (Cognito user pool authorizer): people — the web inbox. The user's claims arrive as
  `requestContext.authorizer.claims`.

Two APIs rather than two resource trees keep the paths identical (the resolver routes on `/api/...`)
and let each have its own throttling and access log. Both: regional, stage `live`, JSON access logs,
execution logs at ERROR, X-Ray, stage throttling.

Agents are confined to their run by their credentials: the agent role `<prefix>-agent` may call the
machines' API, and its trust policy lets a session start only when its name is `run-*` (whoever
launches an agent for run R assumes it with `RoleSessionName=run-R`). API Gateway reports the session
as `.../assumed-role/<prefix>-agent/run-R`, and the API Lambda (told the role's name) reads the run
from it; see baton/api/auth.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.nag import acknowledge

if TYPE_CHECKING:
    from infra.config import TeamConfig

STAGE = "live"
RUN_SESSION_PATTERN = "run-*"  # baton.api.auth.RUN_SESSION_PREFIX: a session is for one run


class Api(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: TeamConfig, handler: lambda_.Function) -> None:
        super().__init__(scope, construct_id)
        self.user_pool = cognito.UserPool(
            self,
            "Operators",
            user_pool_name=f"{config.prefix}-operators",
            self_sign_up_enabled=False,
            sign_in_aliases=cognito.SignInAliases(email=True),
            auto_verify=cognito.AutoVerifiedAttrs(email=True),
            mfa=cognito.Mfa.REQUIRED,
            mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
            password_policy=cognito.PasswordPolicy(
                min_length=12,
                require_lowercase=True,
                require_uppercase=True,
                require_digits=True,
                require_symbols=True,
                temp_password_validity=Duration.days(3),
            ),
            account_recovery=cognito.AccountRecovery.EMAIL_ONLY,
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.user_pool_client = self.user_pool.add_client(
            "WebInbox",
            user_pool_client_name=f"{config.prefix}-web-inbox",
            auth_flows=cognito.AuthFlow(user_srp=True),
            generate_secret=False,
            prevent_user_existence_errors=True,
        )
        self.iam_api = self._rest_api("Machines", f"{config.prefix}-api", config, handler, cloud_watch_role=True)
        self.iam_api_method = self._proxy(self.iam_api, handler, authorization_type=apigw.AuthorizationType.IAM)
        self.web_api = self._rest_api("People", f"{config.prefix}-web", config, handler, cloud_watch_role=False)
        authorizer = apigw.CognitoUserPoolsAuthorizer(
            self, "Authorizer", cognito_user_pools=[self.user_pool], authorizer_name=f"{config.prefix}-operators"
        )
        self.web_api_method = self._proxy(
            self.web_api, handler, authorization_type=apigw.AuthorizationType.COGNITO, authorizer=authorizer
        )
        self.agent_role = self._agent_role(config)
        # Only the API needs to know which sessions are agents.
        handler.add_environment("BATON_AGENT_ROLE_NAME", self.agent_role.role_name)

    def _agent_role(self, config: TeamConfig) -> iam.Role:
        launchers: list[iam.IPrincipal] = [iam.ArnPrincipal(arn) for arn in config.agent_launchers] or [
            iam.AccountRootPrincipal()
        ]
        role = iam.Role(
            self,
            "AgentRole",
            role_name=f"{config.prefix}-agent",
            description="Agents of Baton runs: one session per run, named run-<run_id>",
            assumed_by=iam.CompositePrincipal(
                *(
                    iam.PrincipalWithConditions(p, {"StringLike": {"sts:RoleSessionName": RUN_SESSION_PATTERN}})
                    for p in launchers
                )
            ),
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["execute-api:Invoke"],
                resources=[
                    self.iam_api.arn_for_execute_api("*", "/api/*", STAGE),
                    self.iam_api.arn_for_execute_api("*", "/mcp", STAGE),  # the MCP server (infra/capabilities/mcp.py)
                ],
            )
        )
        api_id = Stack.of(self).resolve(self.iam_api.node.default_child.logical_id)  # type: ignore[union-attr]
        acknowledge(
            role,
            "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:"
            f"<{api_id}>/{STAGE}/*/api/*]",
            "The agent role may call every route of the machines' API (method and path wildcards under /api); "
            "which run it may touch is decided per request by the API from the session name",
        )
        acknowledge(
            role,
            "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:"
            f"<{api_id}>/{STAGE}/*/mcp]",
            "The agent role may call the MCP route with any method (the function answers all but POST 405); "
            "which run it may touch is decided per request from the session name",
        )
        return role

    def _rest_api(
        self, construct_id: str, name: str, config: TeamConfig, handler: lambda_.IFunction, *, cloud_watch_role: bool
    ) -> apigw.RestApi:
        access_logs = logs.LogGroup(
            self,
            f"{construct_id}AccessLogs",
            log_group_name=f"/aws/apigateway/{name}/access",
            retention=logs.RetentionDays.THREE_MONTHS,
            removal_policy=RemovalPolicy.DESTROY,
        )
        return apigw.RestApi(
            self,
            construct_id,
            rest_api_name=name,
            endpoint_export_name=f"{name}-url",
            description=f"Baton HTTP API ({'IAM' if cloud_watch_role else 'Cognito'} auth)",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            cloud_watch_role=cloud_watch_role and config.api_account_role,
            cloud_watch_role_removal_policy=(
                RemovalPolicy.RETAIN if cloud_watch_role and config.api_account_role else None
            ),
            deploy_options=apigw.StageOptions(
                stage_name=STAGE,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=True,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,
                metrics_enabled=True,
                tracing_enabled=True,
                throttling_rate_limit=config.throttle_rate,
                throttling_burst_limit=config.throttle_burst,
            ),
        )

    @staticmethod
    def _proxy(
        api: apigw.RestApi,
        handler: lambda_.IFunction,
        *,
        authorization_type: apigw.AuthorizationType,
        authorizer: apigw.IAuthorizer | None = None,
    ) -> apigw.Method:
        proxy = api.root.add_resource("api").add_resource("{proxy+}")
        return proxy.add_method(
            "ANY",
            apigw.LambdaIntegration(handler, proxy=True, allow_test_invoke=False),
            authorization_type=authorization_type,
            authorizer=authorizer,
        )

    @property
    def iam_url(self) -> str:
        return self.iam_api.url

    @property
    def web_url(self) -> str:
        return self.web_api.url
