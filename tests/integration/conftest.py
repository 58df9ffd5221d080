"""Integration tests: the real adapters and handlers on moto in-process (no sockets to AWS)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from baton.local.dispatch import LambdaDispatcher
from baton.local.moto_fixes import atomic_dynamodb_writes, sfn_integration_casing
from baton.local.provision import Provisioned, provision
from baton.runtime.settings import get_settings
from baton.runtime.wiring import Services, services

MOTO_CONFIG: Any = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}


@dataclass
class MotoStack:
    provisioned: Provisioned
    services: Services
    dispatcher: LambdaDispatcher
    clients: dict[str, Any]


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")


@pytest.fixture
def moto_stack(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[MotoStack]:
    with mock_aws(config=MOTO_CONFIG):
        dispatcher = LambdaDispatcher()
        with dispatcher.installed(), atomic_dynamodb_writes(), sfn_integration_casing():
            clients = {n: boto3.client(n) for n in ("iam", "dynamodb", "sns", "lambda", "stepfunctions")}
            provisioned = provision(clients, prefix="baton-it")
            for key, value in provisioned.environment().items():
                monkeypatch.setenv(key, value)
            get_settings.cache_clear()
            services.cache_clear()
            try:
                yield MotoStack(provisioned, services(), dispatcher, clients)
            finally:
                get_settings.cache_clear()
                services.cache_clear()
    assert "BATON_TABLE_NAME" in os.environ  # monkeypatch restores it after the test
