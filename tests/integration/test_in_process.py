"""The local stack's in-process calls (baton.local.in_process): the direct route gives moto's own
answers, byte for byte, and skips moto's scan over every service; an in-process request skips computing
its SigV4 signature and keeps the header moto reads the account from. Each counted against plain moto."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from moto import backends, mock_aws, settings
from moto.core.authorization import ActionAuthenticatorMixin
from moto.core.botocore_stubber import MockRawResponse
from moto.core.models import botocore_stubber

from baton.local import in_process
from baton.local.in_process import DirectRoutes, calls_in_process
from baton.workflows.table import create_table_kwargs
from tests.counting import CallsCounted

TABLE = "in-process-table"
NOBODY_LISTENS = "http://127.0.0.1:9"  # the discard port: a request sent there is refused
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


def _signed() -> CallsCounted:
    return CallsCounted((SigV4Auth, "signature"))


def _authorization(client: Any) -> list[str]:
    seen: list[str] = []

    def keep(request: Any, **_: Any) -> None:
        header = request.headers["Authorization"]
        seen.append(header.decode() if isinstance(header, bytes) else header)

    client.meta.events.register_first("before-send.*.*", keep)
    return seen


@pytest.mark.parametrize("in_process_on", [True, False], ids=["fixed", "plain-moto"])
def test_an_in_process_request_is_not_signed_and_keeps_its_credential(aws: None, in_process_on: bool) -> None:
    """moto picks the account by the access key in the header: the same in both; only the signature
    differs (computed by plain botocore, the unsigned marker in process)."""
    with calls_in_process(NOBODY_LISTENS, "us-east-1") if in_process_on else mock_aws():
        endpoint = NOBODY_LISTENS if in_process_on else None
        db = boto3.client(
            "dynamodb",
            endpoint_url=endpoint,
            config=Config(retries={"max_attempts": 1}),
            aws_access_key_id="AKIDINPROCESS",
            aws_secret_access_key="secret",
        )
        headers = _authorization(db)
        before = in_process.UNSIGNED_REQUESTS[0]
        with _signed() as signed:
            db.create_table(**create_table_kwargs(TABLE))
            assert db.list_tables()["TableNames"] == [TABLE]
    assert len(headers) == 2
    credential, signed_headers, signature = headers[1].split(", ")
    assert credential.startswith("AWS4-HMAC-SHA256 Credential=AKIDINPROCESS/")
    assert credential.endswith("/us-east-1/dynamodb/aws4_request")
    assert "x-amz-date" in signed_headers
    if in_process_on:
        assert (signed.count, in_process.UNSIGNED_REQUESTS[0] - before) == (0, 2)
        assert signature == f"Signature={in_process.UNSIGNED}"
    else:
        assert (signed.count, in_process.UNSIGNED_REQUESTS[0] - before) == (2, 0)
        assert signature != f"Signature={in_process.UNSIGNED}"


def test_requests_are_signed_when_moto_checks_signatures_or_they_leave_the_process(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with calls_in_process(NOBODY_LISTENS, "us-east-1"):
        aws_db = boto3.client("dynamodb")  # AWS's own address (mock_aws answers it): signed as always
        with _signed() as signed:
            aws_db.list_tables()
        assert signed.count == 1
        monkeypatch.setattr(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 100)  # moto's IAM authentication on
        # ...after 100 requests: counted from here, whatever this process's tests asked before (a 403 then)
        monkeypatch.setattr(ActionAuthenticatorMixin, "request_count", 0)
        local_db = boto3.client("dynamodb", endpoint_url=NOBODY_LISTENS)
        with _signed() as signed:
            local_db.list_tables()
        assert signed.count == 1


def test_the_stacks_own_clients_skip_client_side_validation_and_baton_clients_elsewhere_keep_it(aws: None) -> None:
    from botocore.exceptions import ParamValidationError

    from baton.adapters.clients import CLIENT_CONFIG

    bad = {"TableName": TABLE, "Key": {"PK": {"S": "RUN#r"}, "SK": {"S": "RUN"}}, "ConsistentRead": "yes"}
    _fill()
    with pytest.raises(ParamValidationError):  # deployed and on moto in the tests: botocore refuses it
        boto3.client("dynamodb", config=CLIENT_CONFIG).get_item(**bad)
    before = in_process.SERIALIZERS_UNVALIDATED[0]
    with calls_in_process(NOBODY_LISTENS, "us-east-1"):
        local_db = boto3.session.Session().client("dynamodb", endpoint_url=NOBODY_LISTENS, config=CLIENT_CONFIG)
        answered = local_db.get_item(**bad)  # sent as it is (botocore would refuse the string)
    assert answered["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert in_process.SERIALIZERS_UNVALIDATED[0] - before == 1
    with pytest.raises(ParamValidationError):  # closed: clients validate again
        boto3.client("dynamodb", config=CLIENT_CONFIG).get_item(**bad)
