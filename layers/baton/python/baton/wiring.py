"""Builds the services from settings with real AWS clients: one place that knows which adapter
serves which port. Handlers call `services()` once per cold start."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import boto3
from botocore.config import Config

from baton.adapters.dynamo import DynamoStore
from baton.adapters.sfn import SfnTaskTokens, SfnWorkflows
from baton.config import Settings, get_settings
from baton.notify.sns import RecordingNotifier, SnsNotifier
from baton.ports import Notifier
from baton.services.core import Core
from baton.services.runs import RunService

_BOTO_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=5, read_timeout=30)


@dataclass
class Services:
    settings: Settings
    core: Core
    runs: RunService


def build_services(settings: Settings) -> Services:
    session = boto3.session.Session()
    notifier: Notifier
    if settings.topic_arn:
        notifier = SnsNotifier(session.client("sns", config=_BOTO_CONFIG), settings.topic_arn)
    else:
        notifier = RecordingNotifier()
    core = Core(
        store=DynamoStore(
            settings.table_name,
            session.client("dynamodb", config=_BOTO_CONFIG),
            ttl_seconds=settings.event_ttl_days * 86400,
        ),
        tokens=SfnTaskTokens(session.client("stepfunctions", config=_BOTO_CONFIG)),
        workflows=SfnWorkflows(session.client("stepfunctions", config=_BOTO_CONFIG)),
        notifier=notifier,
        workflow_arns=dict(settings.workflows),
    )
    return Services(settings=settings, core=core, runs=RunService(core))


@lru_cache(maxsize=1)
def services() -> Services:
    return build_services(get_settings())
