"""The deployed `slack_interactions` endpoint assembled from the environment, on the fast path: the
variables `config.py` documents read with `os.environ` and `json` (no pydantic settings), the secrets
read once per container through botocore clients, and the form desk (`interactions.SlackForms`, with
the store and the Slack Web API client) built only when a request needs it.

- `SLACK_SIGNING_SECRET`, or `SLACK_APP_SECRET_ARN` (Secrets Manager JSON `{"signing_secret": ...}`);
- `BATON_SLACK_OPERATORS`, or `BATON_SLACK_OPERATORS_PARAMETER` (SSM, the same JSON);
- `BATON_TABLE_NAME` (the replay guard), `BATON_SLACK_WORKER_FUNCTION` and `BATON_SLACK_WORKER_INVOKE`.
"""

from __future__ import annotations

import json
import os
import threading
from typing import TYPE_CHECKING, Any

from baton.channels.slack.ack import FormDesk, SlackAck, parse_operators
from baton.errors import NotFoundError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from baton.channels.slack.ack import JobQueue


class SlackNotConfiguredError(NotFoundError):
    """The stack has no Slack app (no signing secret): its interaction URL says so, a 404, never a 5xx."""


class _Once:
    """A value read on first use, then kept for the container's life."""

    def __init__(self, read: Callable[[], Any]) -> None:
        self._read = read
        self._value: Any = None
        self._lock = threading.Lock()

    def __call__(self) -> Any:
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._read()
        return self._value


def _signing_secret(env: Mapping[str, str], client: Callable[[str], Any]) -> Callable[[], str]:
    plain = env.get("SLACK_SIGNING_SECRET", "").strip()
    if plain:
        return lambda: plain
    arn = env.get("SLACK_APP_SECRET_ARN", "").strip()
    if not arn:
        raise SlackNotConfiguredError(
            "Slack is not configured on this stack: set SLACK_SIGNING_SECRET or SLACK_APP_SECRET_ARN for the Slack app"
        )

    def read() -> str:
        secret = json.loads(str(client("secretsmanager").get_secret_value(SecretId=arn)["SecretString"]))
        value = secret.get("signing_secret") if isinstance(secret, dict) else None
        if not isinstance(value, str) or not value:
            raise ValueError("the Slack app secret has no signing_secret")
        return value

    return _Once(read)


def _operators(env: Mapping[str, str], client: Callable[[str], Any]) -> Callable[[], dict[str, str]]:
    name = env.get("BATON_SLACK_OPERATORS_PARAMETER", "").strip()
    if not name:
        mapping = parse_operators(env.get("BATON_SLACK_OPERATORS"))
        return lambda: mapping

    def read() -> dict[str, str]:
        response = client("ssm").get_parameter(Name=name, WithDecryption=True)
        return parse_operators(str(response["Parameter"]["Value"]))

    return _Once(read)


def build_ack(environ: Mapping[str, str] | None = None) -> SlackAck:
    from baton.adapters.slack import DynamoReplayGuard, LambdaJobs, ThreadedLambdaJobs, botocore_client

    env = os.environ if environ is None else environ
    signing_secret = _signing_secret(env, botocore_client)  # no Slack app is said first, before any client
    table = env.get("BATON_TABLE_NAME", "").strip()
    if not table:
        raise ValueError("set BATON_TABLE_NAME: the Slack replay guard writes there")
    operators = _operators(env, botocore_client)
    worker = env.get("BATON_SLACK_WORKER_FUNCTION", "").strip() or "slack_worker"
    threaded = env.get("BATON_SLACK_WORKER_INVOKE", "event").strip() == "thread"
    jobs: JobQueue = (ThreadedLambdaJobs if threaded else LambdaJobs)(botocore_client("lambda"), worker)

    def forms() -> FormDesk:
        from baton.channels.slack.app import app_config, build_forms

        return build_forms(app_config(), operators=operators, jobs=jobs)

    return SlackAck(
        signing_secret=signing_secret,
        operators=operators,
        replay=DynamoReplayGuard(table, botocore_client("dynamodb")),
        jobs=jobs,
        forms=_Once(forms),
    )
