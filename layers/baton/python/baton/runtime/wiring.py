"""Builds the services from settings with real AWS clients: one place that knows which adapter
serves which port. Handlers call `services()` once per cold start; a missing table or topic fails
there, naming its environment variable (`Settings.require_resources`).

Nothing AWS is imported with this module: boto3 and the adapters are imported by `build_services`, on
a function's first call, so importing a handler costs only its own code
(`tests/unit/test_lambda_imports.py` holds every handler to that)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton.errors import ValidationFailedError
from baton.runtime.settings import Settings, get_settings

if TYPE_CHECKING:
    from collections.abc import Callable

    from mypy_boto3_dynamodb import DynamoDBClient

    from baton.adapters.ssm_policy import ParameterReader
    from baton.channels.email.answers import EmailAnswers
    from baton.channels.push.answers import PushAnswers
    from baton.channels.push.subscriptions import PushService
    from baton.channels.push.web_push import VapidKeys
    from baton.passkey_ports import PasskeyStore
    from baton.policy.source import PolicySource
    from baton.ports import AuditArchive, InboxSessionStore
    from baton.push_ports import OperatorPush, PushSubscriptionStore
    from baton.review_ports import BuildRecords, BuildRunner, Companion
    from baton.services.core import Core
    from baton.services.interrupts import InterruptService
    from baton.services.passkeys import PasskeyService, RelyingParty
    from baton.services.questions import QuestionService
    from baton.services.reconciler import Reconciler
    from baton.services.review import ReviewService
    from baton.services.runs import RunService


@dataclass
class Services:
    settings: Settings
    core: Core
    runs: RunService
    review: ReviewService | None = None
    # The email answer links' pages (built on first use from the environment when not given).
    email_answers: EmailAnswers | None = None
    # The local web inbox's open sessions (built on first use over the table when not given).
    inbox_sessions: InboxSessionStore | None = None
    # Each operator's Web Push subscriptions (built on first use over the table when not given).
    push_subscriptions: PushSubscriptionStore | None = None
    # A notification's one-tap answers (built on first use over the table's link items when not given).
    one_tap_answers: PushAnswers | None = None
    # Each operator's passkeys and the challenges issued to them (built on first use over the table when not given).
    passkeys: PasskeyStore | None = None

    def review_service(self) -> ReviewService:
        """The review gate's service (built on first use from the settings when not given)."""
        if self.review is None:
            self.review = build_review_service(self.settings, self.core)
        return self.review

    def email_answers_service(self) -> EmailAnswers:
        """What `/answer/<link>` serves (baton/channels/email/answers.py), on the table's link items."""
        if self.email_answers is None:
            from baton.adapters.answer_links import DynamoAnswerLinks
            from baton.adapters.clients import dynamodb_client
            from baton.channels.email.answers import EmailAnswers
            from baton.channels.email.config import cached_link_key, email_config

            config = email_config()
            self.email_answers = EmailAnswers(
                core=self.core,
                links=DynamoAnswerLinks(self.settings.table_name, dynamodb_client()),
                key=cached_link_key,
                recipients=config.baton_email_recipients,
                inbox_url=config.baton_inbox_url,
            )
        return self.email_answers

    def inbox_session_store(self) -> InboxSessionStore:
        """Which local inbox sessions are open (baton/adapters/inbox_sessions.py), on the table."""
        if self.inbox_sessions is None:
            from baton.adapters.clients import dynamodb_client
            from baton.adapters.inbox_sessions import DynamoInboxSessions

            self.inbox_sessions = DynamoInboxSessions(self.settings.table_name, dynamodb_client())
        return self.inbox_sessions

    def push_subscription_store(self) -> PushSubscriptionStore:
        if self.push_subscriptions is None:
            from baton.adapters.clients import dynamodb_client
            from baton.adapters.push_subscriptions import DynamoPushSubscriptions

            self.push_subscriptions = DynamoPushSubscriptions(self.settings.table_name, dynamodb_client())
        return self.push_subscriptions

    def push_service(self) -> PushService:
        """The push routes' service (channels/push/subscriptions.py): the caller's subscriptions and the public key."""
        from baton.channels.push.subscriptions import PushService

        return PushService(self.push_subscription_store(), vapid_key_source(self.settings), self.core.now)

    def passkey_service(self) -> PasskeyService:
        """The passkey routes' service (baton/services/passkeys.py), and the answer path's second factor."""
        from baton.services.passkeys import PasskeyService

        if self.passkeys is None:
            from baton.adapters.clients import dynamodb_client
            from baton.adapters.dynamo_passkeys import DynamoPasskeys

            self.passkeys = DynamoPasskeys(self.settings.table_name, dynamodb_client())
        return PasskeyService(self.passkeys, relying_party(self.settings), self.core.clock.now)

    def push_answers(self) -> PushAnswers:
        """A notification's one-tap answer (`POST /api/push/answer`), spent once on the table's link items."""
        if self.one_tap_answers is None:
            from baton.adapters.answer_links import DynamoAnswerLinks
            from baton.adapters.clients import dynamodb_client
            from baton.channels.push.answers import PushAnswers

            links = DynamoAnswerLinks(self.settings.table_name, dynamodb_client())
            self.one_tap_answers = PushAnswers(self.core, links, vapid_key_source(self.settings))
        return self.one_tap_answers

    @property
    def questions(self) -> QuestionService:
        """Async questions and await gates (stateless: built from the core on each use)."""
        from baton.services.questions import QuestionService

        return QuestionService(self.core)

    @property
    def interrupts(self) -> InterruptService:
        """Interrupts: typed pauses with state edits (stateless: built from the core on each use)."""
        from baton.services.interrupts import InterruptService

        return InterruptService(self.core)

    @property
    def reconciler(self) -> Reconciler:
        """Re-sends every parked wait's lost resume/cancel (the scheduled `reconcile` Lambda)."""
        from baton.services.reconciler import Reconciler

        return Reconciler(self.core, runs=self.runs, review=self.review_service)


