"""Concurrent requests in one process never see each other's state (the local stack runs its handler
"containers" in threads of one process, and Powertools keeps the current request on the class).

The requests go through `LambdaDispatcher.invoke("api", ...)` exactly as the local stack's HTTP server
sends them: many answers to different runs' questions at once, each with its own body; every answer
must land on its own question."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from baton.api import deps
from baton.contracts import AskRequest
from baton.local.dispatch import LambdaDispatcher
from baton.local.http_adapter import to_proxy_event
from baton.runtime import wiring
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.questions import QuestionService
from baton.services.runs import RunService
from baton.workflows.resources import FUNCTIONS

TOKEN = "local-secret"
RUNS = 40


@pytest.fixture
def dispatcher(core: Core, monkeypatch: pytest.MonkeyPatch) -> Iterator[LambdaDispatcher]:
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")  # as the local stack runs them
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core))
    monkeypatch.setattr(wiring, "services", lambda: services)  # what each loaded handler module calls
    deps.set_services_provider(lambda: services)
    yield LambdaDispatcher(tuple(s for s in FUNCTIONS if s.name == "api"))
    deps.set_services_provider(deps._default_provider)


def _answer_event(run_id: str, interaction_id: str, answer: str) -> dict[str, Any]:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
    path = f"/api/runs/{run_id}/interactions/{interaction_id}/answer"
    return to_proxy_event("POST", path, headers, json.dumps({"answer": answer}).encode(), "127.0.0.1")


def test_concurrent_answers_to_different_runs_each_land_on_their_own_question(
    dispatcher: LambdaDispatcher, core: Core
) -> None:
    questions = QuestionService(core)
    asked = {}
    for n in range(RUNS):
        run_id = f"run-{n}"
        asked[run_id] = questions.ask(run_id, AskRequest(node="draft", question=f"q{n}?"), caller="agent")[
            "interaction_id"
        ]
    barrier = threading.Barrier(RUNS)

    def answer(run_id: str) -> tuple[str, int, dict[str, Any]]:
        barrier.wait()
        payload, errored = dispatcher.invoke("api", _answer_event(run_id, asked[run_id], f"answer for {run_id}"))
        assert not errored, payload
        return run_id, payload["statusCode"], json.loads(payload["body"])

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads as often as possible: any shared request state shows
    try:
        with ThreadPoolExecutor(RUNS) as pool:
            results = list(pool.map(answer, asked))
    finally:
        sys.setswitchinterval(previous)

    assert [(run_id, status) for run_id, status, _ in results] == [(run_id, 200) for run_id in asked]
    assert all(body["interaction_id"] == asked[run_id] for run_id, _, body in results)
    for run_id, iid in asked.items():
        stored = core.store.get_interaction(run_id, iid)
        assert stored is not None and stored.state.answer == f"answer for {run_id}", (run_id, stored)
    # Several containers ran at once, as in Lambda (one request per container at a time).
    assert dispatcher.invocations["api"] == RUNS
