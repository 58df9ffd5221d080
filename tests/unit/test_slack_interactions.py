"""The Slack interaction service and its worker on the in-memory store: the signature is checked before
anything is parsed, a replay is refused, a click is only queued (the answer runs after the ack), a modal
is checked against the answer schema, unmapped users are refused; the worker answers through the API's
services and updates the message."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlencode

import pytest
from slack_sdk.signature import SignatureVerifier

from baton.channels.slack.config import SlackAppConfig, parse_operators
from baton.channels.slack.interactions import SlackInteractions
from baton.channels.slack.payloads import MessageRef, SlackJob
from baton.channels.slack.worker import SlackWorker
from baton.contracts import AskRequest
from baton.domain.interrupt_spec import InterruptSpec
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.interrupts import InterruptService
from baton.services.questions import QuestionService
from baton.services.runs import RunService

SECRET = "unit-signing-secret"
NOW = 1_800_000_000


class MemoryReplayGuard:
    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def first_use(self, signature: str, *, expires_at: int) -> bool:
        if signature in self.seen:
            return False
        self.seen[signature] = expires_at
        return True


class RecordingJobs:
    def __init__(self) -> None:
        self.jobs: list[SlackJob] = []

    def submit(self, job: SlackJob) -> None:
        self.jobs.append(job)


class RecordingSlack:
    def __init__(self) -> None:
        self.opened: list[dict[str, Any]] = []
        self.responses: list[tuple[str, dict[str, Any]]] = []
        self.updates: list[tuple[str, str, str]] = []

    def views_open(self, *, trigger_id: str, view: dict[str, Any]) -> None:
        self.opened.append(view)

    def respond(self, response_url: str, body: dict[str, Any]) -> None:
        self.responses.append((response_url, body))

    def update(self, channel: str, ts: str, *, text: str, blocks: list[dict[str, Any]]) -> None:
        self.updates.append((channel, ts, text))


class Harness:
    def __init__(self, core: Core) -> None:
        self.core = core
        self.replay = MemoryReplayGuard()
        self.jobs = RecordingJobs()
        self.slack = RecordingSlack()
        self.service = SlackInteractions(
            signing_secret=lambda: SECRET,
            operators=lambda: {"U0ALICE": "alice@example.com", "U0BOB": "bob@example.com"},
            store=core.store,
            replay=self.replay,
            jobs=self.jobs,
            views=lambda: self.slack,
            clock=lambda: NOW,
        )
        services = Services(settings=Settings(BATON_TABLE_NAME="t"), core=core, runs=RunService(core))
        self.worker = SlackWorker(services, self.slack)

    def post(self, payload: dict[str, Any], *, ts: int = NOW, secret: str = SECRET) -> Any:
        body = urlencode({"payload": json.dumps(payload)})
        signature = SignatureVerifier(secret).generate_signature(timestamp=str(ts), body=body)
        assert signature is not None
        headers = {"X-Slack-Request-Timestamp": str(ts), "X-Slack-Signature": signature}
        return self.service.handle(body.encode(), headers)


@pytest.fixture
def harness(core: Core) -> Harness:
    return Harness(core)


def _ask(core: Core) -> tuple[str, str]:
    asked = QuestionService(core).ask(
        "run-1", AskRequest(node="draft", question="Which db?", options=["pg", "ddb"]), caller="agent"
    )
    return "run-1", str(asked["interaction_id"])


def _click(run_id: str, iid: str, option: int | None, user: str = "U0ALICE") -> dict[str, Any]:
    value: dict[str, Any] = {"r": run_id, "i": iid} | ({"o": option} if option is not None else {})
    action = f"baton_option_{option}" if option is not None else "baton_open_form"
    return {
        "type": "block_actions",
        "user": {"id": user},
        "trigger_id": "t-1",
        "response_url": "https://hooks.slack.test/r/1",
        "container": {"channel_id": "C1", "message_ts": "1.2"},
        "actions": [{"action_id": action, "value": json.dumps(value)}],
    }


def test_a_click_is_only_queued_the_answer_runs_in_the_worker(harness: Harness) -> None:
    run_id, iid = _ask(harness.core)
    reply = harness.post(_click(run_id, iid, 1))
    assert (reply.status, reply.body) == (200, None)
    assert harness.core.store.get_interaction(run_id, iid).state.status == "pending"  # type: ignore[union-attr]
    (job,) = harness.jobs.jobs
    assert (job.operator, job.option, job.message.response_url) == (
        "alice@example.com",
        1,
        "https://hooks.slack.test/r/1",
    )

    assert harness.worker.run(job) == "answered by alice@example.com with ddb"
    stored = harness.core.store.get_interaction(run_id, iid)
    assert stored is not None and (stored.state.answer, stored.state.answered_by) == ("ddb", "alice@example.com")
    ((url, body),) = harness.slack.responses
    assert url == "https://hooks.slack.test/r/1" and body["replace_original"] is True


def test_the_second_click_is_told_who_answered_first(harness: Harness) -> None:
    run_id, iid = _ask(harness.core)
    harness.post(_click(run_id, iid, 0, user="U0BOB"))
    harness.post({**_click(run_id, iid, 1), "trigger_id": "t-2"})
    bob, alice = harness.jobs.jobs
    assert harness.worker.run(bob) == "answered by bob@example.com with pg"
    assert harness.worker.run(alice) == "already answered by bob@example.com with pg"


@pytest.mark.parametrize(
    ("mangle", "status"),
    [
        ({"secret": "wrong"}, 401),
        ({"ts": NOW - 301}, 401),
        ({"ts": NOW + 301}, 401),
    ],
)
def test_bad_signatures_and_stale_timestamps_are_401_and_change_nothing(
    harness: Harness, mangle: dict[str, Any], status: int
) -> None:
    run_id, iid = _ask(harness.core)
    reply = harness.post(_click(run_id, iid, 0), **mangle)
    assert reply.status == status and reply.body["error"] == "unauthorized"
    assert harness.jobs.jobs == [] and harness.replay.seen == {}


def test_a_body_that_is_not_a_payload_is_never_parsed_unsigned(harness: Harness) -> None:
    reply = harness.service.handle(
        b"payload=%7Bnot-json", {"X-Slack-Request-Timestamp": str(NOW), "X-Slack-Signature": "v0=00"}
    )
    assert reply.status == 401  # refused on the signature: the body was not looked at
    body = b"payload=%7Bnot-json"
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=str(NOW), body=body)
    assert signature is not None
    signed = harness.service.handle(body, {"X-Slack-Request-Timestamp": str(NOW), "X-Slack-Signature": signature})
    assert signed.status == 400


def test_a_replay_is_refused_and_queues_nothing(harness: Harness) -> None:
    run_id, iid = _ask(harness.core)
    payload = _click(run_id, iid, 0)
    assert harness.post(payload).status == 200
    again = harness.post(payload)
    assert again.status == 409 and again.body["error"] == "replayed"
    assert len(harness.jobs.jobs) == 1
    (expires,) = harness.replay.seen.values()
    assert expires > NOW + 300  # kept past Slack's window, then the TTL drops it


def test_an_unmapped_user_is_refused_and_nothing_is_answered(harness: Harness) -> None:
    run_id, iid = _ask(harness.core)
    assert harness.post(_click(run_id, iid, 0, user="U0EVE")).status == 200
    (job,) = harness.jobs.jobs
    assert job.action == "refuse" and job.operator is None
    assert harness.worker.run(job) == "you are not a Baton operator: ask your admin to map U0EVE"
    ((_, body),) = harness.slack.responses
    assert body == {
        "response_type": "ephemeral",
        "replace_original": False,
        "text": "you are not a Baton operator: ask your admin to map U0EVE",
    }
    assert harness.core.store.get_interaction(run_id, iid).state.status == "pending"  # type: ignore[union-attr]


SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}


def _interrupt(core: Core) -> str:
    spec = InterruptSpec(session_id="sess-1", prompt="How many?", json_schema=SCHEMA)
    interaction, _ = InterruptService(core).create(spec, caller="agent")
    return interaction.interaction_id


def _submit(view: dict[str, Any], n: str, user: str = "U0ALICE") -> dict[str, Any]:
    values = {"field_0": {"value": {"type": "number_input", "value": n}}}
    return {
        "type": "view_submission",
        "user": {"id": user},
        "view": {
            "callback_id": view["callback_id"],
            "private_metadata": view["private_metadata"],
            "state": {"values": values},
        },
    }


def test_the_modal_is_checked_against_the_answer_schema_before_anything_is_queued(harness: Harness) -> None:
    iid = _interrupt(harness.core)
    assert harness.post(_click("sess-1", iid, None)).status == 200
    (view,) = harness.slack.opened

    refused = harness.post(_submit(view, "0"))
    assert refused.status == 200 and refused.body["response_action"] == "errors"
    assert refused.body["errors"] == {"field_0": "must be bigger than or equal to 1"}
    assert harness.jobs.jobs == []

    not_mapped = harness.post(_submit(view, "2", user="U0EVE"))
    assert not_mapped.body["errors"] == {"field_0": "you are not a Baton operator: ask your admin to map U0EVE"}

    accepted = harness.post(_submit(view, "2"))
    assert (accepted.status, accepted.body) == (200, None)
    (job,) = harness.jobs.jobs
    assert job.value == {"n": 2} and job.message == MessageRef(channel="C1", ts="1.2")
    assert harness.worker.run(job) == 'answered by alice@example.com with {"n":2}'
    assert harness.slack.updates == [("C1", "1.2", 'answered by alice@example.com with {"n":2}')]
    stored = harness.core.store.get_interaction("sess-1", iid)
    assert stored is not None and stored.state.answered_by == "alice@example.com"


def test_config_reads_the_operator_mapping_and_refuses_a_bad_one() -> None:
    assert parse_operators('{"U0123ABC": "alice@example.com"}') == {"U0123ABC": "alice@example.com"}
    for bad in ('["U0123"]', '{"alice": "alice"}', '{"U0123ABC": ""}'):
        with pytest.raises(ValueError, match="mapping"):
            parse_operators(bad)
    env = {"SLACK_SIGNING_SECRET": "s", "BATON_SLACK_OPERATORS": '{"U0123ABC": "bob"}'}
    config = SlackAppConfig.from_env(env)
    assert config.operators_provider()() == {"U0123ABC": "bob"}
    assert config.secrets_provider()().signing_secret == "s"
    assert not SlackAppConfig.configured({"SLACK_WEBHOOK_URL": "https://hooks"})


class CountingSecrets:
    def __init__(self) -> None:
        self.reads = 0

    def get_secret_value(self, SecretId: str) -> dict[str, str]:
        self.reads += 1
        return {"SecretString": json.dumps({"signing_secret": "from-sm", "bot_token": "xoxb-1"})}


class OneParameter:
    def get_parameter(self, Name: str, WithDecryption: bool) -> dict[str, Any]:
        return {"Parameter": {"Value": '{"W0ADMIN": "root@example.com"}'}}


def test_deployed_secrets_are_read_once_per_container() -> None:
    config = SlackAppConfig.from_env(
        {
            "SLACK_APP_SECRET_ARN": "arn:aws:secretsmanager:r:1:secret:slack",
            "BATON_SLACK_OPERATORS_PARAMETER": "/baton/ops",
        }
    )
    client = CountingSecrets()
    secrets = config.secrets_provider(secretsmanager_client=client)
    assert secrets().bot_token == "xoxb-1" and secrets().signing_secret == "from-sm"
    assert client.reads == 1
    assert config.operators_provider(ssm_client=OneParameter())() == {"W0ADMIN": "root@example.com"}


def test_the_slack_clock_is_the_one_checked(harness: Harness) -> None:
    # The service's clock, not the machine's: a request signed "now" by the real clock is stale at NOW.
    run_id, iid = _ask(harness.core)
    assert harness.post(_click(run_id, iid, 0), ts=int(time.time())).status == 401


class RefusingSlack(RecordingSlack):
    def views_open(self, *, trigger_id: str, view: dict[str, Any]) -> None:
        from slack_sdk.errors import SlackApiError

        raise SlackApiError("expired_trigger_id", {"ok": False, "error": "expired_trigger_id"})


def test_a_modal_slack_will_not_open_is_said_and_changes_nothing(harness: Harness) -> None:
    iid = _interrupt(harness.core)
    harness.slack = RefusingSlack()
    reply = harness.post(_click("sess-1", iid, None))
    assert reply.status == 502 and "click again" in reply.body["message"]
    assert harness.jobs.jobs == []
    assert harness.core.store.get_interaction("sess-1", iid).state.status == "pending"  # type: ignore[union-attr]
