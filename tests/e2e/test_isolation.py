"""The local stack over HTTP: many concurrent answers to different runs' questions, each landing on
its own question (the server's threads share one process; no request's body reaches another's path)."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

from tests.e2e.conftest import LocalStackProcess

RUNS = 24


def test_concurrent_answers_each_land_on_their_own_question(local_stack: LocalStackProcess) -> None:
    tag = uuid.uuid4().hex[:8]
    asked = {}
    with local_stack.http() as http:
        for n in range(RUNS):
            run_id = f"iso-{tag}-{n}"
            response = http.post(f"/api/runs/{run_id}/questions", json={"node": "draft", "question": f"q{n}?"})
            assert response.status_code == 201, response.text
            asked[run_id] = response.json()["interaction_id"]
    barrier = threading.Barrier(RUNS)

    def answer(run_id: str) -> int:
        with local_stack.http() as http:
            barrier.wait()
            path = f"/api/runs/{run_id}/interactions/{asked[run_id]}/answer"
            return http.post(path, json={"answer": f"answer for {run_id}"}).status_code

    with ThreadPoolExecutor(RUNS) as pool:
        assert list(pool.map(answer, asked)) == [200] * RUNS
    with local_stack.http() as http:
        for run_id, iid in asked.items():
            events = http.get(f"/api/runs/{run_id}/events").json()["events"]
            answered = [e["data"] for e in events if e["type"] == "interaction_answered"]
            assert [(a["interaction_id"], a["answer"]) for a in answered] == [(iid, f"answer for {run_id}")]
