"""A question stored with a lone surrogate (before the API's door refused them: baton.domain.json_input)
on the DynamoDB adapter (moto): it still lists, its text shown with U+FFFD, and it can be answered.
Before, pydantic's JSON parser refused the stored request's escape: every inbox read was a 502."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from baton.adapters.dynamo import DynamoStore
from baton.contracts import AskRequest
from baton.contracts.inbox import InboxQuery
from baton.services.core import Core
from baton.services.inbox import InboxService
from baton.services.questions import QuestionService
from baton.workflows.table import create_table_kwargs
from tests.conftest import FixedClock
from tests.fakes import FakeWorkflows, RecordingNotifier, RecordingTaskTokens


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Iterator[DynamoStore]:
    for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**create_table_kwargs("invalid-text-it"))
        yield DynamoStore("invalid-text-it", client)


def test_a_stored_lone_surrogate_lists_as_invalid_text_and_can_be_answered(store: DynamoStore) -> None:
    clock = FixedClock()
    core = Core(
        store=store, tokens=RecordingTaskTokens(), workflows=FakeWorkflows(), notifier=RecordingNotifier(), clock=clock
    )
    questions = QuestionService(core)
    # the service has no door of its own: this is what the API stored before it refused the text
    asked = questions.ask(
        "run-a", AskRequest(node="draft", question="q\ud800", options=["a\udc00", "b"]), caller="agent"
    )
    page = InboxService(core).page(InboxQuery(), caller="alice")
    assert [(i.id, i.prompt, i.options) for i in page.items] == [(asked["interaction_id"], "q\ufffd", ["a\ufffd", "b"])]
    page.model_dump_json()  # the page is valid text all through: what the API sends
    questions.answer("run-a", asked["interaction_id"], "b", caller="alice")
    assert InboxService(core).page(InboxQuery(), caller="alice").items == []
