"""Async questions over HTTP against `baton dev`: async questions, the await gate state machine really executing
(auto-resume, answer-before-park, timeout, scoped `from`, Map), 409 and the 20-answer race, drain once,
the tool form, the CLI from another process, and bad input refused without side effects."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from typing import Any

import pytest

from baton.errors import ConflictError, ValidationFailedError
from tests.e2e.conftest import LocalStackProcess, wait_for

pytestmark = pytest.mark.e2e


def _run_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _events(client: Any, run_id: str) -> list[dict[str, Any]]:
    return list(client.events(run_id, limit=500)["events"])


def _cli(stack: LocalStackProcess, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BATON_API_URL": stack.api_url, "BATON_TOKEN": stack.token}
    return subprocess.run(
        [sys.executable, "-m", "baton.cli", *args], capture_output=True, text=True, timeout=60, env=env
    )


def test_post_answer_from_another_terminal_auto_resumes_the_gate(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = _run_id("q-resume")
    questions = [{"question": "Which database?", "options": ["postgres", "dynamodb"]}, {"question": "Ship date?"}]
    client.start_run(
        "await_answers",
        {"node": "draft", "from": "draft", "timeout_seconds": 60, "questions": questions},
        run_id=run_id,
    )
    wait_for(lambda: client.get_run(run_id)["status"] == "paused_waiting_human")
    listed = _cli(local_stack, "runs", "questions", run_id)
    assert listed.returncode == 0, listed.stderr
    assert "Which database?" in listed.stdout and "postgres" in listed.stdout
    pending = json.loads(_cli(local_stack, "runs", "questions", run_id, "--json").stdout)
    by_prompt = {p["request"]["prompt"]: p["interaction_id"] for p in pending}

    first = _cli(local_stack, "runs", "answer", run_id, by_prompt["Which database?"], "postgres", "--json")
    assert first.returncode == 0 and json.loads(first.stdout)["resumed"] is False
    assert client.get_run(run_id)["status"] == "paused_waiting_human"
    second = _cli(local_stack, "runs", "answer", run_id, by_prompt["Ship date?"], "Friday")
    assert second.returncode == 0 and "resumed: await" in second.stdout

    summary = wait_for(lambda: (s := client.get_run(run_id))["status"] == "succeeded" and s)
    assert [(a["question"], a["answer"]) for a in summary["output"]["answers"]] == [
        ("Which database?", "postgres"),
        ("Ship date?", "Friday"),
    ]
    again = _cli(local_stack, "runs", "answer", run_id, by_prompt["Ship date?"], "Monday")
    assert again.returncode == 1 and "already answered" in again.stderr and "Traceback" not in again.stderr

    messages = client.drain_messages(run_id, "draft")
    assert [m["text"] for m in messages] == [
        f'[Answer to question {by_prompt["Which database?"]}] Q: "Which database?" — A: postgres',
        f'[Answer to question {by_prompt["Ship date?"]}] Q: "Ship date?" — A: Friday',
    ]
    assert client.drain_messages(run_id, "draft") == []
    events = _events(client, run_id)
    types = [e["type"] for e in events]
    assert types.count("human_input_requested") == 2 and all(
        e["data"]["async"] for e in events if e["type"] == "human_input_requested"
    )
    assert types.count("await_released") == 1 and types.count("interaction_answered") == 2
    assert [e["data"]["answer"] for e in events if e["type"] == "interaction_answered"] == ["postgres", "Friday"]


def test_answers_given_before_the_gate_parks_are_honoured(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = _run_id("q-early")
    client.start_run(
        "await_answers",
        {"node": "draft", "timeout_seconds": 60, "delay_seconds": 3, "questions": [{"question": "Early?"}]},
        run_id=run_id,
    )
    [question] = wait_for(lambda: client.pending_questions(run_id))
    assert not any(e["type"] == "await_started" for e in _events(client, run_id))  # the gate is not parked yet
    assert client.answer(run_id, question["interaction_id"], "yes, early")["resumed"] is False
    summary = wait_for(lambda: (s := client.get_run(run_id))["status"] == "succeeded" and s, timeout=20)
    assert summary["output"]["answers"][0]["answer"] == "yes, early"
    types = [e["type"] for e in _events(client, run_id)]
    assert types.index("interaction_answered") < types.index("await_started") < types.index("await_released")


def test_timeout_fails_with_the_unanswered_list(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = _run_id("q-timeout")
    client.start_run(
        "await_answers",
        # 4 s: Baton's deadline is half of so short a timeout (domain/deadline.py), and the first answer
        # must land before it even on a loaded machine (at 1 s it was sometimes a correct 410).
        {"node": "draft", "timeout_seconds": 4, "questions": [{"question": "Answered?"}, {"question": "Forgotten?"}]},
        run_id=run_id,
    )
    pending = wait_for(lambda: len(p := client.pending_questions(run_id)) == 2 and p)
    client.answer(run_id, pending[0]["interaction_id"], "yes")
    summary = wait_for(lambda: (s := client.get_run(run_id))["status"] == "failed" and s, timeout=20)
    assert "timed out after 4s" in summary["reason"] and "Forgotten?" in summary["reason"]
    assert pending[1]["interaction_id"] in summary["reason"] and "Answered?" not in summary["reason"]
    [event] = [e for e in _events(client, run_id) if e["type"] == "await_timed_out"]
    assert [u["question"] for u in event["data"]["unanswered"]] == ["Forgotten?"]


def test_scoped_from_ignores_other_nodes_questions(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = _run_id("q-scope")
    client.start_run(
        "await_answers",
        {"node": "draft", "from": "draft", "timeout_seconds": 60, "questions": [{"question": "Draft Q?"}]},
        run_id=run_id,
    )
    [draft_q] = wait_for(lambda: client.pending_questions(run_id))
    other = client.ask_async(run_id, "research", "Research Q?")
    client.answer(run_id, draft_q["interaction_id"], "done")
    summary = wait_for(lambda: (s := client.get_run(run_id))["status"] == "succeeded" and s)
    assert [a["node"] for a in summary["output"]["answers"]] == ["draft"]
    assert [q["interaction_id"] for q in client.pending_questions(run_id)] == [other["interaction_id"]]


def test_map_items_park_and_release_independently_and_map_posts_are_refused(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = _run_id("q-map")
    client.start_run(
        "await_fanout_example",
        {
            "research_questions": [{"question": "Sources?"}],
            "draft_questions": [{"question": "Tone?"}],
            "items": [{"from": "research"}, {"from": "draft"}],
            "timeout_seconds": 60,
        },
        run_id=run_id,
    )
    wait_for(lambda: sum(e["type"] == "await_started" for e in _events(client, run_id)) == 2)
    by_node = {q["request"]["node"]: q["interaction_id"] for q in client.pending_questions(run_id)}
    assert client.answer(run_id, by_node["draft"], "casual")["released"] == ["item-1"]
    assert client.get_run(run_id)["status"] != "succeeded"  # item 0 still parked
    assert client.answer(run_id, by_node["research"], "arxiv")["released"] == ["item-0"]
    summary = wait_for(lambda: (s := client.get_run(run_id))["status"] == "succeeded" and s)
    assert [item["answers"][0]["answer"] for item in summary["output"]["items"]] == ["arxiv", "casual"]

    with pytest.raises(ValidationFailedError) as refused:
        client.ask_async(run_id, "draft", "From item 3?", map_item=3)
    assert "Map iteration" in refused.value.message and "one node id" in refused.value.message.lower()
    assert client.pending_questions(run_id) == []


def test_second_answer_409_and_twenty_concurrent_answers_one_winner(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = _run_id("q-race")
    iid = client.ask_async(run_id, "draft", "Race?")["interaction_id"]
    barrier = threading.Barrier(20)
    outcomes: list[tuple[str, Any]] = []

    def go(n: int) -> None:
        with local_stack.http() as http:
            barrier.wait()
            resp = http.post(f"/api/runs/{run_id}/interactions/{iid}/answer", json={"answer": f"a{n}"})
            outcomes.append((str(resp.status_code), resp.json()))

    threads = [threading.Thread(target=go, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [body for code, body in outcomes if code == "200"]
    losers = [body for code, body in outcomes if code == "409"]
    assert len(winners) == 1 and len(losers) == 19
    stored = client.request("GET", f"/api/runs/{run_id}/events", params={"limit": 500})["events"]
    [answered] = [e for e in stored if e["type"] == "interaction_answered"]
    assert all(body["answer"] == answered["data"]["answer"] for body in losers)
    with pytest.raises(ConflictError) as late:
        client.answer(run_id, iid, "late")
    assert late.value.details["answer"] == answered["data"]["answer"]
    assert len(client.drain_messages(run_id, "draft")) == 1


def test_concurrent_drains_deliver_each_message_exactly_once_in_order(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = _run_id("q-drain")
    ids = [client.ask_async(run_id, "draft", f"Q{n}?")["interaction_id"] for n in range(6)]
    for n, iid in enumerate(ids):
        client.answer(run_id, iid, f"A{n}")
    batches: list[list[str]] = []

    def drain() -> None:
        with local_stack.http() as http:
            resp = http.post(f"/api/runs/{run_id}/nodes/draft/messages/drain")
            batches.append([m["text"] for m in resp.json()["messages"]])

    threads = [threading.Thread(target=drain) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    delivered = [text for batch in batches for text in batch]
    assert sorted(delivered) == sorted(f'[Answer to question {iid}] Q: "Q{n}?" — A: A{n}' for n, iid in enumerate(ids))
    for batch in batches:  # each drainer got its share oldest first
        assert batch == sorted(batch, key=lambda text: delivered_order(text, ids))
    assert client.drain_messages(run_id, "draft") == []


def delivered_order(text: str, ids: list[str]) -> int:
    return next(n for n, iid in enumerate(ids) if iid in text)


def test_tool_form_202_then_200_and_sdk_await(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = _run_id("q-tool")
    iid = client.ask_async(run_id, "draft", "Proceed?", options=["yes", "no"])["interaction_id"]
    with local_stack.http() as http:
        resp = http.post(f"/api/runs/{run_id}/await", json={"timeout_seconds": 30})
        assert resp.status_code == 202 and resp.json()["pending"] == [iid]
    assert client.get_run(run_id)["status"] == "paused_waiting_human"
    from baton.client.sdk import AwaitTimeoutError

    with pytest.raises(AwaitTimeoutError) as timed_out:
        client.await_answers(run_id, timeout=0.5, poll_interval=0.1)
    assert timed_out.value.details["pending"] == [iid]
    threading.Timer(0.5, lambda: local_stack.client().answer(run_id, iid, "yes")).start()
    answers = client.await_answers(run_id, timeout=15, poll_interval=0.1)
    assert [a.wire() for a in answers] == [
        {"interaction_id": iid, "node": "draft", "question": "Proceed?", "answer": "yes"}
    ]
    assert client.get_run(run_id)["status"] == "running"


def test_bad_input_over_http_is_4xx_and_changes_nothing(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = _run_id("q-bad")
    iid = client.ask_async(run_id, "draft", "Pick", options=["a", "b"])["interaction_id"]
    before = len(_events(client, run_id))
    with local_stack.http() as http:
        for method, path, body, code in [
            ("POST", f"/api/runs/{run_id}/interactions/{iid}/answer", {"answer": "c"}, 422),
            ("POST", f"/api/runs/{run_id}/interactions/{iid}/answer", {"answer": " "}, 422),
            ("POST", f"/api/runs/{run_id}/interactions/nope/answer", {"answer": "a"}, 404),
            ("POST", f"/api/runs/ghost-{run_id}/interactions/{iid}/answer", {"answer": "a"}, 404),
            ("GET", f"/api/runs/ghost-{run_id}/interactions/pending", None, 404),
            ("POST", f"/api/runs/{run_id}/questions", {"node": "draft", "question": "x" * 4001}, 413),
            ("POST", f"/api/runs/{run_id}/questions", {"node": "draft", "question": ""}, 422),
            ("POST", f"/api/runs/{run_id}/questions", {"node": "draft", "question": "?", "map_item": 0}, 422),
        ]:
            resp = http.request(method, path, json=body)
            assert resp.status_code == code, (path, body, resp.text)
            assert resp.json()["message"]
    assert len(_events(client, run_id)) == before
    assert [q["interaction_id"] for q in client.pending_questions(run_id)] == [iid]
    assert client.drain_messages(run_id, "draft") == []
