"""The Slack interaction function's cold path holds only what verifying and queueing need: a fresh
interpreter imports its handler, builds its service from the environment and acks a signed click, and
none of pydantic, the API's resolver, the services, the wiring, the models, boto3 or the Slack Web API
client was loaded on the way (`baton/channels/slack/ack.py`). A modal's open loads them, on first use.
Timings are for `bench/parts/slack_ack.py --cold`; this counts modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any
from urllib.parse import urlencode

from slack_sdk.signature import SignatureVerifier

from baton.workflows.source_tree import source_tree

ROOT = source_tree().root
SECRET = "cold-signing-secret"
NOT_ON_THE_ACK_PATH = (
    "pydantic",
    "aws_lambda_powertools.event_handler",
    "baton.services",
    "baton.runtime.wiring",
    "baton.models",
    "baton.api",
    "baton.channels.slack.interactions",
    "boto3",
    "slack_sdk.web",
)
CODE = """
import json, sys, importlib.util
from types import SimpleNamespace
spec = importlib.util.spec_from_file_location("handler", sys.argv[1])
handler = importlib.util.module_from_spec(spec)
spec.loader.exec_module(handler)
after_import = sorted(sys.modules)
service = handler._service()
class Memory:
    jobs = []
    def first_use(self, signature, *, expires_at): return True
    def submit(self, job): self.jobs.append(job.to_json().decode())
service._replay = service._jobs = Memory()
context = SimpleNamespace(function_name="slack_interactions", memory_limit_in_mb=512, aws_request_id="r",
                          invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:slack_interactions")
reply = handler.lambda_handler(json.loads(sys.argv[2]), context)
print(json.dumps({"reply": reply, "jobs": Memory.jobs, "after_import": after_import, "after_ack": sorted(sys.modules)}))
"""


def _event(payload: dict[str, object]) -> str:
    body = urlencode({"payload": json.dumps(payload)})
    ts = str(int(time.time()))
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=ts, body=body)
    headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": signature}
    return json.dumps({"body": body, "headers": headers})


def test_the_handler_acks_a_click_without_loading_models_resolver_or_services() -> None:
    click = {
        "type": "block_actions",
        "user": {"id": "U0ALICE"},
        "response_url": "https://hooks.slack.test/r/1",
        "container": {"channel_id": "C1", "message_ts": "1.2"},
        "actions": [{"action_id": "baton_option_1", "value": json.dumps({"r": "run-1", "i": "q1", "o": 1})}],
    }
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "layers" / "baton" / "python"),
        "BATON_TABLE_NAME": "t",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "unit",
        "AWS_SECRET_ACCESS_KEY": "unit",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "SLACK_SIGNING_SECRET": SECRET,
        "BATON_SLACK_OPERATORS": json.dumps({"U0ALICE": "alice@example.com"}),
    }
    handler = str(ROOT / "functions" / "slack_interactions" / "handler.py")
    done = subprocess.run(
        [sys.executable, "-c", CODE, handler, _event(click)], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["reply"]["statusCode"] == 200 and seen["reply"]["body"] == ""
    (job,) = [json.loads(j) for j in seen["jobs"]]
    assert (job["operator"], job["run_id"], job["interaction_id"], job["option"]) == (
        "alice@example.com",
        "run-1",
        "q1",
        1,
    )
    for phase in ("after_import", "after_ack"):
        loaded = [m for m in seen[phase] if any(m == n or m.startswith(n + ".") for n in NOT_ON_THE_ACK_PATH)]
        assert loaded == [], f"{phase}: {loaded}"
    assert "baton.channels.slack.ack" in seen["after_ack"]  # the path that acked is the light one


def test_the_worker_reads_back_the_job_the_ack_sent_and_refuses_a_bad_one() -> None:
    from baton.channels.slack.jobs import MessageRef, SlackJob

    job = SlackJob(
        action="answer",
        slack_user="U0ALICE",
        operator="alice@example.com",
        run_id="run-1",
        interaction_id="q1",
        option=1,
        message=MessageRef(response_url="https://hooks.slack.test/r/1"),
    )
    assert SlackJob.from_event(json.loads(job.to_json())) == job
    import pytest

    for bad in ({**json.loads(job.to_json()), "run_id": "../x"}, {**json.loads(job.to_json()), "action": "merge"}):
        with pytest.raises(ValueError):
            SlackJob.from_event(bad)


def test_the_fast_path_reads_the_deployed_secret_and_mapping_once_and_refuses_a_missing_one() -> None:
    import pytest

    from baton.channels.slack.endpoint import SlackNotConfiguredError, _operators, _signing_secret, build_ack

    reads: list[str] = []

    class Aws:
        def get_secret_value(self, SecretId: str) -> dict[str, str]:
            reads.append(SecretId)
            return {"SecretString": json.dumps({"signing_secret": "from-sm", "bot_token": "xoxb-1"})}

        def get_parameter(self, Name: str, WithDecryption: bool) -> dict[str, Any]:
            reads.append(Name)
            return {"Parameter": {"Value": '{"W0ADMIN": "root@example.com"}'}}

    aws = Aws()
    env = {"SLACK_APP_SECRET_ARN": "arn:slack", "BATON_SLACK_OPERATORS_PARAMETER": "/baton/ops"}
    secret, operators = _signing_secret(env, lambda _service: aws), _operators(env, lambda _service: aws)
    assert reads == []  # nothing is read before the first request
    assert (secret(), secret(), operators(), operators()) == (
        "from-sm",
        "from-sm",
        {"W0ADMIN": "root@example.com"},
        {"W0ADMIN": "root@example.com"},
    )
    assert reads == ["arn:slack", "/baton/ops"]
    with pytest.raises(SlackNotConfiguredError, match="SLACK_SIGNING_SECRET or SLACK_APP_SECRET_ARN"):
        build_ack({"BATON_TABLE_NAME": "t", "AWS_DEFAULT_REGION": "us-east-1"})