def build_services(settings: Settings) -> Services:
    # Imported here, on the first call (see the module docstring).
    import boto3

    from baton.adapters.clients import CLIENT_CONFIG, dynamodb_client
    from baton.adapters.deadline_timer import SfnDeadlineTimers
    from baton.adapters.dynamo import DynamoStore
    from baton.adapters.dynamo_passkeys import DynamoPasskeys
    from baton.adapters.push_subscriptions import DynamoPushSubscriptions
    from baton.adapters.sfn import SfnTaskTokens, SfnWorkflows
    from baton.domain.deadline import TIMER_STATE_MACHINE
    from baton.notify.model import CHANNELS
    from baton.notify.sns import SnsNotifier
    from baton.services.core import Core
    from baton.services.runs import RunService
    from baton.workflows.resources import WORKFLOW_DEFAULTS

    settings.require_resources()
    session = boto3.session.Session()
    notifier = SnsNotifier(session.client("sns", config=CLIENT_CONFIG), settings.topic_arn)
    # One client per service, shared by the adapters (client creation is the costly part of a cold start).
    dynamodb = dynamodb_client(session)
    stepfunctions = session.client("stepfunctions", config=CLIENT_CONFIG)
    workflow_arns = dict(settings.workflows)
    timer_arn = workflow_arns.pop(TIMER_STATE_MACHINE, "")  # the gates' timer: never started as a run
    core = Core(
        store=DynamoStore(settings.table_name, dynamodb, ttl_seconds=settings.event_ttl_days * 86400),
        tokens=SfnTaskTokens(stepfunctions),
        workflows=SfnWorkflows(stepfunctions),
        notifier=notifier,
        workflow_arns=workflow_arns,
        timers=SfnDeadlineTimers(stepfunctions, timer_arn) if timer_arn else None,
        channels=settings.notify_channels or CHANNELS,
        policy=policy_source(settings),
    )
    push_subscriptions = DynamoPushSubscriptions(settings.table_name, dynamodb)
    core.push = web_push(settings, push_subscriptions)
    runs = RunService(
        core,
        input_defaults=WORKFLOW_DEFAULTS,
        input_schemas=input_schemas(settings),
        check_review=lambda raw: _check_review_config(settings, raw),
    )
    passkeys = DynamoPasskeys(settings.table_name, dynamodb)
    built = Services(settings=settings, core=core, runs=runs, push_subscriptions=push_subscriptions, passkeys=passkeys)
    if settings.webauthn_rp_id:  # passkeys set up: a risky approve asks for one (baton/services/passkeys.py)
        core.second_factor = built.passkey_service()
    return built


