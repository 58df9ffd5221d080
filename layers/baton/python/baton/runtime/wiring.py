"""Builds the services from settings with real AWS clients: one place that knows which adapter
serves which port. Handlers call `services()` once per cold start; a missing table or topic fails
there, naming its environment variable (`Settings.require_resources`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import boto3

from baton.adapters.clients import CLIENT_CONFIG
from baton.adapters.dynamo import DynamoStore
from baton.adapters.sfn import SfnTaskTokens, SfnWorkflows
from baton.api.idempotency import Idempotency, NoIdempotency
from baton.errors import ValidationFailedError
from baton.notify.sns import SnsNotifier
from baton.runtime.settings import Settings, get_settings
from baton.services.core import Core
from baton.services.interrupts import InterruptService
from baton.services.questions import QuestionService
from baton.services.reconciler import Reconciler
from baton.services.runs import RunService
from baton.workflows.resources import WORKFLOW_DEFAULTS

if TYPE_CHECKING:
    from baton.ports import Companion, MergeRunner
    from baton.services.review import ReviewService

_BOTO_CONFIG = CLIENT_CONFIG


@dataclass
class Services:
    settings: Settings
    core: Core
    runs: RunService
    review: ReviewService | None = None
    # Powertools Idempotency for answer/resume (in-memory wirings run every call).
    idempotency: Idempotency | NoIdempotency = field(default_factory=NoIdempotency)

    def review_service(self) -> ReviewService:
        """The review gate's service (built on first use from the settings when not given)."""
        if self.review is None:
            self.review = build_review_service(self.settings, self.core)
        return self.review

    @property
    def questions(self) -> QuestionService:
        """Async questions and await gates (stateless: built from the core on each use)."""
        return QuestionService(self.core)

    @property
    def interrupts(self) -> InterruptService:
        """Interrupts: typed pauses with state edits (stateless: built from the core on each use)."""
        return InterruptService(self.core)

    @property
    def reconciler(self) -> Reconciler:
        """Re-sends every parked wait's lost resume/cancel (the scheduled `reconcile` Lambda)."""
        return Reconciler(self.core, runs=self.runs, review=self.review_service)


def build_services(settings: Settings) -> Services:
    settings.require_resources()
    session = boto3.session.Session()
    notifier = SnsNotifier(session.client("sns", config=_BOTO_CONFIG), settings.topic_arn)
    # One client per service, shared by the adapters (client creation is the costly part of a cold start).
    dynamodb = session.client("dynamodb", config=_BOTO_CONFIG)
    stepfunctions = session.client("stepfunctions", config=_BOTO_CONFIG)
    core = Core(
        store=DynamoStore(settings.table_name, dynamodb, ttl_seconds=settings.event_ttl_days * 86400),
        tokens=SfnTaskTokens(stepfunctions),
        workflows=SfnWorkflows(stepfunctions),
        notifier=notifier,
        workflow_arns=dict(settings.workflows),
    )
    idempotency: Idempotency | NoIdempotency = (
        Idempotency(settings.table_name, dynamodb) if settings.idempotency_enabled else NoIdempotency()
    )
    runs = RunService(
        core,
        input_defaults=WORKFLOW_DEFAULTS,
        input_schemas=input_schemas(settings),
        check_review=lambda raw: _check_review_config(settings, raw),
    )
    return Services(settings=settings, core=core, runs=runs, idempotency=idempotency)


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
            client = boto3.session.Session().client("bedrock-runtime", region_name=region_name, config=_BOTO_CONFIG)
        return BedrockCompanion(client, str(model_id), **kwargs)
    raise ValidationFailedError(
        f"unknown companion kind {kind!r}; expected 'bedrock' or 'offline'",
        details={"path": "companion.kind", "allowed": ["bedrock", "offline"]},
    )


def build_review_service(settings: Settings, core: Core) -> ReviewService:
    """Adapters from the settings: BATON_COMPANION=offline|bedrock (+ BATON_COMPANION_MODEL) and
    BATON_MERGE_RUNNER=codebuild|local (+ BATON_MERGE_PROJECT, BATON_MERGE_REPOSITORY). The local stack
    sets offline + local. The companion and the runner are built on first use."""
    # Imported here: only the review gate's functions and review actions need the review wing.
    from baton.adapters.git_diff import GitDiffSource
    from baton.adapters.merge_runners import CodeBuildMergeRunner, LocalMergeRunner
    from baton.services.review import ReviewService

    def companion() -> Companion:
        if settings.companion.strip().lower() == "offline":
            return companion_from_config("offline")
        return companion_from_config("bedrock", model_id=settings.companion_model)

    def runner() -> MergeRunner:
        if settings.merge_runner == "local":
            return LocalMergeRunner()
        if settings.merge_runner != "codebuild":
            raise ValidationFailedError(
                f"unknown BATON_MERGE_RUNNER {settings.merge_runner!r}; expected codebuild or local"
            )
        client = boto3.session.Session().client("codebuild", config=_BOTO_CONFIG)
        return CodeBuildMergeRunner(client, settings.merge_project)

    return ReviewService(
        core,
        companion=companion,
        runner=runner,
        diffs=GitDiffSource(),
        merge_runner_kind=settings.merge_runner,
        merge_repository=settings.merge_repository,
    )
