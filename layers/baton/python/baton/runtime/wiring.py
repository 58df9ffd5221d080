"""Builds the services from settings with real AWS clients: one place that knows which adapter
serves which port. Handlers call `services()` once per cold start; a missing table or topic fails
there, naming its environment variable (`Settings.require_resources`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import boto3
from botocore.config import Config

from baton.adapters.dynamo import DynamoStore
from baton.adapters.sfn import SfnTaskTokens, SfnWorkflows
from baton.api.idempotency import Idempotency, NoIdempotency
from baton.notify.sns import SnsNotifier
from baton.runtime.settings import Settings, get_settings
from baton.services.core import Core
from baton.services.interrupts import InterruptService
from baton.services.questions import QuestionService
from baton.services.reconciler import Reconciler
from baton.services.review import ReviewService, build_review_service
from baton.services.runs import RunService
from baton.workflows.resources import WORKFLOW_DEFAULTS

_BOTO_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=5, read_timeout=30)


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
    return Services(
        settings=settings, core=core, runs=RunService(core, input_defaults=WORKFLOW_DEFAULTS), idempotency=idempotency
    )


@lru_cache(maxsize=1)
def services() -> Services:
    return build_services(get_settings())