def relying_party(settings: Settings) -> RelyingParty | None:
    """The WebAuthn relying party the settings name (its origins default to https://<rp id>); None: off."""
    if not settings.webauthn_rp_id:
        return None
    from baton.services.passkeys import RelyingParty

    origins = settings.webauthn_origins or (f"https://{settings.webauthn_rp_id}",)
    return RelyingParty(rp_id=settings.webauthn_rp_id, origins=origins)


def vapid_key_source(settings: Settings) -> Callable[[], VapidKeys | None]:
    """Where the VAPID key is read: the secret deployed, the file locally, else nowhere (push off)."""
    return _vapid_key_source(settings.vapid_secret_id, settings.vapid_key_file)


@lru_cache(maxsize=4)
def _vapid_key_source(secret_id: str, key_file: str) -> Callable[[], VapidKeys | None]:
    """One reader per place: a secret is read once per container."""
    if secret_id:
        import boto3

        from baton.adapters.clients import CLIENT_CONFIG
        from baton.adapters.vapid_keys import SecretVapidKeys

        client = boto3.session.Session().client("secretsmanager", config=CLIENT_CONFIG)
        return SecretVapidKeys(secret_id, client)
    if key_file:
        from baton.adapters.vapid_keys import FileVapidKeys

        return FileVapidKeys(key_file)
    return lambda: None


def web_push(settings: Settings, store: PushSubscriptionStore) -> OperatorPush | None:
    """The `OperatorPush` a core sends with, when the stack has a VAPID key configured; else None (off)."""
    if not (settings.vapid_secret_id or settings.vapid_key_file):
        return None
    from baton.channels.push.sender import WebPush

    return WebPush(store, vapid_key_source(settings), subject=settings.vapid_subject)


def policy_source(settings: Settings, *, ssm_client: ParameterReader | None = None) -> PolicySource:
    """The policy source the environment names: BATON_POLICY_PARAMETER (deployed), else BATON_POLICY_FILE
    (`baton dev --policy`), else none (`FixedPolicy()`: every call goes to a person, as before policies).
    The engine (cedarpy) is imported only when a policy is first read."""
    from baton.policy.source import FixedPolicy
    from baton.policy.sources import FilePolicy

    if settings.policy_parameter:
        from baton.adapters.ssm_policy import ParameterPolicy

        if ssm_client is None:
            import boto3

            from baton.adapters.clients import CLIENT_CONFIG

            ssm_client = boto3.session.Session().client("ssm", config=CLIENT_CONFIG)
        return ParameterPolicy(
            settings.policy_parameter, ssm_client, mode=settings.policy_mode, ttl_seconds=settings.policy_ttl_seconds
        )
    if settings.policy_file:
        return FilePolicy(Path(settings.policy_file), mode=settings.policy_mode)
    return FixedPolicy()


def input_schemas(settings: Settings) -> dict[str, dict[str, Any]]:
    """The workflows' input schemas: deployed from the API function's environment, else the checkout's."""
    if settings.input_schemas:
        return {name: dict(schema) for name, schema in settings.input_schemas.items()}
    from baton.workflows.input_schema import load_schemas
    from baton.workflows.source_tree import SourceTreeNotFoundError

    try:
        return load_schemas()
    except SourceTreeNotFoundError:
        return {}


def _check_review_config(settings: Settings, raw: Any) -> object:
    from baton.domain.review_gate import parse_gate_config

    return parse_gate_config(raw, merge_runner=settings.merge_runner, merge_repository=settings.merge_repository)


