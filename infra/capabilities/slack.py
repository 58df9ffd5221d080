"""slack: the Slack app's interaction URL, `POST /slack/interactions` on the people's API, and its two
functions (`functions/slack_interactions`, `functions/slack_worker`, `baton/channels/slack`).

The route has no IAM or Cognito authorization: Slack cannot sign with either. Slack signs each request
with the app's signing secret instead, and the function verifies that signature on the raw body (and
refuses replays) before it parses anything; the stage's throttling still applies.

Secrets, by name from context (read once per container by the functions, never in the environment):
- `slack_app_secret` (default `baton/<team>/slack-app`): a Secrets Manager secret, the JSON object
  `{"signing_secret": "...", "bot_token": "xoxb-..."}`;
- `slack_operators_parameter` (default `/baton/<team>/slack-operators`): an SSM parameter holding the
  Slack user -> Baton operator mapping, `{"U0123ABC": "alice@example.com"}`;
- `slack_channel` (optional): the channel the app posts notifications to. With it, `notify_slack` posts
  as the app (buttons and forms; it reads the bot token and GetItem's the interaction it renders);
  without it, it keeps the incoming webhook.

Cold starts: `slack_provisioned_concurrency=N` (context, default 0) keeps N instances of the interaction
function initialized (a `live` alias on its current version with provisioned concurrency; the route
invokes the alias), so a click never lands on a cold container; without it the function's own cold path
is kept small instead (`baton/channels/slack/ack.py`, measured by `bench/parts/slack_ack.py --cold`).

Least privilege: the interaction function may read the two secrets, use the table (the replay guard,
the interaction it opens a modal for) and invoke the worker, nothing else; the worker reads the secret
and the mapping and has the API's answer path (table, topic, task tokens, deadline timers).

`slack_sdk` (pure Python) reaches the three functions the way the mcp-types layer does
(infra/capabilities/mcp.py): the installed package, the version uv.lock pins, copied into a layer asset
at synth, offline.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aws_cdk import ArnFormat, Duration, RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.capabilities.functions import ARCHITECTURE, RUNTIME
from infra.capabilities.mcp import locked_version, stage_locked_package
from infra.nag import acknowledge
from infra.naming import parameter_arn

if TYPE_CHECKING:
    from collections.abc import Mapping

    from constructs import Node

    from infra.capabilities.api import Api
    from infra.config import TeamConfig

SLACK_SDK = "slack-sdk"  # the distribution; the import package is slack_sdk
SLACK_FUNCTIONS = ("slack_interactions", "slack_worker")
USES_SLACK_SDK = (*SLACK_FUNCTIONS, "notify_slack")
INTERACTIONS_PATH = ("slack", "interactions")
MAX_PROVISIONED = 100  # a typo guard: every provisioned instance is billed while idle
# A click is queued once: an invoke Lambda could not deliver in 10 minutes is not retried (Slack's
# response_url lasts 30 minutes; the person can click again), one retry for a failed run; either then
# waits in the worker's dead-letter queue (infra/capabilities/dead_letters.py, `baton redrive`).
WORKER_MAX_EVENT_AGE = Duration.minutes(10)
WORKER_RETRY_ATTEMPTS = 1


@dataclass(frozen=True)
class SlackAppContext:
    """The app's names, from CDK context (`-c slack_app_secret=... -c slack_channel=C0123`)."""

    secret: str
    operators_parameter: str
    channel: str = ""
    provisioned_concurrency: int = 0

    @classmethod
    def from_node(cls, node: Node, team: str) -> SlackAppContext:
        raw = str(node.try_get_context("slack_provisioned_concurrency") or "0").strip()
        if not raw.isdigit() or int(raw) > MAX_PROVISIONED:
            raise ValueError(
                f"slack_provisioned_concurrency must be a whole number from 0 to {MAX_PROVISIONED}, got {raw!r}"
            )
        return cls(
            secret=str(node.try_get_context("slack_app_secret") or f"baton/{team}/slack-app"),
            operators_parameter=str(
                node.try_get_context("slack_operators_parameter") or f"/baton/{team}/slack-operators"
            ),
            channel=str(node.try_get_context("slack_channel") or ""),
            provisioned_concurrency=int(raw),
        )


def stage_slack_sdk(destination: Path) -> Path:
    return stage_locked_package(SLACK_SDK, "slack_sdk", destination)


