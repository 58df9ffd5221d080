"""Integration tests: the real adapters and handlers on moto in-process (no sockets to AWS)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.stepfunctions.parser.models import StepFunctionsParserBackend

from baton.local.dispatch import LambdaDispatcher
from baton.local.moto_fixes import atomic_dynamodb_writes, sfn_integration_casing
from baton.local.provision import Provisioned, provision
from baton.runtime.settings import get_settings
from baton.runtime.wiring import Services, services

MOTO_CONFIG: Any = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}
# Definitions moto has parsed without error in this worker (see _definitions_parsed_once).
_VALID_DEFINITIONS: set[str] = set()
_parse_definition = StepFunctionsParserBackend._validate_definition


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


def _validate_once(definition: str) -> None:
    if definition not in _VALID_DEFINITIONS:
        _parse_definition(definition=definition)  # raises InvalidDefinition, every time, for a bad one
        _VALID_DEFINITIONS.add(definition)


def _definitions_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto validates a state machine's definition by parsing it whole (its ANTLR ASL parser) on every
    CreateStateMachine: about three quarters of the CPU `provision` takes, for the same eight
    definitions in every test. The parse is a function of the text alone, so a text that parsed once in
    this worker is not parsed again; a definition that fails is parsed, and refused, every time."""
    monkeypatch.setattr(StepFunctionsParserBackend, "_validate_definition", staticmethod(_validate_once))


@pytest.fixture
def moto_stack(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[MotoStack]:
    _definitions_parsed_once(monkeypatch)
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