@lru_cache(maxsize=1)
def services() -> Services:
    return build_services(get_settings())


# ---- the review gate: its companion, diff source and merge runner -------------------------------------


def companion_from_config(kind: str, **kwargs: Any) -> Companion:
    """Build a companion. `"offline"` takes no arguments. `"bedrock"` takes `model_id` (required),
    `client` (a `bedrock-runtime` client; built here from `region_name` if absent) and the keyword
    options of `BedrockCompanion`."""
    from baton.adapters.companion_bedrock import BedrockCompanion
    from baton.adapters.companion_offline import OfflineCompanion

    normalized = kind.strip().lower()
    if normalized == "offline":
        if kwargs:
            raise ValidationFailedError(
                f"the offline companion takes no options (got {sorted(kwargs)})", details={"path": "companion"}
            )
        return OfflineCompanion()
    if normalized == "bedrock":
        model_id = kwargs.pop("model_id", None)
        if not model_id:
            raise ValidationFailedError(
                "the bedrock companion needs a model_id", details={"path": "companion.model_id"}
            )
        client = kwargs.pop("client", None)
        region_name = kwargs.pop("region_name", None)
        if client is None:
            import boto3

            from baton.adapters.clients import CLIENT_CONFIG

            client = boto3.session.Session().client("bedrock-runtime", region_name=region_name, config=CLIENT_CONFIG)
        return BedrockCompanion(client, str(model_id), **kwargs)
    raise ValidationFailedError(
        f"unknown companion kind {kind!r}; expected 'bedrock' or 'offline'",
        details={"path": "companion.kind", "allowed": ["bedrock", "offline"]},
    )


def build_review_service(settings: Settings, core: Core, *, records: BuildRecords | None = None) -> ReviewService:
    """Adapters from the settings: BATON_COMPANION=offline|bedrock (+ BATON_COMPANION_MODEL) and
    BATON_MERGE_RUNNER=codebuild|local (+ BATON_MERGE_PROJECT, BATON_MERGE_REPOSITORY): where the gate's
    builds (the bounded diff, the merge) run. Their records and reports live in the table; the diff every
    companion turn sees is the one the gate's diff build reported. The local stack sets offline + local.
    The companion and the runner are built on first use; `records` replaces the table's (tests)."""
    # Imported here: only the review gate's functions and review actions need the review wing.
    from baton.adapters.build_records import DynamoBuildRecords
    from baton.adapters.merge_runners import CodeBuildBuildRunner, LocalBuildRunner
    from baton.services.review import ReviewService

    def companion() -> Companion:
        if settings.companion.strip().lower() == "offline":
            return companion_from_config("offline")
        return companion_from_config("bedrock", model_id=settings.companion_model)

    def runner() -> BuildRunner:
        if settings.merge_runner == "local":
            return LocalBuildRunner(on_finished=review.build_finished)
        if settings.merge_runner != "codebuild":
            raise ValidationFailedError(
                f"unknown BATON_MERGE_RUNNER {settings.merge_runner!r}; expected codebuild or local"
            )
        import boto3

        from baton.adapters.clients import CLIENT_CONFIG

        client = boto3.session.Session().client("codebuild", config=CLIENT_CONFIG)
        return CodeBuildBuildRunner(client, settings.merge_project)

    def table_client() -> DynamoDBClient:
        from baton.adapters.clients import dynamodb_client

        return dynamodb_client()

    if records is None:
        records = DynamoBuildRecords(settings.table_name, table_client)
    review = ReviewService(
        core,
        companion=companion,
        runner=runner,
        records=records,
        merge_runner_kind=settings.merge_runner,
        merge_repository=settings.merge_repository,
    )
    return review


def audit_archive(bucket: str) -> AuditArchive:
    """The decision log's archive (`functions/audit_archive`): the Object Lock bucket `bucket`."""
    import boto3

    from baton.adapters.audit_archive import S3AuditArchive
    from baton.adapters.clients import CLIENT_CONFIG

    return S3AuditArchive(bucket, boto3.session.Session().client("s3", config=CLIENT_CONFIG))