class SlackApp(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: TeamConfig,
        api: Api,
        functions: Mapping[str, lambda_.Function],
        roles: Mapping[str, iam.Role],
        inbox_url: str,
        table: dynamodb.ITable,
    ) -> None:
        super().__init__(scope, construct_id)
        self.context = SlackAppContext.from_node(self.node, config.team)
        interactions, worker = functions["slack_interactions"], functions["slack_worker"]
        folder = Path(tempfile.mkdtemp(prefix="baton-slack-sdk-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)  # the synth copies it into cdk.out
        self.layer = lambda_.LayerVersion(
            self,
            "SlackSdkLayer",
            layer_version_name=f"{config.prefix}-slack-sdk",
            description=f"slack-sdk {locked_version(SLACK_SDK)} (signature verifier, Web API client, Block Kit)",
            code=lambda_.Code.from_asset(str(stage_slack_sdk(folder))),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            removal_policy=RemovalPolicy.RETAIN,
        )
        env = {
            "SLACK_APP_SECRET_ARN": self.context.secret,
            "BATON_SLACK_OPERATORS_PARAMETER": self.context.operators_parameter,
            "BATON_SLACK_WORKER_INVOKE": "event",
        }
        for name in SLACK_FUNCTIONS:
            functions[name].add_layers(self.layer)
            for key, value in env.items():
                functions[name].add_environment(key, value)
            self._read_secrets(roles[name])
        if self.context.channel:  # the app posts the notifications; else notify_slack keeps the webhook
            notify = functions["notify_slack"]
            notify.add_layers(self.layer)
            notify.add_environment("SLACK_APP_SECRET_ARN", self.context.secret)
            notify.add_environment("SLACK_CHANNEL", self.context.channel)
            # Only the poster links to the inbox (forms Slack cannot render); the interaction function
            # must not: the inbox's distribution depends on the people's API, which routes to it.
            notify.add_environment("BATON_INBOX_URL", inbox_url)
            self._read_secrets(roles["notify_slack"], operators=False)
            # GetItem of the interaction it renders the form of: on the table itself. Not `table.grant`,
            # which adds `<table>/index/*` (GetItem never reads an index; cdk-nag IAM5 flags the wildcard).
            roles["notify_slack"].add_to_principal_policy(
                iam.PolicyStatement(actions=["dynamodb:GetItem"], resources=[table.table_arn])
            )
        # By its physical name (infra/capabilities/functions.py names every function): no Ref, no cycle.
        interactions.add_environment("BATON_SLACK_WORKER_FUNCTION", f"{config.prefix}-slack_worker")
        worker.grant_invoke(roles["slack_interactions"])
        # Its async settings (WORKER_*) go with its dead-letter queue: infra/stack.py.
        self._route(api, self._warm(interactions))
        self._acknowledge(roles, worker)

    def _read_secrets(self, role: iam.Role, *, operators: bool = True) -> None:
        stack = Stack.of(self)
        secret = self.context.secret
        # A name resolves to its ARN plus Secrets Manager's random 6-character suffix.
        arn = (
            secret
            if secret.startswith("arn:")
            else stack.format_arn(
                service="secretsmanager",
                resource="secret",
                resource_name=f"{secret}-??????",
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            )
        )
        role.add_to_principal_policy(iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=[arn]))
        if operators:
            role.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=["ssm:GetParameter"], resources=[parameter_arn(stack, self.context.operators_parameter)]
                )
            )

    def _warm(self, interactions: lambda_.Function) -> lambda_.IFunction:
        """The interaction function as the route invokes it: with provisioned concurrency, its `live`
        alias on the current version (kept initialized); else the function itself."""
        count = self.context.provisioned_concurrency
        if count == 0:
            return interactions
        self.alias = lambda_.Alias(
            self,
            "InteractionsLive",
            alias_name="live",
            version=interactions.current_version,
            provisioned_concurrent_executions=count,
            description="Slack's interaction URL: kept warm for the 3 s ack",
        )
        return self.alias

    def _route(self, api: Api, interactions: lambda_.IFunction) -> None:
        resource = api.web_api.root
        for part in INTERACTIONS_PATH:
            resource = resource.add_resource(part)
        self.method = resource.add_method(
            "POST",
            apigw.LambdaIntegration(interactions, proxy=True, allow_test_invoke=False),
            authorization_type=apigw.AuthorizationType.NONE,
        )
        for rule in ("AwsSolutions-APIG4", "AwsSolutions-COG4"):
            acknowledge(
                self.method,
                rule,
                "Slack cannot sign with IAM or Cognito: it signs each request with the app's signing secret, "
                "which the function verifies on the raw body (HMAC-SHA256, 5-minute window, replays refused) "
                "before parsing anything",
            )

    def _acknowledge(self, roles: Mapping[str, iam.Role], worker: lambda_.Function) -> None:
        worker_id = Stack.of(self).resolve(worker.node.default_child.logical_id)  # type: ignore[union-attr]
        acknowledge(
            roles["slack_interactions"],
            f"AwsSolutions-IAM5[Resource::<{worker_id}.Arn>:*]",
            "lambda:InvokeFunction on the Slack worker's versions and aliases (CDK's grant_invoke); the "
            "statement names that one function only",
        )
