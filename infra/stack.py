"""One thin stack per team environment, composed of one construct per capability."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import CfnOutput, Stack, Tags

from baton.domain.deadline import TIMER_STATE_MACHINE
from baton.workflows.input_schema import compact, load_schemas
from baton.workflows.resources import FUNCTIONS, STATE_MACHINES
from baton.workflows.source_tree import source_tree
from infra.capabilities.api import Api
from infra.capabilities.audit import AuditArchive
from infra.capabilities.dead_letters import DeadLetters
from infra.capabilities.email_links import EmailLinks
from infra.capabilities.functions import FunctionInputs, Functions
from infra.capabilities.gates import Gates
from infra.capabilities.inbox import Inbox
from infra.capabilities.lifecycle import Lifecycle
from infra.capabilities.mcp import McpEndpoint
from infra.capabilities.merge import Merge
from infra.capabilities.notifications import Notifications
from infra.capabilities.observability import Observability
from infra.capabilities.policy import PolicyParameter
from infra.capabilities.slack import WORKER_MAX_EVENT_AGE, WORKER_RETRY_ATTEMPTS, SlackApp
from infra.capabilities.store import Store
from infra.capabilities.web_push import WebPushKey
from infra.exports import GATE_FUNCTION_EXPORTS, role_export
from infra.naming import state_machine_arn
from infra.permissions import schedule_for, token_senders
from infra.suppressions import acknowledge_stack

if TYPE_CHECKING:
    from constructs import Construct

    from infra.config import TeamConfig

LAYER_DIR = source_tree().layer_dir


def skipped_channels(config: TeamConfig) -> tuple[str, ...]:
    """Channel functions left unsubscribed: the webhook has nowhere to post without its URL, the email
    Lambda no sender without an SES identity (email then goes by the SNS subscription)."""
    return (() if config.webhook_url else ("webhook",)) + (() if config.email_sender else ("email",))


def wired_channels(config: TeamConfig) -> list[str]:
    """The notify channels this stack subscribes (`BATON_NOTIFY_CHANNELS`): each channel function not
    skipped, and email when the team lists addresses."""
    skip = skipped_channels(config)
    channels = [
        s.subscribes_to_channel for s in FUNCTIONS if s.subscribes_to_channel and s.subscribes_to_channel not in skip
    ]
    return [*channels, "email"] if config.emails and "email" not in channels else channels


class BatonStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, config: TeamConfig, **kwargs: object) -> None:
        super().__init__(
            scope,
            construct_id,
            stack_name=config.stack_name,
            description=f"Baton human-in-the-loop service, team environment '{config.team}'",
            **kwargs,  # type: ignore[arg-type]
        )
        self.config = config
        Tags.of(self).add("baton:team", config.team)
        prefix = config.prefix

        self.store = Store(self, "Store", table_name=prefix)
        self.notifications = Notifications(self, "Notifications", prefix=prefix, alarm_emails=config.alarm_emails)
        # State machine ARNs from their explicit names: no reference from a function to a state machine.
        self.state_machine_arns = {wf: state_machine_arn(self, config, wf) for wf in STATE_MACHINES}
        self.merge = Merge(
            self,
            "Merge",
            config=config,
            package_dir=str(LAYER_DIR),
            table=self.store.table,
            key=self.notifications.key,
        )
        extra_env = {
            "SLACK_WEBHOOK_PARAMETER": "" if config.slack_secret_arn else config.slack_parameter_name,
            "SLACK_WEBHOOK_SECRET_ARN": config.slack_secret_arn,
            "WEBHOOK_URL": config.webhook_url,
            "WEBHOOK_SECRET_PARAMETER": config.webhook_secret_parameter_name,
            "BATON_MERGE_PROJECT": self.merge.project.project_name,
            "BATON_MERGE_RUNNER": "codebuild",
            # Whether (and which) repository merges land in: the review gate refuses to start without one.
            "BATON_MERGE_REPOSITORY": config.repository,
            "BATON_AGENT_PRINCIPAL_PATTERN": config.agent_principal_pattern,
            "BATON_COMPANION": config.companion,
            "BATON_COMPANION_MODEL": config.companion_model,
            # POST /api/runs checks each workflow's input schema (statemachines/*.input.schema.json).
            "BATON_INPUT_SCHEMAS": compact(load_schemas(source_tree().statemachines_dir)),
            # What the stack wires below (subscriptions): a notify list naming another channel is a 422.
            "BATON_NOTIFY_CHANNELS": ",".join(wired_channels(config)),
            # Web pages besides the API's own that may call the API and /mcp (baton/domain/origins.py).
            "BATON_ALLOWED_ORIGINS": ",".join(config.allowed_origins),
            # Passkeys for risky approvals (baton/services/passkeys.py): the inbox's host; empty: off.
            "BATON_WEBAUTHN_RP_ID": config.webauthn_rp_id,
        }
        self.functions = Functions(
            self,
            "Functions",
            config=config,
            specs=FUNCTIONS,
            layer_dir=str(LAYER_DIR),
            inputs=FunctionInputs(
                table=self.store.table,
                topic=self.notifications.topic,
                state_machine_arns=self.state_machine_arns,
                merge_project=self.merge.project,
                extra_env=extra_env,
            ),
        )
        fns = self.functions.functions
        # Every function invoked asynchronously gets its dead-letter queue where its invoke is wired.
        self.dead_letters = DeadLetters(self, "DeadLetters", config=config, alarm_topic=self.notifications.alarm_topic)
        for spec in FUNCTIONS:
            if schedule_for(spec):
                self.dead_letters.protect(spec.name, fns[spec.name])
        self.audit: AuditArchive | None = None
        if config.audit_bucket:  # the decision log copied to an Object Lock bucket (off by default)
            self.audit = AuditArchive(
                self,
                "Audit",
                config=config,
                table=self.store.table,
                layers=[self.functions.layer, self.functions.runtime_layer],
                alarm_topic=self.notifications.alarm_topic,
            )
        # The builds' ends send the parked tokens.
        finished_dlq = self.dead_letters.protect("build_finished", fns["build_finished"])
        self.merge.report_to(fns["build_finished"], dead_letter_queue=finished_dlq)
        self.gates = Gates(
            self,
            "Gates",
            config=config,
            machines=STATE_MACHINES,
            state_machine_arns=self.state_machine_arns,
            directory=source_tree().statemachines_dir,
            specs=FUNCTIONS,
            functions=fns,
        )
        # The policy deciding tool calls, when the team ships one (`-c policy=FILE`): re-read by the deciders.
        self.policy = PolicyParameter(self, "Policy", config=config, functions=fns) if config.policy else None
        self.api = Api(self, "Api", config=config, handler=fns["api"])
        self.mcp = McpEndpoint(self, "Mcp", config=config, api=self.api, function=fns["mcp"])
        self.inbox = Inbox(self, "Inbox", config=config, api=self.api)
        self.slack = SlackApp(
            self,
            "Slack",
            config=config,
            api=self.api,
            functions=fns,
            roles=self.functions.roles,
            inbox_url=self.inbox.app_url,
            table=self.store.table,
        )
        worker = fns["slack_worker"]  # invoked with InvocationType=Event by slack_interactions
        self.dead_letters.protect(
            "slack_worker", worker, max_event_age=WORKER_MAX_EVENT_AGE, retry_attempts=WORKER_RETRY_ATTEMPTS
        )
        self.lifecycle = Lifecycle(
            self,
            "Lifecycle",
            config=config,
            function=fns["run_lifecycle"],
            # The gates' timers belong to no run: their ends are not a run's lifecycle.
            state_machine_arns=[arn for wf, arn in self.state_machine_arns.items() if wf != TIMER_STATE_MACHINE],
            dead_letter_queue=self.dead_letters.protect("run_lifecycle", fns["run_lifecycle"]),
        )
        # With an SES sender, each recipient gets their own mail with answer links; else the SNS email path.
        self.email_links = (
            EmailLinks(
                self,
                "EmailLinks",
                config=config,
                api=self.api,
                functions=fns,
                roles=self.functions.roles,
                inbox_url=self.inbox.app_url,
            )
            if config.email_sender
            else None
        )
        if self.email_links is None:
            self.notifications.subscribe_emails(config.emails)
        # Web Push to operators' devices: the VAPID key's (empty) secret, read by the functions that push.
        self.web_push = WebPushKey(
            self, "WebPush", prefix=config.prefix, functions=fns, roles=self.functions.roles, api=self.api
        )
        # The webhook channel is subscribed only when it has somewhere to post, the email Lambda only with a sender.
        self.notifications.subscribe_functions(
            fns,
            FUNCTIONS,
            skip=skipped_channels(config),
            dead_letter_queue=lambda name: self.dead_letters.protect(name, fns[name]),
        )
        self.observability = Observability(
            self,
            "Observability",
            config=config,
            alarm_topic=self.notifications.alarm_topic,
            functions=fns,
            state_machines=self.gates.state_machines,
            state_machine_logs=self.gates.log_groups,
            apis={"machines": self.api.iam_api, "people": self.api.web_api},
        )
        self._outputs()
        acknowledge_stack(self)

    def _outputs(self) -> None:
        prefix = self.config.prefix

        def output(name: str, value: str, description: str) -> None:
            CfnOutput(self, name, value=value, description=description, export_name=f"{prefix}-{name}")

        # The API URLs are exported by the REST APIs themselves: <prefix>-api-url (machines, IAM SigV4;
        # point the CLI/SDK here) and <prefix>-web-url (people, Cognito).
        output("UserPoolId", self.api.user_pool.user_pool_id, "Cognito user pool of operators")
        output("UserPoolClientId", self.api.user_pool_client.user_pool_client_id, "Cognito app client (web inbox)")
        output("InboxUrl", self.inbox.app_url, "The web inbox (CloudFront; sign in with Cognito)")
        output("InboxClientId", self.inbox.client.user_pool_client_id, "Cognito app client of the inbox's sign-in")
        output("TableName", self.store.table.table_name, "DynamoDB table")
        output("TopicArn", self.notifications.topic.topic_arn, "Notifications topic")
        output("AlarmTopicArn", self.notifications.alarm_topic.topic_arn, "Alarms topic")
        output("VapidSecretArn", self.web_push.secret.secret_arn, "Web Push key: fill with `baton push init-vapid`")
        if self.audit is not None:
            output("AuditBucket", self.audit.bucket.bucket_name, "Object Lock bucket of the decision log")
        for export, function in GATE_FUNCTION_EXPORTS.items():
            output(export, self.functions.functions[function].function_arn, f"{function} Lambda (infra.gate.BatonGate)")
        for function in token_senders(FUNCTIONS):  # ApiRoleArn, SlackWorkerRoleArn, ...: grant_resume grants each
            role = self.functions.roles[function]
            output(role_export(function), role.role_arn, f"Role of the {function} Lambda (sends gates' task tokens)")
        output("MergeProject", self.merge.project.project_name, "CodeBuild project of merges")
        for workflow, machine in self.gates.state_machines.items():
            pascal = "".join(part.capitalize() for part in workflow.split("_"))
            output(f"Workflow{pascal}", machine.state_machine_arn, f"State machine of workflow {workflow}")
