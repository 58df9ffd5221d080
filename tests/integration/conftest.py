"""Integration tests: the real adapters and handlers on moto in-process (no sockets to AWS)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
from moto.stepfunctions.parser.utils import TMP_THREADS

from baton.local.dispatch import LambdaDispatcher
from baton.local.moto_fixes import atomic_dynamodb_writes, sfn_integration_casing, sfn_stop_execution
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


EXECUTIONS_END_WITHIN_S = 5.0  # a stopped execution's thread ends at its state's next step


def _running_executions_stopped(sfn: Any, threads_before: int) -> None:
    """The test's executions still running are stopped, and the threads its executions started waited
    for, before its mock ends. Otherwise an execution parked on a token or a Wait state runs on into the
    next tests of this worker: its Lambdas fail there (the environment is gone) and its parses and
    DynamoDB calls land in the counts those tests take (tests/counting.py). `threads_before`: how many
    threads moto's interpreter had started (its TMP_THREADS, append-only) when the test began."""
    with sfn_stop_execution():  # plain moto's stop wakes no token wait (tests/integration/test_moto_stop_execution.py)
        for page in sfn.get_paginator("list_state_machines").paginate():
            for machine in page["stateMachines"]:
                executions = sfn.get_paginator("list_executions")
                arn = machine["stateMachineArn"]
                for listed in executions.paginate(stateMachineArn=arn, statusFilter="RUNNING"):
                    for execution in listed["executions"]:
                        sfn.stop_execution(executionArn=execution["executionArn"], error="TestEnded")
    deadline = time.monotonic() + EXECUTIONS_END_WITHIN_S
    for thread in TMP_THREADS[threads_before:]:
        thread.join(max(0.0, deadline - time.monotonic()))


@pytest.fixture
def moto_stack(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[MotoStack]:
    threads_before = len(TMP_THREADS)
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
                _running_executions_stopped(clients["stepfunctions"], threads_before)
                get_settings.cache_clear()
                services.cache_clear()
    assert "BATON_TABLE_NAME" in os.environ  # monkeypatch restores it after the test
