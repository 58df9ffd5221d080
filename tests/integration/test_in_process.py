"""The local stack's in-process calls (baton.local.in_process): the direct route gives moto's own
answers, byte for byte, and skips moto's scan over every service (counted against plain moto)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from moto import backends, mock_aws
from moto.core.botocore_stubber import MockRawResponse
from moto.core.models import botocore_stubber

from baton.local.in_process import DirectRoutes
from baton.workflows.table import create_table_kwargs

TABLE = "in-process-table"
RANDOM_HEADERS = {"x-amzn-requestid", "x-amz-request-id", "date", "x-amz-id-2"}
DEFINITION = json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Pass", "End": True}}})


@pytest.fixture
def aws(aws_env: None) -> Iterator[None]:
    with mock_aws():
        yield


def _fill() -> None:
    db = boto3.client("dynamodb")
    db.create_table(**create_table_kwargs(TABLE))
    for n in range(3):
        db.put_item(TableName=TABLE, Item={"PK": {"S": "RUN#r"}, "SK": {"S": f"I#{n}"}, "n": {"N": str(n)}})
    boto3.client("sns").create_topic(Name="in-process-topic")
    role = "arn:aws:iam::123456789012:role/in-process"
    boto3.client("stepfunctions").create_state_machine(name="in-process", definition=DEFINITION, roleArn=role)


def _both_routes(client: Any, answers: list[tuple[Any, Any]], routes: DirectRoutes) -> None:
    """Each request of `client` answered by the direct route and by moto's stubber (reads and refused
    writes only: both run it); the direct answer is the one the client gets."""

    def answer(request: Any, **_: Any) -> Any:
        direct = routes.process_request(request)
        plain = botocore_stubber.process_request(request)
        answers.append((direct, plain))
        status, headers, body = direct
        return AWSResponse(request.url, status, headers, MockRawResponse(body))  # type: ignore[arg-type]

    client.meta.events.register_first("before-send.*.*", answer)


def _comparable(answer: Any) -> tuple[int, dict[str, str], bytes]:
    status, headers, body = answer
    kept = {k.lower(): str(v) for k, v in dict(headers).items() if k.lower() not in RANDOM_HEADERS}
    raw = body.encode() if isinstance(body, str) else body
    return status, kept, re.sub(rb"<RequestId>[^<]*</RequestId>", b"<RequestId/>", raw)  # a new one per answer


def test_the_direct_route_answers_as_motos_stubber(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    _fill()
    routes = DirectRoutes()
    answers: list[tuple[Any, Any]] = []
    db, sfn, sns, lam = (boto3.client(name) for name in ("dynamodb", "stepfunctions", "sns", "lambda"))
    for client in (db, sfn, sns, lam):
        _both_routes(client, answers, routes)
    [machine] = sfn.list_state_machines()["stateMachines"]
    for _ in range(2):  # the second time from the kept routes
        db.get_item(TableName=TABLE, Key={"PK": {"S": "RUN#r"}, "SK": {"S": "I#1"}})
        db.query(TableName=TABLE, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": {"S": "RUN#r"}})
        db.describe_table(TableName=TABLE)
        with pytest.raises(db.exceptions.ConditionalCheckFailedException):
            db.put_item(
                TableName=TABLE,
                Item={"PK": {"S": "RUN#r"}, "SK": {"S": "I#1"}},
                ConditionExpression="attribute_not_exists(PK)",
            )
        with pytest.raises(db.exceptions.ResourceNotFoundException):
            db.get_item(TableName="no-such-table", Key={"PK": {"S": "x"}, "SK": {"S": "y"}})
        sfn.describe_state_machine(stateMachineArn=machine["stateMachineArn"])
        with pytest.raises(sfn.exceptions.ExecutionDoesNotExist):
            sfn.describe_execution(
                executionArn=machine["stateMachineArn"].replace(":stateMachine:", ":execution:") + ":none"
            )
        sns.list_topics()
        lam.list_functions()
    assert len(answers) == 1 + 2 * 9  # the listing, then nine calls twice
    for direct, plain in answers:
        assert _comparable(direct) == _comparable(plain)
    assert {answer[0][0] for answer in answers} == {200, 400}

    looked_up: list[str] = []
    get_backend = backends.get_backend

    def counted(service: str) -> Any:
        looked_up.append(service)
        return get_backend(service)  # type: ignore[call-overload]

    request = _captured_request(boto3.client("dynamodb"))
    monkeypatch.setattr(backends, "get_backend", counted)
    routes.process_request(request)
    assert looked_up == []  # the kept route: no scan, no backend looked up
    botocore_stubber.process_request(request)
    assert looked_up == ["dynamodb"]  # moto's stubber, on every request
    assert routes.resolved == 4  # one scan per host: dynamodb, states, sns, lambda


def _captured_request(db: Any) -> Any:
    captured: list[Any] = []

    def capture(request: Any, **_: Any) -> Any:
        captured.append(request)
        return AWSResponse(request.url, 200, {}, MockRawResponse(b"{}"))  # type: ignore[arg-type]

    db.meta.events.register_first("before-send.*.*", capture, unique_id="capture")
    db.list_tables()
    db.meta.events.unregister("before-send.*.*", unique_id="capture")
    return captured[0]
